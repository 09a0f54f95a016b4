import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import type { Simulator } from '../../src/sim/http.js';
import { startThetaNativeSimulator } from '../../src/sim/theta-native.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** The submit body the theta simulator received for one of our tasks. */
async function vendorBody(h: TaskHarness, id: string): Promise<any> {
  const rec = await h.record(id);
  return h.sims['theta-native']!.tasks!.get(rec!.upstreamId!)!.body;
}

describe('video tasks on theta-native, end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  test("theta-H3 on /v1/video/create: submit → in progress → completed (query, then file retrieve) → downloaded bytes equal the vendor's", async () => {
    const sim = h.sims['theta-native']!;
    const retrievesBefore = sim.stats!.retrieves!;
    const sub = await h.post('/v1/video/create', { model: 'theta-H3', prompt: 'a lighthouse at dawn', size: '768P', metadata: { aigc_watermark: false } });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(sub.json.size, '768P');
    assert.equal(sub.json.seconds, '5');
    assert.deepEqual(await vendorBody(h, id), { model: 'theta-H3', prompt: 'a lighthouse at dawn', duration: 5, resolution: '768P', aigc_watermark: false });
    const seen = new Set<string>();
    const done = await h.waitFor(
      id,
      (t) => {
        seen.add(t.status);
        return t.status === 'completed';
      },
      { path: (x) => `/v1/video/query?id=${x}` },
    );
    assert.ok(seen.has('queued') || seen.has('in_progress'));
    assert.equal(done.progress, 100);
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const rec = await h.record(id);
    assert.equal(rec!.vendorStatus, 'Success');
    assert.ok(sim.stats!.retrieves! > retrievesBefore, 'the file id was resolved through /v1/files/retrieve');
    const expected = sim.result!(rec!.upstreamId!)!;
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(expected), "the downloaded bytes are the vendor's");
    const part = await h.get(`/v1/videos/${id}/content`, { range: 'bytes=4-11' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(expected.subarray(4, 12)));
  });

  test('first and last frames, then a remix of the 768P result', async () => {
    const sub = await h.post('/v1/video/generations', {
      model: 'theta-H3',
      prompt: 'day turns to night',
      size: '768P',
      duration: 6,
      images: ['https://img.example.com/day.png', 'https://img.example.com/night.png'],
    });
    assert.equal(sub.status, 200, sub.text);
    const body = await vendorBody(h, sub.json.id);
    assert.equal(body.first_frame_image, 'https://img.example.com/day.png');
    assert.equal(body.last_frame_image, 'https://img.example.com/night.png');
    await h.waitFor(sub.json.id, (t) => t.status === 'completed');
    const remix = await h.post(`/v1/videos/${sub.json.id}/remix`, { prompt: 'make it snow' });
    assert.equal(remix.status, 200, remix.text);
    assert.equal(remix.json.size, '768P');
    const source = await h.record(sub.json.id);
    assert.equal((await vendorBody(h, remix.json.id)).remix_task_id, source!.upstreamId);
    const done = await h.waitFor(remix.json.id, (t) => t.status === 'completed');
    assert.equal(done.model, 'theta-H3');
    const rec = await h.record(remix.json.id);
    const file = await h.get(`/v1/videos/${remix.json.id}/content`);
    assert.equal(file.status, 200);
    assert.ok(file.bytes.equals(h.sims['theta-native']!.result!(rec!.upstreamId!)!));
  });

  test('a failed task: Fail with base_resp 1026 becomes failed (content_refused) and is refunded', async () => {
    const sub = await h.post('/v1/videos', { model: 'theta-H3', prompt: 'a kite [sim:fail]' });
    assert.equal(sub.status, 200, sub.text);
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'failed');
    assert.equal(done.error.code, 'content_refused');
    assert.equal(done.video_url, null);
    assert.equal((await h.record(sub.json.id))!.refunded, true);
  });

  test('xi-2.3 is served by the theta-native channel (an exact channel wins over xi-*); references are discouraged with a Warning', async () => {
    const submits = h.sims['theta-native']!.stats!.submits!;
    const sub = await h.post('/v1/videos', {
      model: 'xi-2.3',
      prompt: 'the cat',
      images: ['https://img.example.com/a.png', 'https://img.example.com/b.png', 'https://img.example.com/c.png'],
    });
    assert.equal(sub.status, 200, sub.text);
    assert.match(sub.headers.get('warning') ?? '', /not recommended for the xi family/);
    assert.equal(h.sims['theta-native']!.stats!.submits!, submits + 1);
    assert.deepEqual(await vendorBody(h, sub.json.id), {
      model: 'xi-2.3',
      prompt: 'the cat',
      duration: 6,
      resolution: '768P',
      first_frame_image: 'https://img.example.com/a.png',
    });
    await h.waitFor(sub.json.id, (t) => t.status === 'completed');
  });

  test('a mode the family refuses never reaches the vendor: reference media with a first frame', async () => {
    const submits = h.sims['theta-native']!.stats!.submits!;
    const res = await h.post('/v1/video/generations', {
      model: 'theta-H3',
      prompt: 'x',
      image: 'https://img.example.com/a.png',
      metadata: { reference_videos: ['https://media.example.com/a.mp4'] },
    });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.match(res.json.error.message, /frames_and_references is not supported by the theta family/);
    assert.equal(h.sims['theta-native']!.stats!.submits!, submits);
  });

  test('a stored download URL that no longer works (403) is resolved again through the file retrieve', async () => {
    const sim = h.sims['theta-native']!;
    const sub = await h.post('/v1/videos', { model: 'theta-H3', prompt: 'a kite', size: '768P' });
    await h.waitFor(sub.json.id, (t) => t.status === 'completed');
    const rec = (await h.record(sub.json.id))!;
    // Spoil the stored URL's signature: the vendor answers 403 AccessDenied, as for an expired one.
    const spoilt = rec.results[0]!.url!.replace(/sig=[0-9a-f]+/, 'sig=00');
    assert.ok(await h.store.updateTask(rec.id, rec.version, { results: [{ ...rec.results[0]!, url: spoilt }] }));
    const before = sim.stats!.retrieves!;
    const file = await h.get(`/v1/videos/${sub.json.id}/content`);
    assert.equal(file.status, 200, file.text);
    assert.ok(file.bytes.equals(sim.result!(rec.upstreamId!)!));
    assert.equal(sim.stats!.retrieves!, before + 1);
    assert.notEqual((await h.record(rec.id))!.results[0]!.url, spoilt, 'the fresh URL is stored');
  });

  test("the vendor's own refusal (HTTP 200, base_resp 1002) is too_many_requests and gives the client no task", async () => {
    const res = await h.post('/v1/video/generations', { model: 'theta-H3', prompt: 'a kite [sim:fault=code:1002]' });
    assert.equal(res.status, 429, res.text);
    assert.equal(res.json.code, 'too_many_requests');
  });

  test('a remix of a 2K result: the vendor refuses in an HTTP 200 (2013), answered 400 invalid_request naming our task id', async () => {
    const sub = await h.post('/v1/videos', { model: 'theta-H3', prompt: 'a kite at 2K', size: '2K' });
    assert.equal(sub.status, 200, sub.text);
    await h.waitFor(sub.json.id, (t) => t.status === 'completed');
    const source = (await h.record(sub.json.id))!;
    const res = await h.post(`/v1/videos/${sub.json.id}/remix`, { prompt: 'make it snow' });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.match(res.json.error.message, /768P/);
    assert.ok(res.json.error.message.includes(sub.json.id), 'the message names our task id');
    assert.ok(!res.json.error.message.includes(source.upstreamId!), "not the vendor's");
  });

  test('a real HTTP 429 of the vendor is too_many_requests', async () => {
    const res = await h.post('/v1/video/generations', { model: 'theta-H3', prompt: 'a kite [sim:fault=429]' });
    assert.equal(res.status, 429);
    assert.equal(res.json.code, 'too_many_requests');
  });
});

describe("theta-native download URLs expire after an hour of the vendor's clock", () => {
  let sim: Simulator;
  let store: Store;
  let gateway: Gateway;
  let key: string;
  let offset = 0;
  before(async () => {
    sim = await startThetaNativeSimulator({ finishMs: 200, clock: () => Date.now() + offset });
    store = await openStore(':memory:');
    const polling = { interval_ms: 100, stale_ms: 50, deadline_ms: 60_000, concurrency: 16 };
    const snapshot = loadConfigOrThrow(PROJECT_ROOT, {
      overrideChannel: (c) => (c.profile === 'theta-native' ? { base_url: sim.url, secrets: { ...sim.secrets }, polling } : null),
    });
    gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger() });
    await gateway.listen(0);
    key = generateKey();
    await store.createToken({ name: 'theta-clock', keyHash: hashKey(key), group: 'default', models: null, quota: null });
  });
  after(async () => {
    await gateway.close();
    await store.close();
    await sim.close();
  });

  test('two hours later the stored URL answers 403 "request has expired"; the download retrieves a fresh one', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const res = await fetch(`${gateway.url()}/v1/videos`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'theta-H3', prompt: 'a kite', size: '768P' }),
    });
    assert.equal(res.status, 200);
    const { id } = (await res.json()) as { id: string };
    let task: any;
    for (let i = 0; i < 200 && task?.status !== 'completed'; i++) {
      if (i) await new Promise((r) => setTimeout(r, 25));
      task = await (await fetch(`${gateway.url()}/v1/videos/${id}`, { headers: auth })).json();
    }
    assert.equal(task.status, 'completed');
    const rec = (await store.getTask(id))!;
    const stored = rec.results[0]!.url!;
    offset = 2 * 3600 * 1000;
    const direct = await fetch(stored);
    assert.equal(direct.status, 403);
    assert.match(await direct.text(), /expired/);
    const before = sim.stats!.retrieves!;
    const file = await fetch(`${gateway.url()}/v1/videos/${id}/content`, { headers: auth });
    assert.equal(file.status, 200);
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(sim.result!(rec.upstreamId!)!));
    assert.equal(sim.stats!.retrieves!, before + 1);
  });
});
