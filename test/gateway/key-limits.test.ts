/**
 * A key's rate limits over real HTTP (docs/tokens-and-quota.md, "Rate limits"): the `x-ratelimit-*`
 * headers on every answer after authentication, the 429 of shape B with `Retry-After`, and the
 * in-flight slot given back when the answer ends: written, streamed, or the client went away. One
 * gateway, no Redis: the limits are this process's (test/replicas/key-limits.test.ts: across replicas).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postJson, startHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

const MODEL = 'alpha-3-pro-image-preview';
const IMAGE = `/v1beta/models/${MODEL}:generateContent`;
const STREAM = `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`;
const body = (prompt = 'a lighthouse at dawn') => ({
  contents: [{ role: 'user', parts: [{ text: prompt }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
});

/** The three headers of an answer, as a client reads them. */
function limitHeaders(res: Response): [string | null, string | null, string | null] {
  return [res.headers.get('x-ratelimit-limit-requests'), res.headers.get('x-ratelimit-remaining-requests'), res.headers.get('x-ratelimit-reset-requests')];
}

describe('rate limits of a key', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());
  const models = (key: string) => fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });

  test('rpm: N requests a minute, each told what is left; the next is 429 shape B with Retry-After, and is counted', async () => {
    const key = await h.createKey({ rpmLimit: 3 });
    const seen: [string | null, string | null, string | null][] = [];
    for (let i = 0; i < 3; i++) {
      const r = await models(key);
      assert.equal(r.status, 200);
      await r.arrayBuffer();
      seen.push(limitHeaders(r));
    }
    assert.deepEqual(
      seen.map(([limit, remaining]) => [limit, remaining]),
      [
        ['3', '2'],
        ['3', '1'],
        ['3', '0'],
      ],
    );
    assert.ok(
      seen.every(([, , reset]) => reset === '1m0s' || /^[0-9.]+s$/.test(reset ?? '')),
      `reset in OpenAI's form: ${seen.map((s) => s[2])}`,
    );
    const refused = await models(key);
    assert.equal(refused.status, 429);
    const json = (await refused.json()) as { code: string; message: string; data: null };
    assert.deepEqual([json.code, json.data], ['too_many_requests', null]);
    assert.match(json.message, /3 requests per minute/);
    const wait = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `Retry-After: ${wait}`);
    assert.deepEqual(limitHeaders(refused).slice(0, 2), ['3', '0']);
    assert.match(await h.gateway.metrics.text(), /gateway_rate_limited_total\{limit="rpm",scope="key",group="default"\} 1\b/);
    const other = await models(await h.createKey({ rpmLimit: 3 }));
    assert.equal(other.status, 200, "another key's window is its own");
  });

  test('the headers come on errors after authentication too, and never for a key without limits', async () => {
    const key = await h.createKey({ rpmLimit: 10 });
    const bad = await fetch(h.url + IMAGE, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{"contents": 7}',
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(limitHeaders(bad).slice(0, 2), ['10', '9']);
    const unknown = await fetch(`${h.url}/v1/models/no-such-model`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(unknown.status, 404);
    assert.deepEqual(limitHeaders(unknown).slice(0, 2), ['10', '8']);
    const plain = await models(h.key);
    assert.equal(plain.status, 200);
    assert.deepEqual(limitHeaders(plain), [null, null, null]);
    const noKey = await fetch(`${h.url}/v1/models`);
    assert.equal(noKey.status, 401);
    assert.deepEqual(limitHeaders(noKey), [null, null, null], 'before authentication nothing is known of a key');
  });

  test('max_parallel: a request in flight holds its slot (429, Retry-After: 1) until the client goes away', async () => {
    const key = await h.createKey({ maxParallel: 1 });
    const abort = new AbortController();
    // The simulator answers this one only after 8 s: it is in flight until the client leaves, long before.
    const hanging = fetch(h.url + IMAGE, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body('[sim:fault=slow-headers:8000]')),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    const refused = await until('the hanging request to hold the slot', async () => {
      const r = await models(key);
      await r.arrayBuffer();
      return r.status === 429 ? r : null;
    });
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.deepEqual(limitHeaders(refused), ['1', '0', '0s']);
    assert.match(await h.gateway.metrics.text(), /gateway_rate_limited_total\{limit="max_parallel",scope="key",group="default"\} [1-9]/);
    abort.abort();
    assert.ok((await hanging) instanceof Error);
    // Well before the vendor's answer: the slot follows the client's connection, not the vendor call.
    const back = await until(
      'the slot to come back once the client left',
      async () => {
        const r = await models(key);
        await r.arrayBuffer();
        return r.status === 200 ? r : null;
      },
      2_500,
    );
    assert.deepEqual(limitHeaders(back), ['1', '0', '0s'], 'one of one in flight: this one');
  });

  test('max_parallel: a written answer and a streamed one each give their slot back when they end', async () => {
    const key = await h.createKey({ maxParallel: 1 });
    const auth = { authorization: `Bearer ${key}` };
    for (let i = 0; i < 3; i++) {
      const image = await postJson(h.url, IMAGE, body(), auth);
      assert.equal(image.status, 200, image.text);
      const stream = await fetch(h.url + STREAM, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body()) });
      assert.equal(stream.status, 200);
      assert.match(await stream.text(), /^data: /m);
    }
  });
});
