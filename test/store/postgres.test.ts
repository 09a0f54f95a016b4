import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';
import { archiveContract } from './archive-contract.js';
import { budgetContract } from './budget-contract.js';
import { storeContract } from './store-contract.js';

const databaseUrl = serviceUrl('DATABASE_URL', 'postgres store: the contract suite');
if (databaseUrl) {
  const schemas = pgSchemas(databaseUrl);
  storeContract('postgres', () => openStore(schemas.url()));
  budgetContract('postgres', (clock) => openStore(schemas.url(), { clock }));
  archiveContract('postgres', () => openStore(schemas.url()));

  test('postgres store: replicas starting at once apply the migrations once, and share what they write', async () => {
    const url = schemas.url();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(url)));
    try {
      const t = await stores[0]!.createToken({ name: 'shared', keyHash: 'shared', group: 'default', models: null, quota: 5 });
      const spent = await Promise.all(stores.flatMap((s, i) => Array.from({ length: 5 }, (_, j) => s.debit(t.id, 1, { ref: `r${i}-${j}`, model: 'm' }))));
      assert.equal(spent.filter(Boolean).length, 5, 'four pools, one quota');
      assert.deepEqual(await stores[3]!.ledgerBalance(t.id), { used: 5, debit: 5, refund: 0, settle: 0 });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  test('postgres store: a URL schema that is not a plain identifier is refused', async () => {
    const u = new URL(databaseUrl);
    u.searchParams.set('schema', 'x"; DROP TABLE tokens; --');
    await assert.rejects(openStore(u.href), /not a plain identifier/);
  });
}
