/**
 * The gateway side of the allocation budget (test/gateway/allocation-budget.test.ts), run as
 * `node alloc-gateway.js [requests]`: a process of its own, because a test file's
 * process is not the gateway's alone (node:test's async hook runs for every promise there, about
 * 25 KB per request of this route that a gateway never pays).
 *
 * It serves the shipped routes and channels (the zeta-images channel, profile zeta-openai) from an
 * in-memory store, the request log on as by default, and forks ./alloc-client.ts (the simulator
 * and the client), so that what it counts is the gateway's own work for a request, from reading it
 * off the socket to writing its answer, its upstream call through undici included. It first checks
 * that the measure sees a known allocation, then warms up, then measures; prints one JSON line
 * (`AllocationReport`, ./alloc-protocol.ts) and exits. A script, run as a process only.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { type AllocationReport, CALIBRATION_BYTES, type LoadDone, type LoadOrder } from './alloc-protocol.js';
import { allocatedDuring } from './heap-allocation.js';

/** Requests before measuring: every mapping compiled, every pool and cache warm, the JIT settled. */
const WARM_UP = 2_000;
/** Requests in flight at once, as clients keep several. */
const IN_FLIGHT = 8;

const requests = Number(process.argv[2] ?? 2_000);

let kept: number[] = [];
const calibrationBytes = await allocatedDuring(() => {
  for (let i = 0; i < CALIBRATION_BYTES / 1024; i++) kept = new Array<number>(128).fill(i + 0.5);
});
if (kept.length !== 128) throw new Error('unreachable');

const child = fork(join(PROJECT_ROOT, 'dist/test/helpers/alloc-client.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const [sim] = (await once(child, 'message')) as [{ sim: string; key: string }];
const snapshot = loadConfigOrThrow(PROJECT_ROOT, { env: { ZETA_BASE_URL: sim.sim, ZETA_API_KEY: sim.key } });
const store = await openStore(':memory:');
const key = generateKey();
await store.createToken({ name: 'alloc', keyHash: hashKey(key), group: 'default', models: null, quota: null });
const gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger() });
await gateway.listen(0);

/** Has the child send `n` requests; resolves once all are answered. */
async function load(n: number): Promise<LoadDone> {
  const done = once(child, 'message') as Promise<[LoadDone]>;
  child.send({ url: gateway.url(), key, inFlight: IN_FLIGHT, requests: n } satisfies LoadOrder);
  return (await done)[0];
}

const warmUp = await load(WARM_UP);
let measured: LoadDone = { ok: 0, failed: 0, firstFailure: 'not run' };
const bytes = await allocatedDuring(async () => {
  measured = await load(requests);
});
child.disconnect();
await gateway.close();
await store.close();
const report: AllocationReport = { calibrationBytes, warmUp, measured, requests, inFlight: IN_FLIGHT, bytesPerRequest: bytes / requests };
process.stdout.write(`${JSON.stringify(report)}\n`);
