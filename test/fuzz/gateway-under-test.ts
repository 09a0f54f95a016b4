/**
 * The gateway the fuzzer attacks: a real `gateway start` process over the repository's config,
 * every channel served by a simulator in this process, a store in a scratch directory and an API
 * key; restarted on the same store when it dies. Also the targets: the config's routes and the
 * golden cases' accepted requests, by route.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { matchRoute } from '../../src/http/match-route.js';
import type { Simulator } from '../../src/sim/http.js';
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, type Running } from '../helpers/process.js';
import { goldenSeeds, type Seed } from './corpus.js';
import type { FuzzedGateway } from './harness.js';
import type { Targets } from './hostile-requests.js';

/** A running gateway under fuzz, with what to aim at; `close` stops everything and removes the scratch directory. */
export interface UnderTest {
  readonly gateway: FuzzedGateway;
  readonly targets: Targets;
  /** What the processes that died printed, for a crash report. */
  crashOutput(): string;
  close(): Promise<void>;
}

/** Starts simulators and a gateway process; `env` adds settings (GATEWAY_BODY_BUDGET_MB, say). */
export async function startUnderTest(env: Record<string, string> = {}): Promise<UnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-fuzz-'));
  const sims = new Map<string, Simulator>();
  const stopped: Running[] = [];
  let current: { proc: Running; base: string } | null = null;
  let exited = false;
  let onExit: (() => void)[] = [];
  try {
    const fullEnv = {
      ...(await simulatorsFor(sims, { finishMs: 200 })),
      GATEWAY_DB: join(dir, 'gateway.db'),
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_WATCH: '0',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    };
    const created = runCli(['tokens', 'create', '--group', 'default', '--name', 'fuzz'], fullEnv);
    if (created.status !== 0) throw new Error(`tokens create failed: ${created.stderr}`);
    const key = created.stdout.trim();
    const start = async () => {
      current = await startGatewayProcess(fullEnv);
      exited = false;
      current.proc.child.once('exit', () => {
        exited = true;
        for (const f of onExit) f();
        onExit = [];
      });
    };
    await start();

    const { snapshot } = loadConfig(PROJECT_ROOT);
    if (!snapshot) throw new Error('the config does not load');
    const seeds = new Map<string, Seed[]>();
    for (const seed of goldenSeeds(join(PROJECT_ROOT, 'test/golden'))) {
      const q = seed.path.indexOf('?');
      try {
        const { route } = matchRoute(
          snapshot,
          seed.method,
          q === -1 ? seed.path : seed.path.slice(0, q),
          q === -1 ? null : new URLSearchParams(seed.path.slice(q + 1)),
        );
        seeds.set(route.id, [...(seeds.get(route.id) ?? []), seed]);
      } catch {
        // a golden request for a route of a test-only config
      }
    }
    const gateway: FuzzedGateway = {
      port: () => Number(new URL(current!.base).port),
      alive: () => !exited,
      exits: (ms) =>
        exited
          ? Promise.resolve(true)
          : new Promise((resolve) => {
              const timer = setTimeout(() => resolve(false), ms);
              onExit.push(() => {
                clearTimeout(timer);
                resolve(true);
              });
            }),
      async restart() {
        stopped.push(current!.proc);
        await start();
      },
    };
    return {
      gateway,
      targets: { routes: snapshot.routes, seeds, key },
      crashOutput: () => stopped.map((proc) => proc.output()).join('\n---\n'),
      async close() {
        await current?.proc.stop('SIGKILL');
        await Promise.all([...sims.values()].map((s) => s.close()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await (current as { proc: Running; base: string } | null)?.proc.stop('SIGKILL');
    await Promise.all([...sims.values()].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
