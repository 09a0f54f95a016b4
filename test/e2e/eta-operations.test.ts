import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** Small valid-looking inline images: a PNG, a JPEG and a WebP header in base64. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABh6FO1AAAAABJRU5ErkJggg==';
const JPG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8U';
const WEBP = 'UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAQAcJaQAA3AA/v3AgAA=';

/** The submit body the eta simulator received for one of our tasks (the vendor id is the operation name). */
async function vendorBody(h: TaskHarness, id: string): Promise<any> {
  const rec = await h.record(id);
  const opId = /operations\/([^/]+)$/.exec(rec!.upstreamId!)![1]!;
  return h.sims['eta-operations']!.tasks!.get(opId)!.body;
}

describe('video tasks on eta-operations, end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  test("text-to-video: submit → in progress → completed → downloaded (with the channel key) bytes equal the vendor's", async () => {
    const sub = await h.post('/v1/videos', {
      model: 'eta_3_1',
      prompt: 'a lighthouse at dawn',
      seconds: '5',
      size: '720x1280',
      metadata: { negative_prompt: 'fog', generate_audio: true, style: 'ignored' },
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(sub.json.status, 'queued');
    assert.equal(sub.json.seconds, '6', 'rounded up to a length the vendor makes');
    assert.equal(sub.json.size, '720x1280');
    assert.deepEqual(await vendorBody(h, id), {
      instances: [{ prompt: 'a lighthouse at dawn' }],
      // generate_audio true is what the vendor does anyway: nothing is sent (the Gemini API takes no generateAudio).
      parameters: { aspectRatio: '9:16', durationSeconds: 6, resolution: '720p', negativePrompt: 'fog' },
    });
    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => {
      seen.add(t.status);
      return t.status === 'completed';
    });
    assert.ok(seen.has('queued') || seen.has('in_progress'));
    assert.equal(done.progress, 100);
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const rec = await h.record(id);
    assert.equal(rec!.vendorStatus, 'done');
    assert.match(rec!.upstreamId!, /^models\/eta_3_1\/operations\/[0-9a-f]{24}$/);
    // The vendor's file route is kept as a path on the channel: always signed, never another host.
    assert.match(rec!.results[0]!.url!, /^\/v1beta\/files\/[0-9a-f]{24}:download\?alt=media$/);
    const expected = h.sims['eta-operations']!.result!(rec!.upstreamId!)!;
    assert.ok(expected);
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200, file.text);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(expected), "the downloaded bytes are the vendor's");
    const part = await h.get(`/v1/videos/${id}/content`, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(expected.subarray(10, 20)));
  });

  test('a running operation (done: false) is in_progress; the vendor states no progress, so none is made up', async () => {
    const sub = await h.post('/v1/videos', { model: 'eta_3_1-fast', prompt: 'slow [sim:never]' });
    assert.equal(sub.status, 200, sub.text);
    const running = await h.waitFor(sub.json.id, (t) => t.status === 'in_progress');
    assert.equal(running.progress, 0);
    assert.equal(running.error, null);
    assert.equal((await h.record(sub.json.id))!.vendorStatus, 'running');
  });

  test('first and last frames (data URIs, unified route) and two `images` are accepted by the vendor and complete', async () => {
    const a = await h.post('/v1/video/generations', {
      model: 'eta_3_1',
      prompt: 'the boat sails off',
      image: `data:image/png;base64,${PNG}`,
      metadata: { last_frame_url: `data:image/jpg;base64,${JPG}` },
      size: '1920x1080',
    });
    assert.equal(a.status, 200, a.text);
    const body = await vendorBody(h, a.json.id);
    assert.deepEqual(body.instances[0].image, { bytesBase64Encoded: PNG, mimeType: 'image/png' });
    assert.deepEqual(body.instances[0].lastFrame, { bytesBase64Encoded: JPG, mimeType: 'image/jpeg' });
    assert.deepEqual(body.parameters, { aspectRatio: '16:9', durationSeconds: 8, resolution: '1080p' });
    const b = await h.post('/v1/videos', { model: 'eta_3_1-fast', prompt: 'the boat sails off', images: [WEBP, PNG] });
    assert.equal(b.status, 200, b.text);
    assert.deepEqual((await vendorBody(h, b.json.id)).instances[0].lastFrame, { bytesBase64Encoded: PNG, mimeType: 'image/png' });
    for (const id of [a.json.id, b.json.id]) assert.equal((await h.waitFor(id, (t) => t.status === 'completed' || t.status === 'failed')).status, 'completed');
  });

  test('reference-to-video is steered to landscape and 8 s (the vendor takes nothing else) and completes', async () => {
    const sub = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'the cat walks', input_reference: [PNG, JPG, WEBP], size: '9:16', seconds: '4' });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.json.size, '1280x720');
    assert.equal(sub.json.seconds, '8');
    const body = await vendorBody(h, sub.json.id);
    assert.equal(body.instances[0].referenceImages.length, 3);
    assert.deepEqual(body.instances[0].referenceImages[2], { image: { bytesBase64Encoded: WEBP, mimeType: 'image/webp' }, referenceType: 'ASSET' });
    assert.deepEqual(body.parameters, { aspectRatio: '16:9', durationSeconds: 8, resolution: '720p' });
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed' || t.status === 'failed');
    assert.equal(done.status, 'completed');
    const rec = await h.record(sub.json.id);
    const file = await h.get(`/v1/videos/${sub.json.id}/content`);
    assert.ok(file.bytes.equals(h.sims['eta-operations']!.result!(rec!.upstreamId!)!));
  });

  test("a failed operation ends failed with the vendor's message and is refunded; a filtered one is content_filtered", async () => {
    const key = await h.createKey(5);
    const auth = { authorization: `Bearer ${key}` };
    const failed = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'doomed [sim:fail=render_farm_on_fire]' }, auth);
    const filtered = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'dubious [sim:filtered]' }, auth);
    assert.equal(failed.status, 200, failed.text);
    assert.equal(filtered.status, 200, filtered.text);
    const end = (t: any) => t.status === 'failed' || t.status === 'completed';
    const a = await h.waitFor(failed.json.id, end, { key });
    assert.equal(a.status, 'failed');
    assert.deepEqual(a.error, { code: 'generation_failed', message: 'render_farm_on_fire' });
    const b = await h.waitFor(filtered.json.id, end, { key });
    assert.equal(b.status, 'failed');
    assert.equal(b.error.code, 'content_filtered');
    assert.match(b.error.message, /usage guidelines/);
    assert.equal((await h.record(filtered.json.id))!.vendorStatus, 'filtered');
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'both failed tasks were refunded');
    const dl = await h.get(`/v1/videos/${failed.json.id}/content`, auth);
    assert.equal(dl.status, 409);
    assert.equal(dl.json.error.code, 'task_not_ready');
  });

  test("refusals before the vendor (URLs, limits, modes) and the vendor's own are mapped; nothing is charged", async () => {
    const sim = h.sims['eta-operations']!;
    const key = await h.createKey(1);
    const auth = { authorization: `Bearer ${key}` };
    const before = sim.stats.submits!;
    const local: [unknown, string, RegExp][] = [
      [{ model: 'eta_3_1', prompt: 'x', image: 'https://img.example/cat.png' }, 'image', /expected form/],
      [{ model: 'eta_3_1', prompt: 'x', input_reference: [PNG, PNG, PNG, PNG] }, 'input_reference', /at most 3/],
      [{ model: 'eta_3_1', prompt: 'x', seconds: '10' }, 'seconds', /one of/],
      [{ model: 'eta_3_1', prompt: 'x', size: '1024x1024' }, 'size', /one of/],
      [{ model: 'eta_3_1', prompt: 'x', image: PNG, input_reference: JPG }, '', /mode first_frame_reference is not supported by the eta family/],
      // What the vendor cannot honour is refused, not dropped: it takes no seed, and always makes sound.
      [{ model: 'eta_3_1', prompt: 'x', metadata: { seed: 7 } }, 'metadata.seed', /has no seed/],
      [{ model: 'eta_3_1', prompt: 'x', metadata: { generate_audio: false } }, 'metadata.generate_audio', /always make the video with sound/],
    ];
    for (const [body, param, message] of local) {
      const r = await h.post('/v1/videos', body, auth);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.error.code, 'invalid_request');
      assert.equal(r.json.error.param, param);
      assert.match(r.json.error.message, message);
    }
    assert.equal(sim.stats.submits, before, 'no vendor call for a refusal the family makes');
    const vendor: [string, number, string, RegExp | null][] = [
      ['x [sim:fault=429]', 429, 'too_many_requests', null],
      ['x [sim:fault=500]', 502, 'bad_response', /HTTP 500/],
      ['x [sim:fault=503]', 503, 'upstream_unavailable', null],
      ['x [sim:fault=403]', 502, 'bad_response', /credentials/],
      ['x [sim:fault=malformed-json]', 502, 'bad_response', null],
    ];
    for (const [prompt, status, code, message] of vendor) {
      const r = await h.post('/v1/video/generations', { model: 'eta_3_1', prompt }, auth);
      assert.equal(r.status, status, `${prompt}: ${r.text}`);
      const error = r.json.error ?? r.json; // 429 answers shape B
      assert.equal(error.code, code, r.text);
      if (message) assert.match(error.message, message);
      assert.ok(!r.text.includes('operations/'), 'no vendor ids leak');
    }
    const ok = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'x' }, auth);
    assert.equal(ok.status, 200, 'the refused submissions did not use the quota of 1');
  });

  test('poll failures do not end a task: it completes once the vendor answers again', async () => {
    const sim = h.sims['eta-operations']!;
    const sub = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'bumpy [sim:finish=200]' });
    assert.equal(sub.status, 200, sub.text);
    sim.faults.push('500', 'malformed-json');
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed' || t.status === 'failed');
    assert.equal(done.status, 'completed');
  });
});
