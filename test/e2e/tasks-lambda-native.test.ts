import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mappingContext } from '../../src/tasks/asked.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

// A 1×1 PNG: the simulator checks raw base64, so this also proves the data: prefix is stripped.
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('video tasks on lambda-native (JWT auth, per-kind query), end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  const vendorTask = (id: string) => h.vendorTask(id, 'lambda-native');

  test("text: submit → in progress → completed → downloaded bytes equal the vendor's", async () => {
    const sub = await h.post('/v1/video/generations', { model: 'lambda-3.0', prompt: 'a paper boat', seconds: '8', duration: 5 });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(sub.json.task_id, id);
    assert.equal(sub.json.model, 'lambda-3.0');
    assert.ok(['queued', 'in_progress'].includes(sub.json.status));
    assert.equal(sub.json.seconds, '10', 'seconds 8 wins over duration and rounds to the vendor\'s "10"');
    const { rec, sim } = await vendorTask(id);
    assert.equal(sim.kind, 'text2video');
    assert.deepEqual(mappingContext(rec.context), { kind: 'text2video' });
    const body = sim.body as Record<string, unknown>;
    assert.equal(body.external_task_id, id);
    assert.equal(body.duration, '10');
    assert.equal(body.model_name, 'lambda-3.0');
    assert.equal(body.sound, undefined, 'no audio asked, no sound sent');

    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => {
      seen.add(t.status);
      return t.status === 'completed';
    });
    assert.ok(seen.has('in_progress') || seen.has('queued'));
    assert.equal(done.progress, 100);
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const expected = h.sims['lambda-native']!.result!(rec.upstreamId!)!;
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(expected), "the downloaded bytes are the vendor's");
    const part = await h.get(`/v1/videos/${id}/content`, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(expected.subarray(10, 20)));
    const answer = JSON.stringify((await h.get(`/v1/videos/${id}`)).json);
    assert.ok(!answer.includes(rec.upstreamId!), 'the vendor id never reaches the client');
  });

  test('image: data URIs go as raw base64 to image2video, and the query follows that kind to completion', async () => {
    const sub = await h.post('/v1/videos', {
      model: 'lambda-3.0-Omni',
      prompt: 'the boat sails away',
      image: `data:image/png;base64,${PNG_B64}`,
      seconds: 4,
      size: '16:9',
      metadata: { last_frame_url: `data:image/png;base64,${PNG_B64}`, mode: 'pro', output_config: { audio_generation: true } },
    });
    assert.equal(sub.status, 200, sub.text);
    const { rec, sim } = await vendorTask(sub.json.id);
    assert.equal(sim.kind, 'image2video');
    assert.deepEqual(mappingContext(rec.context), { kind: 'image2video' });
    const body = sim.body as Record<string, unknown>;
    assert.equal(body.image, PNG_B64);
    assert.equal(body.image_tail, PNG_B64);
    assert.equal(body.duration, '5');
    assert.equal(body.mode, 'pro');
    // The audio toggle is the vendor's `sound`; image2video has no aspect_ratio (the video follows the image).
    assert.equal(body.sound, 'on');
    assert.equal(body.output_config, undefined);
    assert.equal(body.aspect_ratio, undefined);
    // A query on the wrong kind would be a vendor 404 and end the task as task_lost.
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed' || t.status === 'failed');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.seconds, '5');
    const file = await h.get(`/v1/videos/${sub.json.id}/content`);
    assert.ok(file.bytes.equals(h.sims['lambda-native']!.result!(rec.upstreamId!)!));
  });

  test('a 12 MB image data URI is stripped to raw base64 too, not a mapping time-out (500)', async () => {
    // jsonata's own $substring on the 16 MB string ran out of the mapping time limit (found by npm run fuzz).
    const big = Buffer.concat([Buffer.from(PNG_B64, 'base64'), Buffer.alloc(12 * 1024 * 1024)]).toString('base64');
    const sub = await h.post('/v1/videos', { model: 'lambda-3.0', prompt: 'a big first frame', image: `data:image/png;base64,${big}` });
    assert.equal(sub.status, 200, sub.text.slice(0, 300));
    const { sim } = await vendorTask(sub.json.id);
    assert.equal((sim.body as Record<string, unknown>).image, big);
  });

  test('a task the vendor fails ends failed with its reason, and the price is refunded', async () => {
    const key = await h.createKey(5);
    const sub = await h.post('/v1/video/generations', { model: 'lambda-3.0', prompt: 'doomed [sim:fail=content_policy]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id;
    const last = await h.waitFor(id, (t) => t.status === 'failed', { key });
    assert.equal(last.error.code, 'generation_failed');
    assert.equal(last.error.message, 'content_policy', 'task_status_msg is the message');
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the failed task was refunded');
  });

  test('an unknown vendor status keeps the task pending instead of failing it', async () => {
    const sub = await h.post('/v1/video/generations', { model: 'lambda-3.0', prompt: 'odd [sim:status=paused]' });
    assert.equal(sub.status, 200, sub.text);
    const { sim } = await vendorTask(sub.json.id);
    // Let the vendor be asked several times (poller and query route); no timing is asserted.
    for (let i = 0; i < 200 && sim.polls < 3; i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(sim.polls >= 3, 'the vendor was asked about the task several times');
    const r = await h.get(`/v1/videos/${sub.json.id}`);
    assert.equal(r.status, 200);
    assert.ok(['queued', 'in_progress'].includes(r.json.status), JSON.stringify(r.json));
    assert.equal(r.json.error, null);
    assert.equal((await h.record(sub.json.id))!.vendorStatus, 'paused');
  });

  test('vendor refusals of the submission are mapped, and nothing is charged or kept', async () => {
    const key = await h.createKey(1);
    const auth = { authorization: `Bearer ${key}` };
    const cases: [unknown, number, string, string?][] = [
      [{ model: 'lambda-3.0', prompt: 'x', metadata: { cfg_scale: 5 } }, 400, 'invalid_request', 'cfg_scale must be a number from 0 to 1'],
      [{ model: 'lambda-3.0', prompt: 'x', metadata: { aspect_ratio: '4:3' } }, 400, 'invalid_request', 'aspect_ratio must be 16:9, 9:16 or 1:1'],
      [{ model: 'lambda-3.0', prompt: 'x [sim:fault=401]' }, 502, 'bad_response', 'the upstream refused the channel credentials'],
      [{ model: 'lambda-3.0', prompt: 'x [sim:fault=429]' }, 429, 'too_many_requests'],
      [{ model: 'lambda-3.0', prompt: 'x [sim:fault=500]' }, 502, 'bad_response'],
      [{ model: 'lambda-3.0', prompt: 'x [sim:fault=503]' }, 503, 'upstream_unavailable'],
      [{ model: 'lambda-3.0', prompt: 'x [sim:fault=malformed-json]' }, 502, 'bad_response'],
    ];
    for (const [body, status, code, message] of cases) {
      const r = await h.post('/v1/video/generations', body, auth);
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
      // 429 answers shape B ({code, message, data}); the others shape A ({error:{…}}).
      const err = r.json.error ?? r.json;
      assert.equal(err.code, code, r.text);
      if (message) assert.equal(err.message, message);
    }
    const ok = await h.post('/v1/video/generations', { model: 'lambda-3.0', prompt: 'x' }, auth);
    assert.equal(ok.status, 200, 'the refused submissions did not use the quota of 1');
  });
});
