/**
 * The processes of bench/streams, each alone so its CPU and RSS are its own: the zeta-openai
 * simulator (sim-process.ts), the bare streaming pass-through in front of it (passthrough.ts), and a
 * real `gateway start` whose zeta-images channel points at it; plus the three targets a stream can
 * be asked of, with the same path and body (the bearer key is the gateway's; the simulator and the
 * pass-through take the vendor's).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { deadChannelEnv } from '../workspace.js';
import { startChild, waitForLine, type Child } from '../overhead/children.js';
import { probeArgs } from '../overhead/probe-client.js';
import type { StreamTarget } from './client.js';

const CLI = join(PROJECT_ROOT, 'dist/src/cli.js');
const HERE = join(PROJECT_ROOT, 'dist/bench/streams');
export const STREAM_PATH = '/v1/images/generations';

/** A target of the benchmark: where its streams go and the process that does the work. */
export interface Target extends StreamTarget {
  readonly origin: string;
  readonly child: Child;
}

/** The three processes and the targets they make. */
export interface Parties {
  readonly sim: Child;
  /** The simulator's counters, read now (sim-process.ts). */
  simStats(): Promise<Record<string, number>>;
  readonly pass: Child;
  readonly gw: Child;
  /** direct (the simulator), passthrough, gateway: in that order. */
  readonly targets: readonly [Target, Target, Target];
}

/** What the simulator does: the wait between events and whether its images have a photograph's weight. */
export interface SimSettings {
  readonly gapMs: number;
  readonly fullSize: boolean;
}

/**
 * Starts the simulator, the pass-through and a gateway (each with bench/overhead's probe preloaded),
 * under names ending in `label`, their logs in `tmp`; pushes them on `children` as they start.
 */
export async function startParties(tmp: string, children: Child[], sim: SimSettings, label: string): Promise<Parties> {
  const simChild = startChild(
    `simulator${label}`,
    [...probeArgs(), join(HERE, 'sim-process.js')],
    { ...process.env, BENCH_STREAM_GAP_MS: String(sim.gapMs), BENCH_FULL_SIZE_IMAGES: sim.fullSize ? '1' : '0' },
    join(tmp, `simulator${label}.log`),
    PROJECT_ROOT,
  );
  children.push(simChild);
  const ready = await waitForLine(simChild, (l) => l.ready === 'simulator');
  const simUrl = String(ready.url);
  const simKey = String(ready.key);
  const statsUrl = String(ready.stats);

  const pass = startChild(
    `passthrough${label}`,
    [...probeArgs(), join(HERE, 'passthrough.js')],
    { ...process.env, BENCH_SIM_URL: simUrl, BENCH_SIM_KEY: simKey },
    join(tmp, `passthrough${label}.log`),
    PROJECT_ROOT,
  );
  children.push(pass);

  // Every other channel gets a dead local address: `start` refuses unset variables, and only the
  // zeta-images channel is measured. The shipped routes.yaml and channels.yaml, as in production.
  const otherChannels = deadChannelEnv();
  const gwEnv = {
    ...otherChannels,
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_CONFIG_DIR: PROJECT_ROOT,
    GATEWAY_DB: join(tmp, `gateway${label}.db`),
    GATEWAY_WATCH: '0',
    LOG_LEVEL: 'info',
    ZETA_BASE_URL: simUrl,
    ZETA_API_KEY: simKey,
  };
  const apiKey = (
    await promisify(execFile)(process.execPath, [CLI, 'tokens', 'create', '--group', 'default'], { env: gwEnv, cwd: PROJECT_ROOT })
  ).stdout.trim();
  const extra = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const gw = startChild(`gateway${label}`, [...probeArgs(), ...extra, CLI, 'start'], gwEnv, join(tmp, `gateway${label}.log`), PROJECT_ROOT);
  children.push(gw);
  const passUrl = String((await waitForLine(pass, (l) => l.ready === 'passthrough')).url);
  const gwUrl = String((await waitForLine(gw, (l) => l.msg === 'gateway listening')).url);

  const vendor = { authorization: `Bearer ${simKey}` };
  const targets: [Target, Target, Target] = [
    { name: 'direct', origin: simUrl, child: simChild, path: STREAM_PATH, headers: vendor },
    { name: 'passthrough', origin: passUrl, child: pass, path: STREAM_PATH, headers: {} },
    { name: 'gateway', origin: gwUrl, child: gw, path: STREAM_PATH, headers: { authorization: `Bearer ${apiKey}` } },
  ];
  return {
    sim: simChild,
    simStats: async () => (await (await request(statsUrl)).body.json()) as Record<string, number>,
    pass,
    gw,
    targets,
  };
}
