import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store } from '../src/store/store.js';

/**
 * The contract every store driver passes. A driver's test file calls this with a factory that
 * returns a fresh, empty store.
 */
export function storeContract(driver: string, open: () => Promise<Store>): void {
  test(`${driver} store: tokens are found by key hash only`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'a', keyHash: 'h1', group: 'default', models: ['m1', 'm2'], quota: 5 });
      assert.equal(t.used, 0);
      assert.equal(t.disabled, false);
      const found = await store.findTokenByHash('h1');
      assert.deepEqual(found, t);
      assert.equal(await store.findTokenByHash('h2'), null);
      assert.deepEqual(found?.models, ['m1', 'm2']);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a key hash is unique`, async () => {
    const store = await open();
    try {
      await store.createToken({ name: 'a', keyHash: 'dup', group: 'default', models: null, quota: null });
      await assert.rejects(store.createToken({ name: 'b', keyHash: 'dup', group: 'default', models: null, quota: null }));
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: concurrent debits never overspend and refunds give back`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'q', keyHash: 'q', group: 'default', models: null, quota: 10 });
      const results = await Promise.all(Array.from({ length: 50 }, () => store.debit(t.id, 1)));
      assert.equal(results.filter(Boolean).length, 10);
      assert.equal((await store.findTokenByHash('q'))?.used, 10);
      await store.refund(t.id, 3);
      assert.equal((await store.findTokenByHash('q'))?.used, 7);
      assert.equal(await store.debit(t.id, 4), false, 'a debit larger than what is left is refused whole');
      assert.equal(await store.debit(t.id, 3), true);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: an unlimited token always debits`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'u', keyHash: 'u', group: 'default', models: null, quota: null });
      for (let i = 0; i < 20; i++) assert.equal(await store.debit(t.id, 1000), true);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: tokens are listed and deleted by name`, async () => {
    const store = await open();
    try {
      await store.createToken({ name: 'demo', keyHash: 'd1', group: 'default', models: null, quota: null });
      await store.createToken({ name: 'demo', keyHash: 'd2', group: 'default', models: null, quota: null });
      await store.createToken({ name: 'keep', keyHash: 'k1', group: 'default', models: null, quota: null });
      assert.equal((await store.listTokens()).length, 3);
      assert.equal(await store.deleteTokensNamed('demo'), 2);
      assert.deepEqual((await store.listTokens()).map((t) => t.name), ['keep']);
    } finally {
      await store.close();
    }
  });
}
