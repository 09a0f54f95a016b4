import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

// A 1×1 PNG as raw base64: the lambda simulator refuses data URIs, so this proves the prefix is removed.
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const url = (name: string) => `https://img.example.test/${name}.png`;

/**
 * Families of the issue #3 profiles (routes.d/core-families.yaml) and the lambda vendor-format routes
 * (routes.d/lambda.yaml), end to end over the real simulators: refused modes and limits never reach
 * the vendor and charge nothing, a discouraged mode is served with a Warning, and a task submitted in
 * the lambda vendor's own format lives through to a download.
 */
describe('families of lambda, mu video, beta-prefixed and the pattern-named groups, end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  test('a mode a family does not take is invalid_request naming mode and family, with no vendor call and no charge', async () => {
    const key = await h.createKey(1);
    const auth = { authorization: `Bearer ${key}` };
    const cases: [string, string, unknown, string, string][] = [
      ['mu-dashscope', '/v1/video/generations', { model: 'mu2.6-t2v:1280*720', prompt: 'x', image: url('a') }, 'first_frame', 'mu video t2v'],
      ['mu-dashscope', '/v1/videos', { model: 'mu2.6-i2v:1920*1080', prompt: 'x' }, 'text', 'mu video i2v'],
      ['mu-dashscope', '/v1/videos', { model: 'mu2.6-i2v:1280*720', prompt: 'x', images: [url('a'), url('b')] }, 'reference', 'mu video i2v'],
      ['lambda-native', '/v1/video/generations', { model: 'lambda-3.0', prompt: 'x', metadata: { last_frame_url: url('b') } }, 'last_frame', 'lambda'],
      ['beta-native', '/v1/videos', { model: 'beta-q3-pro', prompt: 'x', metadata: { last_frame_url: url('b') } }, 'last_frame', 'beta-prefixed'],
    ];
    for (const [profile, path, body, mode, family] of cases) {
      const sim = h.sims[profile]!;
      const before = sim.stats.requests;
      const r = await h.post(path, body, auth);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.json.error.code, 'invalid_request');
      assert.match(r.json.error.message, new RegExp(`^mode ${mode} is not supported by the ${family} family`), r.text);
      assert.equal(sim.stats.requests, before, `${profile} was not called for ${JSON.stringify(body)}`);
    }
    const ok = await h.post('/v1/video/generations', { model: 'mu2.6-t2v:1280*720', prompt: 'x' }, auth);
    assert.equal(ok.status, 200, `the refusals used none of the quota of 1: ${ok.text}`);
  });

  test('a request outside a family limit is invalid_request naming the field and the family, with no vendor call', async () => {
    const sim = h.sims['beta-native']!;
    const before = sim.stats.requests;
    for (const body of [
      { model: 'beta-q3-pro', prompt: 'x', images: [url('1'), url('2'), url('3'), url('4')] },
      { model: 'beta-q3-turbo', prompt: 'x', input_reference: [url('1'), url('2'), url('3'), url('4')] },
    ]) {
      const r = await h.post('/v1/videos', body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.error.code, 'invalid_request');
      assert.match(r.json.error.message, /must have at most 3 items \(a limit of the beta-prefixed/, r.text);
      assert.equal(r.json.error.param, 'images' in body ? 'images' : 'input_reference');
    }
    assert.equal(sim.stats.requests, before, 'the vendor was not called');
    const edge = await h.post('/v1/videos', { model: 'beta-q3-pro', prompt: 'x', images: [url('1'), url('2'), url('3')] });
    assert.equal(edge.status, 200, `three images are at the edge of the limit: ${edge.text}`);
    assert.ok(sim.stats.requests > before, 'the vendor got the request at the edge');
  });

  test('a discouraged mode (reference on lambda) is served with a Warning header and completes', async () => {
    const sub = await h.post('/v1/videos', { model: 'lambda-3.0', prompt: 'two boats', images: [url('a'), url('b')] });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.headers.get('warning'), '299 gateway "mode reference is not recommended for the lambda family"');
    const rec = (await h.record(sub.json.id))!;
    const vendor = h.sims['lambda-native']!.tasks!.get(rec.upstreamId!)!;
    assert.equal(vendor.kind, 'image2video');
    assert.equal((vendor.body as Record<string, unknown>).image, url('a'), 'the first picture is the frame');
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed' || t.status === 'failed');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    // A supported mode carries no Warning.
    const plain = await h.post('/v1/videos', { model: 'lambda-3.0', prompt: 'one boat', image: url('a') });
    assert.equal(plain.status, 200, plain.text);
    assert.equal(plain.headers.get('warning'), null);
  });

  test('pattern-named groups take every mode: metadata.file_infos and first + last frames reach the upstream', async () => {
    const sim = h.sims['unified-passthrough']!;
    const before = sim.stats.requests;
    const files = [{ file_id: 'f-1', type: 'image', url: url('face') }];
    const a = await h.post('/v1/videos', { model: 'nu-1', prompt: 'the presenter reads', metadata: { file_infos: files } });
    assert.equal(a.status, 200, a.text);
    assert.equal(a.headers.get('warning'), null);
    const b = await h.post('/v1/video/generations', { model: 'lambda-4-preview', prompt: 'x', image: url('a'), metadata: { last_frame_url: url('b') } });
    assert.equal(b.status, 200, `a lambda-* name no family names exactly is a pattern-named group: ${b.text}`);
    assert.ok(sim.stats.requests >= before + 2, 'both went to the upstream');
  });

  test("lambda vendor format: submit → query envelope with our id → succeed → downloaded bytes equal the vendor's", async () => {
    const sub = await h.post('/lambda/v1/videos/text2video', {
      model_name: 'lambda-3.0',
      prompt: 'a paper boat',
      duration: '10',
      mode: 'pro',
      output_config: { audio_generation: true },
      callback_url: 'https://client.example.test/hook',
    });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.json.code, 0);
    const id = sub.json.data.task_id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/, "our id, never the vendor's");
    assert.equal(sub.json.data.task_status, 'submitted');
    const rec = (await h.record(id))!;
    assert.ok(rec.upstreamId && rec.upstreamId !== id);
    const sim = h.sims['lambda-native']!;
    const vendor = sim.tasks!.get(rec.upstreamId)!;
    assert.equal(vendor.kind, 'text2video');
    const body = vendor.body as Record<string, unknown>;
    assert.equal(body.duration, '10');
    assert.equal(body.mode, 'pro');
    assert.equal(body.sound, 'on', "output_config.audio_generation is the vendor's sound");
    assert.equal(body.output_config, undefined, 'the vendor has no output_config');
    assert.equal(body.external_task_id, id);
    assert.equal(body.callback_url, undefined, "the gateway polls; the client's callback is not forwarded");

    const words = new Set<string>();
    const done = await h.waitFor(
      id,
      (t) => {
        words.add(t.data.task_status);
        return t.data.task_status === 'succeed' || t.data.task_status === 'failed';
      },
      { path: (x) => `/lambda/v1/videos/text2video/${x}` },
    );
    assert.equal(done.code, 0);
    assert.equal(done.data.task_status, 'succeed', JSON.stringify(done));
    assert.ok(words.has('submitted') || words.has('processing'));
    const video = done.data.task_result.videos[0];
    assert.equal(video.url, `${h.url}/v1/videos/${id}/content`);
    assert.equal(video.duration, '10');
    assert.ok(!JSON.stringify(done).includes(rec.upstreamId), 'the vendor id never reaches the client');
    const file = await h.get(new URL(video.url).pathname);
    assert.equal(file.status, 200);
    assert.ok(file.bytes.equals(sim.result!(rec.upstreamId)!), "the downloaded bytes are the vendor's");
  });

  test('lambda vendor format: image2video with a data URI goes as raw base64, and a vendor failure reads as failed', async () => {
    const sub = await h.post('/lambda/v1/videos/image2video', {
      model_name: 'lambda-3.0-Omni',
      prompt: 'doomed [sim:fail=content_policy]',
      image: `data:image/png;base64,${PNG_B64}`,
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.data.task_id as string;
    const rec = (await h.record(id))!;
    const vendor = h.sims['lambda-native']!.tasks!.get(rec.upstreamId!)!;
    assert.equal(vendor.kind, 'image2video');
    assert.equal((vendor.body as Record<string, unknown>).image, PNG_B64);
    const last = await h.waitFor(id, (t) => t.data.task_status === 'failed' || t.data.task_status === 'succeed', {
      path: (x) => `/lambda/v1/videos/image2video/${x}`,
    });
    assert.equal(last.data.task_status, 'failed', JSON.stringify(last));
    assert.equal(last.data.task_status_msg, 'content_policy');
    assert.equal(last.data.task_result, undefined);
  });
  test("remix needs the caller's own completed video of a model the remix routes take", async () => {
    const mu = await h.post('/v1/videos', { model: 'mu2.6-t2v:1280*720', prompt: 'a harbour' });
    assert.equal(mu.status, 200, mu.text);
    const early = await h.post(`/v1/videos/${mu.json.id}/remix`, { prompt: 'at night' });
    assert.equal(early.status, 409, early.text);
    assert.equal(early.json.error.code, 'task_not_ready');
    await h.waitFor(mu.json.id, (t) => t.status === 'completed');
    const before = h.sims['mu-dashscope']!.stats.requests;
    const wrong = await h.post('/v1/video/remix', { video_id: mu.json.id, prompt: 'at night' });
    assert.equal(wrong.status, 400, wrong.text);
    assert.equal(wrong.json.error.code, 'invalid_request');
    assert.equal(wrong.json.error.param, 'video_id');
    assert.match(wrong.json.error.message, /mu2\.6-t2v:1280\*720 video, which this route cannot work on/);
    const other = await h.createKey();
    const foreign = await h.post(`/v1/videos/${mu.json.id}/remix`, { prompt: 'at night' }, { authorization: `Bearer ${other}` });
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(foreign.json.error.code, 'task_not_found');
    assert.equal(h.sims['mu-dashscope']!.stats.requests, before, 'no vendor was asked');
  });
});
