/**
 * A key's expiry over real HTTP (docs/tokens-and-quota.md, "Expiry"): a key works until its instant
 * and is refused from then on as `invalid_api_key` (401, in the shape of the route) with a message
 * that says it expired and when, told apart from an unknown key. The gateway's clock is moved, so
 * the instant passes while the key's lookup is still cached, as it would be in service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../../src/tokens/keys.js';
import { postJson, readAnswer, startHarness, type Harness, type JsonAnswer } from '../helpers/harness.js';

const IMAGE = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const generate = {
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
};

describe('an expiring key over HTTP', () => {
  let h: Harness;
  /** How far the gateway's clock is ahead of the system's. */
  let ahead = 0;
  before(async () => {
    h = await startHarness({ records: { clock: () => new Date(Date.now() + ahead) } });
  });
  after(() => h.close());

  const models = async (key: string): Promise<JsonAnswer> => readAnswer(await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }));
  const image = (key: string) => postJson(h.url, IMAGE, generate, { authorization: `Bearer ${key}` });

  test('works until its instant; once the clock passes it, both routes refuse it with a message saying when, unlike an unknown key', async () => {
    const expiresAt = Date.now() + 3_600_000;
    const key = await h.createKey({ expiresAt });
    assert.equal((await models(key)).status, 200);
    assert.equal((await image(key)).status, 200, 'its lookup is now cached');
    ahead = 3_600_000 + 1_000;
    const when = new Date(expiresAt).toISOString();
    for (const r of [await models(key), await image(key)]) {
      assert.equal(r.status, 401, r.text);
      assert.deepEqual(Object.keys(r.json.error).sort(), ['code', 'message', 'param', 'type'], 'the error shape the route answers any bad key with');
      assert.equal(r.json.error.code, 'invalid_api_key');
      assert.ok((r.json.error.message as string).startsWith(`the API key expired at ${when};`), r.text);
    }
    for (const r of [await models(generateKey()), await image(generateKey())]) {
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json.error.code, 'invalid_api_key');
      assert.equal(r.json.error.message, 'the API key is not valid', 'an unknown key is not said to have expired');
    }
    ahead = 0;
    assert.equal((await models(key)).status, 200, 'the instant is compared at each request: before it, the key works');
  });
});
