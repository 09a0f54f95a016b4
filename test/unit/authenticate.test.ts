/**
 * Keys while the store cannot be asked (src/pipeline/authenticate.ts; docs/deploying.md, "When PostgreSQL goes
 * away"): a valid key looked up before keeps working past its cache time; an unknown or disabled
 * key, a key never looked up, and any other failure of the store are not let in that way.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as pause } from 'node:timers/promises';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { Authenticator } from '../../src/pipeline/authenticate.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { isStoreUnavailable, storeUnavailable } from '../../src/store/unavailable.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';

const BEARER = [{ from: 'bearer' } as const];
const TTL_MS = 5;

async function rig() {
  const base = await openStore(':memory:');
  let failure: Error | null = null;
  const store: Store = { ...base, findTokenByHash: (hash) => (failure ? Promise.reject(failure) : base.findTokenByHash(hash)) };
  const auth = new Authenticator(store, TTL_MS);
  let made = 0;
  const make = async (disabled = false) => {
    const key = generateKey();
    const t = await base.createToken({ name: `k${made++}`, keyHash: hashKey(key), group: 'default', models: null, quota: null });
    if (disabled) await base.setTokenDisabled(t.id, true);
    return key;
  };
  const as = (key: string) => auth.authenticate(BEARER, { authorization: `Bearer ${key}` }, null);
  /** Past the cache time: the next lookup would ask the store. The wait is the TTL itself, not a stand-in for an event. */
  const expire = () => pause(TTL_MS * 3);
  return { base, auth, make, as, expire, fail: (err: Error | null) => (failure = err) };
}

describe('authentication while the store is away', () => {
  test('a valid key looked up before keeps working past its cache time while the store cannot be asked', async () => {
    const r = await rig();
    const key = await r.make();
    const token = await r.as(key);
    await r.expire();
    r.fail(storeUnavailable(new Error('connect ECONNREFUSED')));
    assert.equal((await r.as(key)).id, token.id);
    await r.base.close();
  });

  test('a key never looked up, an unknown one and a disabled one get the store error or invalid_api_key, never in', async () => {
    const r = await rig();
    const disabled = await r.make(true);
    const unknown = generateKey();
    await assert.rejects(r.as(disabled), (err) => err instanceof GatewayError && err.code === 'invalid_api_key');
    await assert.rejects(r.as(unknown), (err) => err instanceof GatewayError && err.code === 'invalid_api_key');
    await r.expire();
    r.fail(storeUnavailable(new Error('connect ECONNREFUSED')));
    await assert.rejects(r.as(disabled), (err) => err instanceof GatewayError && err.code === 'invalid_api_key');
    await assert.rejects(r.as(unknown), (err) => isStoreUnavailable(err), 'an unknown key is not known to be unknown any more');
    await assert.rejects(r.as(await r.make()), (err) => isStoreUnavailable(err), 'never looked up');
    await r.base.close();
  });

  test('a failure that is not the store being away is not covered by a stale lookup', async () => {
    const r = await rig();
    const key = await r.make();
    await r.as(key);
    await r.expire();
    r.fail(new Error('a bug'));
    await assert.rejects(r.as(key), /a bug/);
    await r.base.close();
  });
});

describe('an expiring key (docs/tokens-and-quota.md, "Expiry")', () => {
  const AT = Date.parse('2027-03-01T12:00:00Z');

  test('works until its instant and is refused from it on, although its cached lookup has not run out', async () => {
    const base = await openStore(':memory:');
    let now = AT - 1;
    let lookups = 0;
    const store: Store = { ...base, findTokenByHash: (hash) => (lookups++, base.findTokenByHash(hash)) };
    // A cache time far longer than the test: every answer after the first comes from the cache.
    const auth = new Authenticator(store, 60_000, () => now);
    const key = generateKey();
    await base.createToken({ name: 'e', keyHash: hashKey(key), group: 'default', models: null, quota: null, expiresAt: AT });
    const as = () => auth.authenticate(BEARER, { authorization: `Bearer ${key}` }, null);
    assert.equal((await as()).expiresAt, AT, 'the record the cache keeps carries the expiry');
    now = AT;
    await assert.rejects(as(), (err) => {
      assert.ok(err instanceof GatewayError);
      assert.equal(err.code, 'invalid_api_key');
      assert.match(err.message, /the API key expired at 2027-03-01T12:00:00\.000Z/);
      return true;
    });
    now = AT + 86_400_000;
    await assert.rejects(as(), /expired at/);
    assert.equal(lookups, 1, 'no store round trip: the expiry is compared with the clock on the cached record');
    await base.close();
  });

  test('a key without expiry works at any time; an unknown key is told apart from an expired one', async () => {
    const base = await openStore(':memory:');
    const auth = new Authenticator(base, 0, () => Number.MAX_SAFE_INTEGER);
    const key = generateKey();
    await base.createToken({ name: 'n', keyHash: hashKey(key), group: 'default', models: null, quota: null });
    assert.equal((await auth.authenticate(BEARER, { authorization: `Bearer ${key}` }, null)).expiresAt, null);
    await assert.rejects(auth.authenticate(BEARER, { authorization: `Bearer ${generateKey()}` }, null), (err) => {
      assert.ok(err instanceof GatewayError && err.code === 'invalid_api_key');
      assert.equal(err.message, 'the API key is not valid');
      return true;
    });
    await base.close();
  });
});
