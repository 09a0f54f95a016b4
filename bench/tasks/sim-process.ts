/**
 * Child process of bench/tasks: every simulator of src/sim/registry.ts in one process (only the
 * asynchronous ones get traffic), so their CPU is not the gateway's. Announces each simulator's URL
 * and secrets, and answers:
 *   `stats` → each simulator's counters (`queries`, `batch_queries`, …) as they are now;
 *   `tasks` `{profile: [vendor ids]}` → per profile a Float64Array of [createdAt, finishAt, polls]
 *     triples in the order asked (NaN for an id the simulator does not know). These are the
 *     simulator's own times (Date.now of this process, same machine clock as the gateway's).
 */
import type { Simulator } from '../../src/sim/http.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import { serveParent } from './ipc.js';

const sims: Record<string, Simulator> = {};
for (const [profile, start] of Object.entries(SIMULATORS)) sims[profile] = await start({});

serveParent(
  { sims: Object.fromEntries(Object.entries(sims).map(([p, s]) => [p, { url: s.url, secrets: s.secrets }])) },
  {
    stats: () => Object.fromEntries(Object.entries(sims).map(([p, s]) => [p, { ...s.stats }])),
    tasks: (payload) => {
      const out: Record<string, Float64Array> = {};
      for (const [profile, ids] of Object.entries(payload as Record<string, string[]>)) {
        const book = sims[profile]?.tasks;
        const a = new Float64Array(ids.length * 3).fill(NaN);
        ids.forEach((id, i) => {
          const t = book?.get(id);
          if (!t) return;
          a[3 * i] = t.createdAt;
          a[3 * i + 1] = t.finishAt;
          a[3 * i + 2] = t.polls;
        });
        out[profile] = a;
      }
      return out;
    },
  },
  async () => {
    await Promise.all(Object.values(sims).map((s) => s.close()));
  },
);
