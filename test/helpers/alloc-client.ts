/**
 * The far side of the allocation budget (test/gateway/allocation-budget.test.ts), in a process of
 * its own so that none of its allocation is counted against the gateway: the zeta-openai simulator
 * and a client of the images route. Started with `fork` (./alloc-gateway.ts); it sends
 * `{ sim, key }` once the simulator listens, then answers each `LoadOrder` with a `LoadDone` once
 * every request of it was answered (./alloc-protocol.ts). A script, run as a process only.
 */
import { Pool } from 'undici';
import { startZetaOpenaiSimulator } from '../../src/sim/zeta-openai.js';
import { IMAGES_BODY, type LoadDone, type LoadOrder } from './alloc-protocol.js';

async function run(order: LoadOrder, pool: Pool): Promise<LoadDone> {
  let next = 0;
  let ok = 0;
  let failed = 0;
  let firstFailure: string | null = null;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${order.key}` };
  const one = async (): Promise<void> => {
    while (next < order.requests) {
      next++;
      try {
        const res = await pool.request({ method: 'POST', path: '/v1/images/generations', headers, body: IMAGES_BODY });
        const text = await res.body.text();
        const image = res.statusCode === 200 && (JSON.parse(text) as { data?: { b64_json?: unknown }[] }).data?.[0]?.b64_json;
        if (typeof image === 'string' && image.length > 0) ok++;
        else {
          failed++;
          firstFailure ??= `${res.statusCode} ${text.slice(0, 300)}`;
        }
      } catch (err) {
        failed++;
        firstFailure ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: order.inFlight }, one));
  return { ok, failed, firstFailure };
}

if (process.send) {
  const sim = await startZetaOpenaiSimulator();
  let pool: Pool | null = null;
  process.on('message', (order: LoadOrder) => {
    pool ??= new Pool(order.url, { connections: order.inFlight, pipelining: 1 });
    void run(order, pool).then((done) => process.send!(done));
  });
  process.on('disconnect', () => {
    void Promise.allSettled([pool?.close(), sim.close()]).then(() => process.exit(0));
  });
  process.send({ sim: sim.url, key: sim.secrets.key });
}
