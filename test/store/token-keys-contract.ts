import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Store, TokenNameTaken } from '../../src/store/store.js';

/** Names, rotation, last use and allow-lists: their part of the store contract (called by store-contract.ts). */
export function tokenKeysContract(driver: string, open: () => Promise<Store>): void {
  const token = (name: string, keyHash: string) => ({ name, keyHash, group: 'default', models: null, quota: null });

  test(`${driver} store: token names are unique: a second token or a rename to a name taken is TokenNameTaken; a token is found by name`, async () => {
    const store = await open();
    try {
      const a = await store.createToken(token('alpha', 'ha'));
      await assert.rejects(store.createToken(token('alpha', 'hb')), (err) => err instanceof TokenNameTaken && err.tokenName === 'alpha');
      assert.equal((await store.listTokens()).length, 1, 'nothing was made');
      const b = await store.createToken(token('beta', 'hb'));
      assert.equal((await store.findTokenByName('alpha'))?.id, a.id);
      assert.equal(await store.findTokenByName('gamma'), null);
      await assert.rejects(store.renameToken(b.id, 'alpha'), TokenNameTaken);
      assert.equal((await store.getToken(b.id))?.name, 'beta', 'a refused rename changes nothing');
      const renamed = await store.renameToken(b.id, 'gamma');
      assert.equal(renamed?.name, 'gamma');
      assert.equal(await store.findTokenByName('beta'), null);
      assert.equal((await store.findTokenByName('gamma'))?.id, b.id);
      assert.equal((await store.renameToken(a.id, 'alpha'))?.name, 'alpha', 'its own name is no conflict');
      assert.equal(await store.renameToken('no-such-token', 'delta'), null);
      // The freed name can be taken again.
      assert.equal((await store.createToken(token('beta', 'hc'))).name, 'beta');
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a rotation keeps the old key findable until replaced; rotating again ends the earlier one`, async () => {
    const store = await open();
    try {
      const t = await store.createToken(token('rot', 'k1'));
      assert.deepEqual([t.previousKeyHash, t.previousKeyExpiresAt], [null, null], 'never rotated');
      const once = await store.rotateTokenKey(t.id, 'k2', 5_000);
      assert.deepEqual([once?.keyHash, once?.previousKeyHash, once?.previousKeyExpiresAt], ['k2', 'k1', 5_000]);
      const byOld = await store.findTokenByHash('k1');
      assert.equal(byOld?.id, t.id, 'the old key finds the token');
      assert.equal(byOld?.keyHash, 'k2', 'as it now is: the old key is its previous one');
      assert.equal((await store.findTokenByHash('k2'))?.id, t.id);
      const twice = await store.rotateTokenKey(t.id, 'k3', 9_000);
      assert.deepEqual([twice?.keyHash, twice?.previousKeyHash, twice?.previousKeyExpiresAt], ['k3', 'k2', 9_000]);
      assert.equal(await store.findTokenByHash('k1'), null, 'at most two keys: the first is gone');
      assert.equal((await store.findTokenByHash('k2'))?.id, t.id);
      assert.equal((await store.getToken(t.id))?.previousKeyHash, 'k2');
      assert.equal(await store.rotateTokenKey('no-such-token', 'k9', 1), null);
      // A token whose current key is a hash another token once had as its previous one: the current key wins.
      const other = await store.createToken(token('other', 'k2x'));
      await store.rotateTokenKey(other.id, 'k4', 1_000);
      const fresh = await store.createToken(token('fresh', 'k2x'));
      assert.equal((await store.findTokenByHash('k2x'))?.id, fresh.id, "a token's own key before another's replaced one");
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: touchTokens moves each last use forward in one call, never back; unknown ids are skipped`, async () => {
    const store = await open();
    try {
      const a = await store.createToken(token('ta', 'ta'));
      const b = await store.createToken(token('tb', 'tb'));
      assert.equal(a.lastUsedAt, null, 'never used');
      await store.touchTokens([]);
      await store.touchTokens([
        { id: a.id, at: 1_000 },
        { id: b.id, at: 2_000 },
        { id: 'no-such-token', at: 3_000 },
      ]);
      assert.deepEqual([(await store.getToken(a.id))?.lastUsedAt, (await store.getToken(b.id))?.lastUsedAt], [1_000, 2_000]);
      await store.touchTokens([
        { id: a.id, at: 500 },
        { id: b.id, at: 2_500 },
      ]);
      assert.equal((await store.getToken(a.id))?.lastUsedAt, 1_000, 'an older use does not move it back');
      assert.equal((await store.findTokenByHash('tb'))?.lastUsedAt, 2_500);
      assert.deepEqual(
        (await store.listTokens()).map((t) => t.lastUsedAt),
        [1_000, 2_500],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: an allow-list is kept as given, read with the token, and removed by null`, async () => {
    const store = await open();
    try {
      const t = await store.createToken(token('ips', 'ips'));
      assert.equal(t.allowedIps, null, 'anywhere by default');
      const list = ['203.0.113.7', '10.0.0.0/8', '2001:db8::/32'];
      assert.deepEqual((await store.setTokenAllowedIps(t.id, list))?.allowedIps, list);
      assert.deepEqual((await store.findTokenByHash('ips'))?.allowedIps, list, 'the lookup the authenticator caches carries it');
      assert.deepEqual((await store.setTokenAllowedIps(t.id, null))?.allowedIps, null);
      assert.equal(await store.setTokenAllowedIps('no-such-token', list), null);
    } finally {
      await store.close();
    }
  });
}
