/**
 * The result archive across replicas (docs/archive.md, "How a copy is made"): two gateways over
 * one PostgreSQL store and one archive directory share the copies with leases. Every completed
 * task is copied exactly once (the vendor answers each file once), and both replicas copy some.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openArchiveBackend } from '../../src/archive/open-backend.js';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { makeConfigDir } from '../helpers/config-dir.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { archiveConfig, startArchiveVendor } from './archive-vendor.js';

const databaseUrl = serviceUrl('DATABASE_URL', 'result archive across replicas on PostgreSQL');
if (databaseUrl) {
  const schemas = pgSchemas(databaseUrl);
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test('two replicas over one store share the copies: each file copied once, by one of them', async () => {
    const vendor = await startArchiveVendor();
    cleanup.push(() => vendor.close());
    const dir = makeConfigDir('archive-replicas', { 'body.json': { type: 'object' }, ...archiveConfig(vendor.url) });
    const tmp = mkdtempSync(join(tmpdir(), 'gw-archive-replicas-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanup.push(() => rmSync(tmp, { recursive: true, force: true }));
    const snapshot = loadConfigOrThrow(dir, { env: {} });
    const url = schemas.url();
    const stores: Store[] = [];
    const gateways: Gateway[] = [];
    for (const owner of ['replica-a', 'replica-b']) {
      const store = await openStore(url);
      stores.push(store);
      const gw = createGateway({
        snapshot: () => snapshot,
        store,
        log: silentLogger(),
        lease: { owner, ms: 5_000, soleReplica: false },
        archive: {
          backend: await openArchiveBackend(join(tmp, 'archive')),
          settings: { keepDays: 7, maxBytes: 2 ** 30, copies: 1, attempts: 3, tickMs: 30, retryMs: 100 },
        },
      });
      await gw.listen(0);
      gateways.push(gw);
    }
    cleanup.push(async () => {
      for (const g of gateways) await g.close();
      for (const s of stores) await s.close();
    });
    const key = generateKey();
    await stores[0]!.createToken({ name: 'replicas', keyHash: hashKey(key), group: 'default', models: null, quota: null });

    const N = 12;
    const ids = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await fetch(`${gateways[i % 2]!.url()}/jobs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', seed: 5000 + i, size: 8_000_000 }),
        });
        assert.equal(res.status, 200);
        return ((await res.json()) as { id: string }).id;
      }),
    );
    // The copiers of both replicas watch the store; whichever has a free slot takes the next job.
    await until('every task copied', async () => (await Promise.all(ids.map((id) => stores[0]!.getArchivedFiles(id)))).every((f) => f.length === 1), 60_000);
    const fetched = ids.map((_, i) => vendor.fileAnswers(5000 + i));
    assert.deepEqual(fetched, Array(N).fill(1), 'each file fetched once: no job copied by both replicas');
    // A job's outcome is counted just after its file is recorded: wait for the last one.
    const doneBy = async () =>
      Promise.all(gateways.map(async (g) => Number(/gateway_archive_copies_total\{outcome="done"\} ([0-9]+)/.exec(await g.metrics.text())?.[1] ?? 0)));
    const done = await until('every copy counted', async () => {
      const d = await doneBy();
      return d[0]! + d[1]! === N ? d : null;
    });
    assert.equal(done[0]! + done[1]!, N, `copies done by each replica: ${done.join(', ')}`);
    assert.ok(
      done.every((n) => n > 0),
      `both replicas copied (${done.join(', ')}): one copy at a time each, while the other is busy`,
    );
  });
}
