import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeFlatPng } from '../../src/sim/png.js';
import { mappingContext } from '../../src/tasks/asked.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

// A 128×128 PNG (section 8's smallest image) as bare base64: the public route takes it, the vendor wants a data: URI.
const PNG_B64 = makeFlatPng(128, 128).toString('base64');
const betaQuery = (id: string) => `/beta/ent/v2/tasks/${id}/creations`;

describe('video tasks on beta-native (Token auth, four submit kinds, creations query), end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  const vendorTask = (id: string) => h.vendorTask(id, 'beta-native');

  test("unified text: submit → in progress → completed → downloaded bytes equal the vendor's", async () => {
    const sub = await h.post('/v1/video/generations', {
      model: 'beta-q3-pro',
      prompt: 'a paper boat',
      duration: 6,
      seconds: '8',
      metadata: { aspect_ratio: '16:9', resolution: '1080p', seed: 7, style: 'noir' },
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(sub.json.task_id, id);
    assert.equal(sub.json.object, 'video');
    assert.ok(['queued', 'in_progress'].includes(sub.json.status));
    assert.equal(sub.json.progress, 0);
    assert.equal(sub.json.seconds, '6', 'duration wins over seconds');
    const { rec, sim, body } = await vendorTask(id);
    assert.equal(sim.kind, 'text2video');
    assert.deepEqual(mappingContext(rec.context), { kind: 'text2video' });
    assert.equal(body.duration, 6);
    assert.equal(body.aspect_ratio, '16:9');
    assert.equal(body.resolution, '1080p');
    assert.equal(body.seed, 7);
    assert.equal(body.style, undefined, 'unknown metadata keys are not sent');
    assert.equal(body.metadata, undefined);

    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => {
      seen.add(t.status);
      return t.status === 'completed';
    });
    assert.ok(seen.has('queued') || seen.has('in_progress'));
    assert.equal(done.progress, 100);
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);

    const after = (await h.record(id))!;
    assert.deepEqual(
      after.results.map((r) => r.type),
      ['video', 'image'],
      'the video first, then the cover',
    );
    // The vendor's URLs are signed: the record keeps them whole, or downloads would be refused (403).
    for (const r of after.results) assert.match(r.url!, /\?expires=[0-9]+&sig=[0-9a-f]+$/);

    const expected = h.sims['beta-native']!.result!(after.upstreamId!)!;
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200, file.text);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(expected), "the downloaded bytes are the vendor's");
    const part = await h.get(`/v1/videos/${id}/content`, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(expected.subarray(10, 20)));
    const cover = await h.get(`/v1/videos/${id}/content?index=1`);
    assert.equal(cover.status, 200);
    assert.equal(cover.headers.get('content-type'), 'image/png');
    assert.ok(cover.bytes.subarray(1, 4).equals(Buffer.from('PNG')));
  });

  test('beta route: betaq2 defaults are sent; the beta query route follows it to completed creations', async () => {
    const sub = await h.post('/beta/ent/v2/reference2video', {
      model: 'betaq2-pro',
      subjects: [{ id: 'cat', images: ['https://img.example/cat.png'], voice_id: 'v_cat' }],
      prompt: '@cat yawns',
      voice_id: 'v_global',
      payload: 'order-1',
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.task_id as string;
    assert.deepEqual(Object.keys(sub.json).sort(), ['created_at', 'status', 'task_id']);
    assert.equal(sub.json.status, 'processing');
    const { rec, sim, body } = await vendorTask(id);
    assert.equal(sim.kind, 'reference2video');
    assert.deepEqual(mappingContext(rec.context), { kind: 'reference2video' });
    assert.equal(body.duration, 5, 'the betaq2 default duration');
    assert.equal(body.resolution, '720p', 'the betaq2 default resolution');
    assert.equal(body.voice_id, 'v_global', 'the global voice id goes through for betaq2');
    assert.equal(body.payload, 'order-1');
    assert.deepEqual(body.subjects, [{ id: 'cat', images: ['https://img.example/cat.png'], voice_id: 'v_cat' }]);

    const done = await h.waitFor(id, (t) => t.status === 'completed', { path: betaQuery });
    assert.equal(done.task_id, id);
    assert.equal(done.err_code, '');
    assert.deepEqual(
      done.creations.map((c: { type: string; url: string }) => [c.type, c.url]),
      [
        ['video', `${h.url}/v1/videos/${id}/content`],
        ['image', `${h.url}/v1/videos/${id}/content?index=1`],
      ],
    );
    assert.ok(!JSON.stringify(done).includes(rec.upstreamId!), 'the vendor id never reaches the client');
    const file = await h.get(new URL(done.creations[0].url).pathname);
    assert.equal(file.status, 200);
    assert.ok(file.bytes.equals(h.sims['beta-native']!.result!(rec.upstreamId!)!));
  });

  test('beta route: betaq3-pro drops the global voice_id and gets no betaq2 defaults', async () => {
    const sub = await h.post('/beta/ent/v2/reference2video', {
      model: 'betaq3-pro',
      subjects: [{ id: 'a', images: ['https://img.example/a.png'], voice_id: 'v_a' }],
      prompt: '@a speaks',
      voice_id: 'v_global',
      audio: true,
    });
    assert.equal(sub.status, 200, sub.text);
    const { body } = await vendorTask(sub.json.task_id);
    assert.equal(body.voice_id, undefined);
    assert.equal(body.duration, undefined);
    assert.equal(body.resolution, undefined);
    assert.equal(body.audio, true);
    assert.deepEqual(body.subjects, [{ id: 'a', images: ['https://img.example/a.png'], voice_id: 'v_a' }]);
  });

  test("unified image, first and last frames, and reference images pick the vendor's submit kind", async () => {
    const cases: [Record<string, unknown>, string, unknown][] = [
      [{ image: PNG_B64, seconds: '4' }, 'img2video', { images: [`data:image/png;base64,${PNG_B64}`] }],
      [
        { image: 'https://img.example/a.png', metadata: { last_frame_url: 'https://img.example/b.png' } },
        'start-end2video',
        { images: ['https://img.example/a.png', 'https://img.example/b.png'] },
      ],
      [
        { images: ['https://img.example/1.png', 'https://img.example/2.png'] },
        'reference2video',
        { images: ['https://img.example/1.png', 'https://img.example/2.png'], subjects: undefined },
      ],
      [{ input_reference: 'https://img.example/first.png' }, 'img2video', { images: ['https://img.example/first.png'] }],
    ];
    for (const [extra, kind, sent] of cases) {
      const sub = await h.post('/v1/videos', { model: 'beta-q3-turbo', prompt: 'move', ...extra });
      assert.equal(sub.status, 200, sub.text);
      const { rec, sim, body } = await vendorTask(sub.json.id);
      assert.equal(sim.kind, kind, JSON.stringify(extra));
      assert.deepEqual(mappingContext(rec.context), { kind });
      for (const [k, v] of Object.entries(sent as Record<string, unknown>)) assert.deepEqual(body[k], v, `${kind}: ${k}`);
      if (extra.seconds) assert.equal(body.duration, 4, 'seconds "4" is the integer duration 4');
      const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed');
      assert.equal(done.video_url, `${h.url}/v1/videos/${sub.json.id}/content`);
    }
  });

  test('a negative seed reaches the vendor as it is, on the beta route and in unified metadata (interface 2.5: only 0 means random)', async () => {
    const ref = await h.post('/beta/ent/v2/reference2video', {
      model: 'betaq2-pro',
      subjects: [{ id: 'cat', images: ['https://img.example/cat.png'] }],
      prompt: '@cat chases a ribbon',
      seed: -7,
    });
    assert.equal(ref.status, 200, ref.text);
    assert.equal((await vendorTask(ref.json.task_id)).body.seed, -7);
    const unified = await h.post('/v1/videos', { model: 'beta-q3-pro', prompt: 'x', images: ['https://img.example/1.png'], metadata: { seed: -3 } });
    assert.equal(unified.status, 200, unified.text);
    assert.equal((await vendorTask(unified.json.id)).body.seed, -3);
    // Not an integer: the route's schema refuses it before the vendor is asked.
    const half = await h.post('/beta/ent/v2/reference2video', { model: 'betaq1', subjects: [{ id: 'x', images: ['https://img.example/x.png'] }], seed: 1.5 });
    assert.equal(half.status, 400, half.text);
    assert.equal(half.json.error.code, 'invalid_request');
    assert.match(half.json.error.message, /seed/);
  });

  test('a task the vendor fails ends failed with its reason, and the price is refunded', async () => {
    const key = await h.createKey(5);
    const sub = await h.post(
      '/beta/ent/v2/reference2video',
      {
        model: 'betaq1',
        subjects: [{ id: 'x', images: ['https://img.example/x.png'] }],
        prompt: 'doomed [sim:fail=content_policy]',
      },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.task_id;
    // The task belongs to the quota key: poll with it.
    const last = await h.waitFor(id, (t) => t.status === 'failed', { path: betaQuery, key });
    assert.equal(last.err_code, 'content_policy');
    assert.deepEqual(last.creations, []);
    const video = await h.get(`/v1/videos/${id}`, { authorization: `Bearer ${key}` });
    assert.deepEqual(video.json.error, { code: 'content_policy', message: 'the task failed at the vendor (content_policy)' });
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the failed task was refunded');
    const dl = await h.get(`/v1/videos/${id}/content`, { authorization: `Bearer ${key}` });
    assert.equal(dl.status, 409);
    assert.equal(dl.json.error.code, 'task_not_ready');
  });

  test('an odd vendor status keeps the task pending instead of failing it', async () => {
    const sub = await h.post('/v1/videos', { model: 'beta-q3-pro', prompt: 'odd [sim:status=paused]' });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    const { sim } = await vendorTask(id);
    // Until the gateway has seen the odd word a few times, well past the simulator's finish time.
    let rec = await h.record(id);
    for (let i = 0; i < 200 && !(rec?.vendorStatus === 'paused' && sim.polls >= 3); i++) {
      await new Promise((r) => setTimeout(r, 25));
      rec = await h.record(id);
    }
    assert.equal(rec!.vendorStatus, 'paused');
    assert.ok(sim.polls >= 3, 'the vendor was asked several times');
    const r = await h.get(`/v1/videos/${id}`);
    assert.equal(r.status, 200);
    assert.ok(['queued', 'in_progress'].includes(r.json.status), `still pending, not ${r.json.status}`);
    assert.equal(r.json.error, null);
  });

  test('vendor refusals of the submission map to the right codes, and nothing is charged', async () => {
    // Enough for the dearest refused submission (12 s of betaq1 holds 2 units, docs/tokens-and-quota.md, "Quota, prices and the ledger").
    const key = await h.createKey(2);
    const auth = { authorization: `Bearer ${key}` };
    // 400: the vendor allows 1 to 10 seconds; the public schema lets betaq1 ask for 12.
    const bad = await h.post(
      '/beta/ent/v2/reference2video',
      { model: 'betaq1', subjects: [{ id: 'x', images: ['https://img.example/x.png'] }], duration: 12 },
      auth,
    );
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.code, 'invalid_request');
    assert.equal(bad.json.error.message, 'duration must be an integer from 1 to 10');
    // Four reference images: refused by the beta-prefixed family's limit before the vendor is asked.
    const four = await h.post(
      '/v1/videos',
      {
        model: 'beta-q3-pro',
        prompt: 'x',
        images: ['https://a.example/1.png', 'https://a.example/2.png', 'https://a.example/3.png', 'https://a.example/4.png'],
      },
      auth,
    );
    assert.equal(four.status, 400, four.text);
    assert.equal(four.json.error.message, 'images must have at most 3 items (a limit of the beta-prefixed family)');
    const cases: [string, number, string][] = [
      ['429', 429, 'too_many_requests'],
      ['503', 503, 'upstream_unavailable'],
      ['500', 502, 'bad_response'],
      ['401', 502, 'bad_response'],
      ['reset', 502, 'bad_response'],
      ['malformed-json', 502, 'bad_response'],
    ];
    for (const [fault, status, code] of cases) {
      const r = await h.post('/v1/video/generations', { model: 'beta-q3-turbo', prompt: `x [sim:fault=${fault}]` }, auth);
      assert.equal(r.status, status, `${fault}: ${r.text}`);
      assert.equal(status === 429 ? r.json.code : r.json.error.code, code, fault);
      assert.ok(!r.text.includes('err_code'), 'the vendor body does not reach the client');
    }
    const ok = await h.post('/v1/videos', { model: 'beta-q3-turbo', prompt: 'x' }, auth);
    assert.equal(ok.status, 200, 'the refused submissions did not use the quota');
    assert.equal((await h.store.listTokens()).find((t) => t.quota === 2)!.used, 1, 'only the accepted submission is charged');
  });

  test('a task the vendor no longer knows ends failed (task_lost) and is refunded', async () => {
    const key = await h.createKey(3);
    const auth = { authorization: `Bearer ${key}` };
    const sub = await h.post('/v1/videos', { model: 'beta-q3-pro', prompt: 'forgotten [sim:never]' }, auth);
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    // Rewrite the vendor id to one the vendor never issued: its query answers 404 TaskNotFound.
    // Compare-and-set against the poller's own writes, so read and retry.
    let moved = null;
    for (let i = 0; i < 20 && !moved; i++) {
      const rec = (await h.record(id))!;
      moved = await h.store.updateTask(id, rec.version, { upstreamId: 'no-such-task' });
    }
    assert.ok(moved, 'the vendor id was rewritten');
    const last = await h.waitFor(id, (t) => t.status === 'failed', { key });
    assert.equal(last.error.code, 'task_lost');
    const token = (await h.store.listTokens()).find((t) => t.quota === 3)!;
    assert.equal(token.used, 0, 'the lost task was refunded');
  });
});
