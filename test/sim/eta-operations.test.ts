/**
 * The eta-operations simulator over real HTTP: submit → {name} → done:false → done:true with the bytes
 * of `sim.result`, failures, safety filtering, stuck operations, auth refusals, the vendor's
 * validation errors, downloads (key, Range, alt=media) and every fault form.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { FILTER_REASON, METADATA_TYPE, RESPONSE_TYPE, startEtaOperationsSimulator } from '../../src/sim/eta-operations.js';
import { type Answer, answerOf, simClient } from '../helpers/sim-client.js';

const PNG = { bytesBase64Encoded: 'iVBORw0KGgo=', mimeType: 'image/png' };
const ref = (image: unknown = PNG) => ({ image, referenceType: 'ASSET' });

function client(sim: Simulator) {
  const c = simClient(sim, { 'x-goog-api-key': sim.secrets.key! });
  return {
    submit: (body: unknown, opts: { model?: string; headers?: Record<string, string>; search?: string } = {}) =>
      c.post(`/v1beta/models/${opts.model ?? 'eta_3_1'}:predictLongRunning${opts.search ?? ''}`, body, opts.headers),
    poll: (name: string, headers?: Record<string, string>, search = '') => c.get(`/v1beta/${name}${search}`, headers),
    download: (uri: string, headers?: Record<string, string>) => c.fetch(uri, { headers }),
  };
}

const video = (prompt: string, parameters: Record<string, unknown> = { aspectRatio: '16:9', durationSeconds: 8 }, extra = {}) => ({
  instances: [{ prompt, ...extra }],
  parameters,
});

describe('eta-operations simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  before(async () => {
    sim = await startEtaOperationsSimulator({ finishMs: 3000, clock: () => now });
  });
  after(() => sim.close());

  test('an operation goes {name} → done:false → done:true and its video downloads with the key, with Range', async () => {
    const c = client(sim);
    const params = { aspectRatio: '9:16', durationSeconds: 6, resolution: '720p', negativePrompt: 'blur', personGeneration: 'allow_adult', sampleCount: 1 };
    const sub = await c.submit(video('a cat surfing', params, { image: PNG, lastFrame: { ...PNG, mimeType: 'image/webp' } }), { model: 'eta_3_1-fast' });
    assert.equal(sub.status, 200);
    const name = sub.body.name as string;
    assert.match(name, /^models\/eta_3_1-fast\/operations\/[0-9a-f]{24}$/);
    assert.deepEqual(Object.keys(sub.body), ['name']);
    const id = name.split('/').pop()!;
    assert.equal(sim.tasks?.get(id)?.model, 'eta_3_1-fast');

    let q = await c.poll(name);
    assert.equal(q.status, 200);
    assert.deepEqual(q.body, { name }, 'queued: no done at all');
    assert.equal(sim.result!(name), null);

    now += 1500;
    q = await c.poll(name);
    assert.equal(q.body.done, false);
    assert.deepEqual(q.body.metadata, { '@type': METADATA_TYPE }, 'PredictLongRunningMetadata has no fields');
    assert.equal(q.body.response, undefined);

    now += 1500;
    q = await c.poll(name);
    assert.equal(q.body.done, true);
    assert.equal(q.body.name, name);
    assert.equal(q.body.response['@type'], RESPONSE_TYPE);
    const uri = q.body.response.generateVideoResponse.generatedSamples[0].video.uri as string;
    assert.equal(uri, `${sim.url}/v1beta/files/${id}:download?alt=media`);
    const expected = sim.result!(name);
    assert.ok(expected);
    assert.deepEqual(sim.result!(id), expected, 'the bare id works too');
    assert.equal(sim.result!(name, 1), null);

    const whole = await c.download(uri);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), expected);
    const part = await c.download(uri, { range: 'bytes=100-199' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${expected.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(100, 200));
    assert.equal((await c.download(uri, { range: `bytes=${expected.length}-` })).status, 416);
    const head = await fetch(uri, { method: 'HEAD', headers: { 'x-goog-api-key': sim.secrets.key! } });
    assert.equal(head.headers.get('content-length'), String(expected.length));
    const byQuery = await fetch(`${uri}&key=${sim.secrets.key}`);
    assert.deepEqual(Buffer.from(await byQuery.arrayBuffer()), expected);
    assert.equal(sim.tasks?.get(id)?.polls, 3);
  });

  test('a download needs the key and alt=media', async () => {
    const c = client(sim);
    const name = (await c.submit(video('x'))).body.name as string;
    const id = name.split('/').pop()!;
    const uri = `${sim.url}/v1beta/files/${id}:download?alt=media`;
    const early = await answerOf(await c.download(uri));
    assert.equal(early.status, 404, 'not done yet');
    assert.equal(early.body.error.status, 'NOT_FOUND');
    now += 3000;
    const anonymous = await answerOf(await fetch(uri));
    assert.equal(anonymous.status, 403);
    assert.equal(anonymous.body.error.status, 'PERMISSION_DENIED');
    const wrong = await answerOf(await fetch(uri, { headers: { 'x-goog-api-key': 'wrong' } }));
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.status, 'INVALID_ARGUMENT');
    const noAlt = await answerOf(await c.download(uri.replace('?alt=media', '')));
    assert.equal(noAlt.status, 400);
    assert.match(noAlt.body.error.message, /alt=media/);
    assert.equal((await c.download(uri)).status, 200);
  });

  test('[sim:fail], [sim:filtered], [sim:never]; [sim:status=WORD] means nothing', async () => {
    const c = client(sim);
    const name = async (prompt: string) => (await c.submit(video(prompt))).body.name as string;
    const failed = await name('bad [sim:fail=PROMPT_REJECTED]');
    const failedDefault = await name('bad [sim:fail]');
    const filtered = await name('risky [sim:filtered]');
    const stuck = await name('slow [sim:never]');
    const odd = await name('odd [sim:status=SUSPENDED]');
    now += 10 * 60_000;

    assert.deepEqual((await c.poll(failed)).body, { name: failed, done: true, error: { code: 3, message: 'PROMPT_REJECTED' } });
    assert.equal((await c.poll(failedDefault)).body.error.message, 'generation_failed');
    assert.equal(sim.result!(failed), null);

    const f = (await c.poll(filtered)).body;
    assert.equal(f.done, true);
    assert.deepEqual(f.response.generateVideoResponse, { raiMediaFilteredCount: 1, raiMediaFilteredReasons: [FILTER_REASON] });
    assert.equal(sim.result!(filtered), null);
    assert.equal((await c.download(`${sim.url}/v1beta/files/${filtered.split('/').pop()}:download?alt=media`)).status, 404);

    const s = (await c.poll(stuck)).body;
    assert.equal(s.done, false);
    assert.deepEqual(s.metadata, { '@type': METADATA_TYPE });

    const o = (await c.poll(odd)).body;
    assert.equal(o.done, true);
    assert.ok(o.response.generateVideoResponse.generatedSamples[0].video.uri);
  });

  test('an unknown operation, a model mismatch and an unknown path answer 404 NOT_FOUND', async () => {
    const c = client(sim);
    const miss = await c.poll('models/eta_3_1/operations/nope');
    assert.equal(miss.status, 404);
    assert.equal(miss.body.error.status, 'NOT_FOUND');
    const name = (await c.submit(video('x'))).body.name as string;
    assert.equal((await c.poll(name.replace('eta_3_1', 'eta_3_1-fast'))).status, 404);
    const path = await answerOf(await fetch(`${sim.url}/v1beta/models/eta_3_1:generateContent`, { method: 'POST' }));
    assert.equal(path.status, 404);
    assert.equal(path.body.error.code, 404);
  });
});

describe('eta-operations simulator (real time)', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startEtaOperationsSimulator({ finishMs: 60_000 });
  });
  after(() => sim.close());

  test('a reference-to-video operation (ASSET, and "asset" as REST examples write it) finishes after [sim:finish=…]', async () => {
    const c = client(sim);
    const refs = [ref(), { ...ref(), referenceType: 'asset' }, ref()];
    const sub = await c.submit(video('a robot [sim:finish=40]', { aspectRatio: '16:9', durationSeconds: 8, resolution: '1080p' }, { referenceImages: refs }));
    assert.equal(sub.status, 200);
    let q: Answer | undefined;
    for (let i = 0; i < 100 && !q?.body.done; i++) {
      q = await c.poll(sub.body.name);
      if (!q.body.done) await delay(10);
    }
    assert.equal(q?.body.done, true);
    const uri = q!.body.response.generateVideoResponse.generatedSamples[0].video.uri as string;
    assert.deepEqual(Buffer.from(await (await c.download(uri)).arrayBuffer()), sim.result!(sub.body.name));
  });

  test('a missing key is refused with 403, a wrong key with 400 API_KEY_INVALID; ?key= works', async () => {
    const c = client(sim);
    const none = await c.submit(video('x'), { headers: { 'x-goog-api-key': '' } });
    assert.equal(none.status, 403);
    assert.deepEqual(Object.keys(none.body.error).sort(), ['code', 'message', 'status']);
    assert.equal(none.body.error.status, 'PERMISSION_DENIED');
    const wrong = await c.submit(video('x'), { headers: { 'x-goog-api-key': 'nope' } });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.status, 'INVALID_ARGUMENT');
    assert.match(wrong.body.error.message, /API key not valid/);
    assert.equal(wrong.body.error.details[0].reason, 'API_KEY_INVALID');
    const pollNone = await answerOf(await fetch(`${sim.url}/v1beta/models/eta_3_1/operations/x`));
    assert.equal(pollNone.status, 403);
    const byQuery = await fetch(`${sim.url}/v1beta/models/eta_3_1:predictLongRunning?key=${sim.secrets.key}`, {
      method: 'POST',
      body: JSON.stringify(video('x')),
    });
    assert.equal(byQuery.status, 200);
  });

  test('an unknown model answers 404 NOT_FOUND', async () => {
    const a = await client(sim).submit(video('x'), { model: 'eta_2' });
    assert.equal(a.status, 404);
    assert.equal(a.body.error.status, 'NOT_FOUND');
    assert.match(a.body.error.message, /models\/eta_2 is not found/);
  });

  test('validation errors answer 400 INVALID_ARGUMENT with a clear message', async () => {
    const p = (extra: Record<string, unknown>) => ({ aspectRatio: '16:9', durationSeconds: 8, ...extra });
    const cases: [unknown, RegExp][] = [
      ['{"instances": ', /Invalid JSON payload/],
      [[], /JSON object/],
      [{ instances: [] }, /exactly one instance/],
      [{ instances: [{ prompt: 'a' }, { prompt: 'b' }] }, /exactly one instance/],
      [{ instances: [{}] }, /prompt is required/],
      [{ instances: [{ prompt: 7 }] }, /prompt is required/],
      [{ instances: [{ prompt: 'x' }], extra: 1 }, /Unknown name "extra"/],
      [video('x', p({}), { video: PNG }), /Unknown name "video" at 'instances\[0\]'/],
      [video('x', p({ sampleCount: 0 })), /sampleCount must be an integer from 1 to 4/],
      [video('x', p({ sampleCount: 5 })), /sampleCount must be an integer from 1 to 4/],
      [video('x', p({ enhancePrompt: true })), /Unknown name "enhancePrompt" at 'parameters'/],
      [video('x', p({}), { image: { ...PNG, mimeType: 'image/gif' } }), /image\.mimeType must be one of/],
      [video('x', p({}), { image: { mimeType: 'image/png' } }), /Base64 decoding failed/],
      [video('x', p({}), { image: { ...PNG, bytesBase64Encoded: 'not base64!' } }), /Base64 decoding failed/],
      [video('x', p({}), { image: 'data:image/png;base64,AAAA' }), /image must be an object/],
      [video('x', p({}), { lastFrame: PNG }), /lastFrame requires/],
      [video('x', p({}), { referenceImages: [ref(), ref(), ref(), ref()] }), /1 to 3/],
      [video('x', p({}), { referenceImages: [] }), /1 to 3/],
      [video('x', p({}), { referenceImages: [ref()], image: PNG }), /cannot be combined/],
      [video('x', p({}), { referenceImages: [{ image: PNG, referenceType: 'STYLE' }] }), /referenceType STYLE is not supported by this model/],
      [video('x', p({}), { referenceImages: [{ image: PNG, referenceType: 'REFERENCE_TYPE_ASSET' }] }), /referenceType must be ASSET/],
      [video('x', p({}), { referenceImages: [{ image: PNG }] }), /referenceType must be ASSET/],
      [video('x', p({}), { referenceImages: [ref({ ...PNG, mimeType: 'text/plain' })] }), /referenceImages\[0\]\.image\.mimeType/],
      [video('x', p({ aspectRatio: '9:16' }), { referenceImages: [ref()] }), /only supported with parameters\.aspectRatio "16:9"/],
      [video('x', p({ durationSeconds: 6 }), { referenceImages: [ref()] }), /require parameters\.durationSeconds 8/],
      [video('x', p({ aspectRatio: '1:1' })), /aspectRatio must be one of/],
      [video('x', p({ durationSeconds: 5 })), /durationSeconds must be one of/],
      [video('x', p({ durationSeconds: '8' })), /durationSeconds must be one of/],
      [video('x', p({ resolution: '4k' })), /resolution must be one of/],
      [video('x', p({ resolution: '1080p', durationSeconds: 4 })), /"1080p" requires parameters\.durationSeconds 8/],
      [video('x', p({ negativePrompt: 1 })), /negativePrompt must be a string/],
      // Vertex-only: @google/genai refuses them in Gemini API mode, so the vendor does not take them.
      [video('x', p({ generateAudio: true })), /`generateAudio` isn't supported by this model/],
      [video('x', p({ seed: 7 })), /`seed` isn't supported by this model/],
      [video('x', p({ storageUri: 'gs://b/x' })), /`storageUri` isn't supported by this model/],
      [video('x', p({ personGeneration: 'everyone' })), /personGeneration must be one of/],
      [{ instances: [{ prompt: 'x' }], parameters: [] }, /parameters must be an object/],
    ];
    const size = sim.tasks!.size;
    for (const [body, message] of cases) {
      const a = await client(sim).submit(body);
      assert.equal(a.status, 400, JSON.stringify(body));
      assert.equal(a.body.error.code, 400);
      assert.equal(a.body.error.status, 'INVALID_ARGUMENT');
      assert.match(a.body.error.message, message, JSON.stringify(body));
    }
    assert.equal(sim.tasks!.size, size, 'no operation was created');
    assert.equal((await client(sim).submit({ instances: [{ prompt: 'defaults only' }] })).status, 200);
  });

  test('faults: vendor error bodies, reset, malformed JSON, slow headers, slow body, queue and marker', async () => {
    const c = client(sim);
    const r429 = await c.submit(video('x'), { headers: { 'x-sim-fault': '429' } });
    assert.equal(r429.status, 429);
    assert.equal(r429.body.error.status, 'RESOURCE_EXHAUSTED');
    assert.equal(r429.headers.get('retry-after'), '2');
    const stated = await c.submit(video('x'), { headers: { 'x-sim-fault': '429:wait:45' } });
    assert.equal(stated.status, 429);
    assert.deepEqual(stated.body.error.details, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '45s' }]);
    assert.equal(stated.headers.get('retry-after'), null, 'a stated wait is in the body only');
    const r500 = await c.poll('models/eta_3_1/operations/any', { 'x-sim-fault': '500' });
    assert.equal(r500.status, 500);
    assert.equal(r500.body.error.status, 'INTERNAL');
    const r503 = await c.poll('models/eta_3_1/operations/any', {}, '?sim_fault=503');
    assert.equal(r503.status, 503);
    assert.equal(r503.body.error.status, 'UNAVAILABLE');

    await assert.rejects(c.submit(video('x'), { headers: { 'x-sim-fault': 'reset' } }));
    await assert.rejects(c.poll('models/eta_3_1/operations/any', { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.poll('models/eta_3_1/operations/any', { 'x-sim-fault': 'malformed-json' }), SyntaxError);

    const slow = await c.submit(video('x'), { headers: { 'x-sim-fault': 'slow-headers:30' } });
    assert.equal(slow.status, 200);
    assert.ok(slow.body.name);
    const slowBody = await c.submit(video('x'), { headers: { 'x-sim-fault': 'slow-body:30' } });
    assert.ok(sim.tasks!.get(String(slowBody.body.name).split('/').pop()!), 'slow-body still creates the operation');

    sim.faults.push('429');
    assert.equal((await c.poll(slow.body.name)).status, 429);
    assert.equal((await c.poll(slow.body.name)).status, 200);
    const marked = await c.submit(video('x [sim:fault=503]'));
    assert.equal(marked.status, 503);
    assert.equal(marked.body.error.status, 'UNAVAILABLE');
  });

  test('download faults: named by header or query, never taken from the queue', async () => {
    const c = client(sim);
    const name = (await c.submit(video('x [sim:finish=0]'))).body.name as string;
    const uri = (await c.poll(name)).body.response.generateVideoResponse.generatedSamples[0].video.uri as string;
    const expected = sim.result!(name)!;
    const r503 = await answerOf(await c.download(uri, { 'x-sim-fault': '503' }));
    assert.equal(r503.status, 503);
    assert.equal(r503.body.error.status, 'UNAVAILABLE');
    assert.equal((await c.download(`${uri}&sim_fault=500`)).status, 500);
    await assert.rejects(async () => (await c.download(uri, { 'x-sim-fault': 'reset' })).arrayBuffer());
    const slow = await c.download(uri, { 'x-sim-fault': 'slow-body:30' });
    assert.equal(slow.status, 200);
    assert.deepEqual(Buffer.from(await slow.arrayBuffer()), expected);
    sim.faults.push('500');
    assert.equal((await c.download(uri)).status, 200);
    assert.equal((await c.poll(name)).status, 500, 'the queued fault waited for an API call');
  });

  test('counters: requests, submits, queries, downloads', () => {
    const s = sim.stats;
    assert.ok(s.requests >= s.submits! + s.queries! + s.downloads!);
    assert.ok(s.submits! > 0 && s.queries! > 0 && s.downloads! > 0);
  });
});
