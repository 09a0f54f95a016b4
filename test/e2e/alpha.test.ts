/**
 * End to end over real HTTP: client → gateway (port 0) → alpha simulator (port 0), for the alpha
 * generateContent route (docs/spec/interface.md 2.1, 2.2, 4.1, 5, 7). Every error answer is checked for its
 * shape and for never carrying a channel key or the vendor's own error body.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { makePng, pngSize } from '../../src/sim/png.js';
import { hashKey } from '../../src/tokens/keys.js';
import { postJson, startHarness, type Harness, type JsonAnswer } from '../helpers/harness.js';
import { closedPortUrl } from '../helpers/local-server.js';

const MODELS = ['alpha-3-pro-image-preview', 'alpha-2.5-flash-image-preview', 'alpha-3.1-flash-image-preview'] as const;
const RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3', '21:9'] as const;
const SIZES = ['1K', '2K', '4K'] as const;

const pathOf = (model: string) => `/v1beta/models/${model}:generateContent`;

/** Every channel key used in this file: no answer may ever contain one. */
const SECRETS = new Set<string>();
/** A channel key that is easy to spot if it leaks. */
function channelSecret(): string {
  const key = `chan-secret-${randomBytes(8).toString('hex')}`;
  SECRETS.add(key);
  return key;
}

interface BodyOptions {
  ratio?: string;
  size?: string;
  modalities?: string[] | null;
  images?: Buffer[];
}

/** A public request body: the prompt first, then the reference images (docs/spec/interface.md 2.1 rule 2). */
function requestBody(prompt: string, o: BodyOptions = {}): unknown {
  const imageConfig: Record<string, string> = {};
  if (o.ratio) imageConfig.aspectRatio = o.ratio;
  if (o.size) imageConfig.imageSize = o.size;
  const generationConfig: Record<string, unknown> = { imageConfig };
  if (o.modalities !== null) generationConfig.responseModalities = o.modalities ?? ['IMAGE'];
  const parts: unknown[] = [{ text: prompt }];
  for (const img of o.images ?? []) parts.push({ inlineData: { mimeType: 'image/png', data: img.toString('base64') } });
  return { contents: [{ role: 'user', parts }], generationConfig };
}

/** The parts of the first candidate. */
function partsOf(json: any): any[] {
  assert.ok(Array.isArray(json?.candidates) && json.candidates.length > 0, `no candidates in ${JSON.stringify(json).slice(0, 300)}`);
  const parts = json.candidates[0].content?.parts;
  assert.ok(Array.isArray(parts), 'candidates[0].content.parts is not an array');
  return parts;
}

/** The one image part of the first candidate, decoded; asserts it is a PNG. */
function imageOf(json: any): { png: Buffer; width: number; height: number; data: string } {
  const images = partsOf(json).filter((p) => p.inlineData);
  assert.equal(images.length, 1, 'exactly one image part expected');
  const inline = images[0].inlineData;
  assert.equal(inline.mimeType, 'image/png');
  assert.equal(typeof inline.data, 'string');
  const png = Buffer.from(inline.data, 'base64');
  const size = pngSize(png);
  assert.ok(size, 'inlineData.data does not decode to a PNG');
  return { png, ...size, data: inline.data };
}

function assertRatio(size: { width: number; height: number }, ratio: string): void {
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  assert.equal(size.width * h, size.height * w, `${size.width}x${size.height} is not ${ratio}`);
}

/** Asserts an answer carries no channel key, in its body or its headers, nor the vendor's error details. */
function assertNoLeak(res: JsonAnswer): void {
  const headers = JSON.stringify([...res.headers]);
  for (const secret of SECRETS) {
    assert.ok(!res.text.includes(secret), 'the answer body contains a channel key');
    assert.ok(!headers.includes(secret), 'the answer headers contain a channel key');
  }
  assert.ok(!res.text.includes('API_KEY_INVALID'), 'the answer contains the vendor error reason');
  assert.ok(!res.text.includes('googleapis.com'), 'the answer contains vendor error details');
}

/** Asserts an error answer: status, catalogue code, body shape A or B exactly, and no leak. */
function assertError(res: JsonAnswer, status: number, code: string, shape: 'A' | 'B' = 'A'): void {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 300)}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  if (shape === 'A') {
    assert.deepEqual(Object.keys(res.json ?? {}), ['error'], res.text);
    const e = res.json.error;
    assert.deepEqual(Object.keys(e).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(e.code, code);
    assert.equal(e.type, 'svc_api_error');
    assert.equal(typeof e.param, 'string');
    assert.equal(typeof e.message, 'string');
    assert.ok(e.message.length > 0);
  } else {
    assert.deepEqual(Object.keys(res.json ?? {}).sort(), ['code', 'data', 'message'], res.text);
    assert.equal(res.json.code, code);
    assert.equal(typeof res.json.message, 'string');
    assert.ok(res.json.message.length > 0);
    assert.equal(res.json.data, null);
  }
  assertNoLeak(res);
}

describe('alpha generateContent end to end (base64 delivery)', () => {
  let h: Harness;
  const bearer = () => ({ authorization: `Bearer ${h.key}` });
  const call = (model: string, body: unknown, headers: Record<string, string> = bearer()) => postJson(h.url, pathOf(model), body, headers);

  before(async () => {
    h = await startHarness({ sim: { key: channelSecret() } });
  });
  after(() => h.close());
  beforeEach(() => {
    h.sim.faults.length = 0;
  });

  for (const model of MODELS) {
    test(`text-to-image on ${model}: a PNG candidate, the public modelVersion, usage and createTime`, async () => {
      const res = await call(model, requestBody('a red fox in the snow', { ratio: '1:1' }));
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const c = res.json.candidates[0];
      assert.equal(c.content.role, 'model');
      assert.equal(c.finishReason, 'STOP');
      const img = imageOf(res.json);
      assertRatio(img, '1:1');
      assert.equal(res.json.modelVersion, model);
      const u = res.json.usageMetadata;
      for (const k of ['promptTokenCount', 'candidatesTokenCount', 'totalTokenCount']) assert.ok(Number.isInteger(u[k]) && u[k] > 0, `${k}: ${u[k]}`);
      assert.equal(u.totalTokenCount, u.promptTokenCount + u.candidatesTokenCount);
      assert.equal(u.trafficType, 'ON_DEMAND');
      assert.match(res.json.createTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      assert.ok(Math.abs(Date.parse(res.json.createTime) - Date.now()) < 60_000, 'createTime is not now');
    });

    test(`every aspectRatio on ${model} gives a PNG of that proportion`, async () => {
      for (const ratio of RATIOS) {
        const res = await call(model, requestBody('a lighthouse', { ratio }));
        assert.equal(res.status, 200, `${ratio}: ${res.text.slice(0, 300)}`);
        assertRatio(imageOf(res.json), ratio);
      }
    });

    test(`imageSize 1K, 2K and 4K are accepted on ${model}`, async () => {
      for (const size of SIZES) {
        const res = await call(model, requestBody('a mountain lake', { ratio: '16:9', size }));
        assert.equal(res.status, 200, `${size}: ${res.text.slice(0, 300)}`);
        // Interface 2.1 rule 4: only acceptance is asserted, not the delivered size.
        assertRatio(imageOf(res.json), '16:9');
      }
    });
  }

  test('image-to-image with one and with three inlineData parts after the prompt', async () => {
    const refs = [makePng(16, 16, 1), makePng(32, 16, 2), makePng(16, 32, 3)];
    const one = await call(MODELS[0], requestBody('make it blue', { ratio: '4:3', images: refs.slice(0, 1) }));
    assert.equal(one.status, 200, one.text.slice(0, 300));
    assertRatio(imageOf(one.json), '4:3');
    const three = await call(MODELS[0], requestBody('make it blue', { ratio: '4:3', images: refs }));
    assert.equal(three.status, 200, three.text.slice(0, 300));
    assertRatio(imageOf(three.json), '4:3');
    // The simulator counts 258 prompt tokens per reference image it received: all three arrived.
    assert.equal(three.json.usageMetadata.promptTokenCount - one.json.usageMetadata.promptTokenCount, 2 * 258);
  });

  test('responseModalities IMAGE gives only an image; IMAGE+TEXT and the default give text and image', async () => {
    const imageOnly = await call(MODELS[1], requestBody('a boat', { modalities: ['IMAGE'] }));
    assert.equal(imageOnly.status, 200, imageOnly.text.slice(0, 300));
    const p1 = partsOf(imageOnly.json);
    assert.equal(p1.length, 1);
    assert.ok(p1[0].inlineData);
    imageOf(imageOnly.json);

    for (const modalities of [['IMAGE', 'TEXT'], ['TEXT', 'IMAGE'], null]) {
      const both = await call(MODELS[1], requestBody('a boat', { modalities }));
      assert.equal(both.status, 200, both.text.slice(0, 300));
      const parts = partsOf(both.json);
      assert.equal(parts.filter((p) => typeof p.text === 'string' && p.text.length > 0).length, 1, `text part for ${JSON.stringify(modalities)}`);
      imageOf(both.json);
    }
  });

  test('a blocked prompt answers promptFeedback and no candidates', async () => {
    const res = await call(MODELS[2], requestBody('[sim:block] something forbidden'));
    assert.equal(res.status, 200, res.text.slice(0, 300));
    assert.equal(res.json.promptFeedback?.blockReason, 'PROHIBITED_CONTENT');
    assert.ok(res.json.candidates === undefined || (Array.isArray(res.json.candidates) && res.json.candidates.length === 0), 'no candidates expected');
    assert.equal(res.json.modelVersion, MODELS[2]);
    const u = res.json.usageMetadata;
    assert.equal(u.totalTokenCount, u.promptTokenCount + u.candidatesTokenCount);
  });

  describe('authentication (interface.md 5)', () => {
    test('Bearer, x-goog-api-key and ?key= all authenticate', async () => {
      const body = requestBody('a kite');
      const viaBearer = await postJson(h.url, pathOf(MODELS[0]), body, { authorization: `Bearer ${h.key}` });
      assert.equal(viaBearer.status, 200, viaBearer.text.slice(0, 300));
      const viaHeader = await postJson(h.url, pathOf(MODELS[0]), body, { 'x-goog-api-key': h.key });
      assert.equal(viaHeader.status, 200, viaHeader.text.slice(0, 300));
      const viaQuery = await postJson(h.url, `${pathOf(MODELS[0])}?key=${encodeURIComponent(h.key)}`, body);
      assert.equal(viaQuery.status, 200, viaQuery.text.slice(0, 300));
      for (const r of [viaBearer, viaHeader, viaQuery]) imageOf(r.json);
    });

    test('a wrong key is 401 invalid_api_key (shape A) in every form, and reaches no upstream', async () => {
      const before = h.sim.stats.requests;
      const wrong = `gw-${randomBytes(32).toString('base64url')}`;
      const body = requestBody('a kite');
      const forms: Record<string, string>[] = [{ authorization: `Bearer ${wrong}` }, { 'x-goog-api-key': wrong }];
      for (const headers of forms) {
        assertError(await postJson(h.url, pathOf(MODELS[0]), body, headers), 401, 'invalid_api_key');
      }
      assertError(await postJson(h.url, `${pathOf(MODELS[0])}?key=${wrong}`, body), 401, 'invalid_api_key');
      assert.equal(h.sim.stats.requests, before);
    });

    test('no key is 401 invalid_api_key', async () => {
      assertError(await postJson(h.url, pathOf(MODELS[0]), requestBody('a kite'), {}), 401, 'invalid_api_key');
      assertError(await postJson(h.url, pathOf(MODELS[0]), requestBody('a kite'), { authorization: 'Bearer ' }), 401, 'invalid_api_key');
    });

    test('a token restricted to one model gets 403 model_not_allowed for another', async () => {
      const key = await h.createKey({ models: [MODELS[0]] });
      const headers = { authorization: `Bearer ${key}` };
      const ok = await call(MODELS[0], requestBody('a tree'), headers);
      assert.equal(ok.status, 200, ok.text.slice(0, 300));
      for (const other of [MODELS[1], MODELS[2]]) {
        const res = await call(other, requestBody('a tree'), headers);
        assertError(res, 403, 'model_not_allowed');
        assert.equal(res.json.error.param, 'model');
      }
    });
  });

  describe('quota (interface.md 5 rule 3)', () => {
    test('a token with quota 2 gets two answers, then 402 insufficient_user_quota without reaching upstream', async () => {
      const key = await h.createKey({ quota: 2 });
      const headers = { authorization: `Bearer ${key}` };
      for (let i = 0; i < 2; i++) {
        const res = await call(MODELS[0], requestBody('a cup'), headers);
        assert.equal(res.status, 200, res.text.slice(0, 300));
      }
      const before = h.sim.stats.requests;
      assertError(await call(MODELS[0], requestBody('a cup'), headers), 402, 'insufficient_user_quota');
      assert.equal(h.sim.stats.requests, before, 'a request without quota must not reach the upstream');
      assert.equal((await h.store.findTokenByHash(hashKey(key)))?.used, 2);
    });

    test('concurrent requests never spend more than the quota', async () => {
      const key = await h.createKey({ quota: 2 });
      const headers = { authorization: `Bearer ${key}` };
      const answers = await Promise.all(Array.from({ length: 6 }, () => call(MODELS[0], requestBody('a race'), headers)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 402, 402, 402, 402]);
      for (const a of answers) if (a.status === 402) assertError(a, 402, 'insufficient_user_quota');
      assert.equal((await h.store.findTokenByHash(hashKey(key)))?.used, 2);
    });

    test('a failed upstream call does not consume quota', async () => {
      const key = await h.createKey({ quota: 1 });
      const headers = { authorization: `Bearer ${key}` };
      h.sim.faults.push('500');
      assertError(await call(MODELS[0], requestBody('a cup'), headers), 502, 'bad_response');
      assert.equal(h.sim.faults.length, 0, 'the fault was not consumed by the upstream');
      assert.equal((await h.store.findTokenByHash(hashKey(key)))?.used, 0);
      const ok = await call(MODELS[0], requestBody('a cup'), headers);
      assert.equal(ok.status, 200, ok.text.slice(0, 300));
      assertError(await call(MODELS[0], requestBody('a cup'), headers), 402, 'insufficient_user_quota');
    });
  });

  describe('upstream faults through the gateway', () => {
    const withFault = async (fault: string) => {
      h.sim.faults.push(fault);
      const res = await call(MODELS[0], requestBody('a fault'));
      assert.equal(h.sim.faults.length, 0, `fault ${fault} did not reach the upstream`);
      return res;
    };

    test('429 → 429 too_many_requests in shape B with Retry-After', async () => {
      const res = await withFault('429');
      assertError(res, 429, 'too_many_requests', 'B');
      // The simulator answers Retry-After: 2.
      assert.equal(res.headers.get('retry-after'), '2');
    });

    test('500 → 502 bad_response', async () => {
      assertError(await withFault('500'), 502, 'bad_response');
    });

    test('503 → 503 upstream_unavailable', async () => {
      assertError(await withFault('503'), 503, 'upstream_unavailable');
    });

    test('400 INVALID_ARGUMENT → 400 invalid_request', async () => {
      assertError(await withFault('400'), 400, 'invalid_request');
    });

    test('a connection reset → 502 bad_response', async () => {
      assertError(await withFault('reset'), 502, 'bad_response');
    });

    test('malformed JSON from upstream → 502 bad_response', async () => {
      assertError(await withFault('malformed-json'), 502, 'bad_response');
    });

    test('the gateway serves normally after faults', async () => {
      const res = await call(MODELS[0], requestBody('after the storm'));
      assert.equal(res.status, 200, res.text.slice(0, 300));
      imageOf(res.json);
    });
  });
});

describe('alpha generateContent end to end (URL delivery)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ sim: { key: channelSecret(), imageDelivery: 'url' } });
  });
  after(() => h.close());

  test('inlineData.data as a URL reaches the client as a gateway link, and fetching it yields the PNG', async () => {
    const res = await postJson(h.url, pathOf(MODELS[0]), requestBody('a sailing ship', { ratio: '9:16' }), { authorization: `Bearer ${h.key}` });
    assert.equal(res.status, 200, res.text.slice(0, 300));
    const images = partsOf(res.json).filter((p) => p.inlineData);
    assert.equal(images.length, 1);
    const data: string = images[0].inlineData.data;
    assert.ok(data.startsWith(`${h.url}/v1/links/`), `not a gateway link: ${data.slice(0, 100)}`);
    const file = await fetch(data);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    const size = pngSize(Buffer.from(await file.arrayBuffer()));
    assert.ok(size, 'the URL does not serve a PNG');
    assertRatio(size, '9:16');
  });
});

describe('upstream timeouts (short channel timeouts)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ sim: { key: channelSecret() }, timeouts: { connect_ms: 500, headers_ms: 300, body_ms: 300 } });
  });
  after(() => h.close());
  beforeEach(() => {
    h.sim.faults.length = 0;
  });
  const call = () => postJson(h.url, pathOf(MODELS[0]), requestBody('a slow one'), { authorization: `Bearer ${h.key}` });

  test('a normal answer arrives within the short timeouts', async () => {
    const res = await call();
    assert.equal(res.status, 200, res.text.slice(0, 300));
    imageOf(res.json);
  });

  // undici checks header and body timeouts on a ~0.5 s tick, so a 300 ms timeout fires after up to
  // ~1 s; the upstream delays are well beyond that. Had the gateway waited, it would answer 200.
  test('headers later than the channel headers timeout → 504 upstream_timeout', async () => {
    h.sim.faults.push('slow-headers:2500');
    assertError(await call(), 504, 'upstream_timeout');
  });

  test('a body stalled longer than the channel body timeout → 504 upstream_timeout', async () => {
    h.sim.faults.push('slow-body:2500');
    assertError(await call(), 504, 'upstream_timeout');
  });

  test('an upstream that never answers → 504 upstream_timeout', async () => {
    h.sim.faults.push('hang');
    assertError(await call(), 504, 'upstream_timeout');
  });

  test('after the timeouts the channel serves normally again', async () => {
    const res = await call();
    assert.equal(res.status, 200, res.text.slice(0, 300));
    imageOf(res.json);
  });
});

describe('unreachable or misconfigured upstream', () => {
  test('connection refused → 502 bad_response, and no quota is spent', async (t) => {
    const h = await startHarness({ upstreamUrl: await closedPortUrl(), sim: { key: channelSecret() }, token: { quota: 5 } });
    t.after(() => h.close());
    assertError(await postJson(h.url, pathOf(MODELS[0]), requestBody('nowhere'), { authorization: `Bearer ${h.key}` }), 502, 'bad_response');
    assert.equal((await h.store.findTokenByHash(hashKey(h.key)))?.used, 0);
  });

  test('an upstream refusing the channel key → 502 bad_response, and the vendor body never reaches the client', async (t) => {
    const wrongChannelKey = channelSecret();
    const h = await startHarness({ sim: { key: channelSecret() }, channelKey: wrongChannelKey });
    t.after(() => h.close());
    const before = h.sim.stats.requests;
    const res = await postJson(h.url, pathOf(MODELS[0]), requestBody('a key test'), { authorization: `Bearer ${h.key}` });
    assertError(res, 502, 'bad_response');
    assert.equal(h.sim.stats.requests, before + 1, 'the request did not reach the upstream');
    for (const s of ['API_KEY_INVALID', 'API key not valid', h.sim.secrets.key!, wrongChannelKey]) {
      assert.ok(!res.text.includes(s), `the answer contains ${JSON.stringify(s)}`);
    }
  });
});
