/**
 * A real gateway over the project's config plus an extra directory of test channels in the test
 * group `rt`, each pointing at a simulator, and a token of that group (which sees only those
 * channels): the set-up of the routing and queue tests (test/gateway/routing.test.ts,
 * upstream-queue.test.ts). Simulators made here are closed after the file's tests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { startAlphaSimulator } from '../../src/sim/alpha-native.js';
import type { Simulator } from '../../src/sim/http.js';
import { startZetaOpenaiSimulator } from '../../src/sim/zeta-openai.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { postJson, readAnswer, type JsonAnswer } from './harness.js';

export const ADMIN = 'admin-key-for-tests';
export const IMAGE = 'alpha-3-pro-image-preview';
export const IMAGE_PATH = `/v1beta/models/${IMAGE}:generateContent`;
export const imageBody = (prompt = 'a red square') => ({
  contents: [{ role: 'user', parts: [{ text: prompt }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: {} },
});

export interface Routed {
  readonly url: string;
  readonly key: string;
  readonly store: Store;
  readonly gateway: Gateway;
  post(path: string, body: unknown): Promise<JsonAnswer>;
  admin(path: string): Promise<JsonAnswer>;
  close(): Promise<void>;
}

/** A channel of the test group, as YAML. */
export function channel(name: string, profile: string, sim: { url: string; secrets: Readonly<Record<string, string>> }, models: string[], extra = ''): string {
  return `  - name: ${name}
    profile: ${profile}
    base_url: ${sim.url}
    secrets: { key: "${sim.secrets.key}" }
    groups: [rt]
    models: [${models.join(', ')}]
    polling: { interval_ms: 100, stale_ms: 50 }
${extra.replace(/^/gm, '    ')}
`;
}

/** A gateway over the project's config plus `channels` (YAML list items) in group `rt`. */
export async function routed(channels: string, opts: { routing?: string; group?: string; quota?: number } = {}): Promise<Routed> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-routing-'));
  writeFileSync(
    join(dir, 'channels.yaml'),
    `version: 1
routing: ${opts.routing ?? '{ max_attempts: 3, backoff_ms: 0, deadline_ms: 20000, retry_after_s: 3 }'}
groups:
  rt: ${opts.group ?? '{}'}
channels:
${channels}`,
  );
  const snapshot = loadConfigOrThrow(PROJECT_ROOT, { extraDirs: [dir], env: {} });
  const store = await openStore(':memory:');
  const gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger(), adminKey: ADMIN });
  await gateway.listen(0);
  const key = generateKey();
  await store.createToken({ name: 'rt', keyHash: hashKey(key), group: 'rt', models: null, quota: opts.quota ?? null });
  const url = gateway.url();
  return {
    url,
    key,
    store,
    gateway,
    post: (path, body) => postJson(url, path, body, { authorization: `Bearer ${key}` }),
    async admin(path) {
      return readAnswer(await fetch(url + path, { headers: { authorization: `Bearer ${ADMIN}` } }));
    },
    async close() {
      await gateway.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const sims: Simulator[] = [];
export async function alpha(): Promise<Simulator> {
  const s = await startAlphaSimulator();
  sims.push(s);
  return s;
}
export async function zeta(): Promise<Simulator> {
  const s = await startZetaOpenaiSimulator({ finishMs: 200 });
  sims.push(s);
  return s;
}
after(async () => {
  await Promise.all(sims.map((s) => s.close()));
});
