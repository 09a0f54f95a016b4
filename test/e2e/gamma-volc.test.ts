import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { vendorUrlBehind } from '../helpers/links.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { until } from '../helpers/until.js';

/** The vendor's task id inside one of its result URLs (`…/files/<id>-<i>.png` or `…/files/<id>.mp4`). */
const vendorIdOf = (url: string) => /\/files\/([0-9a-f]+)(?:-\d+\.png|\.mp4)$/.exec(url)![1]!;

/** Width and height of a PNG from its IHDR chunk. */
const pngSize = (b: Buffer) => [b.readUInt32BE(16), b.readUInt32BE(20)];

/** The submit body the gamma simulator received for a vendor task id. */
const vendorRequest = (h: TaskHarness, id: string) => (h.sims['gamma-volc']!.tasks!.get(id)!.body as { request: any }).request;

const SUBMIT = '/gamma?Action=CVSync2AsyncSubmitTask&Version=2022-08-31';
const RESULT = '/gamma?Action=CVSync2AsyncGetResult&Version=2022-08-31';

/** Like h.waitFor, on the official POST query: asks until the task is done; each answer must be a pending or done status. */
function resultWhenDone(h: TaskHarness, asked: Record<string, unknown>): Promise<any> {
  return until(`GetResult done for ${JSON.stringify(asked)}`, async () => {
    const r = await h.post(RESULT, asked);
    assert.equal(r.status, 200, r.text);
    assert.ok(['in_queue', 'generating', 'done'].includes(r.json.data.status), r.text);
    return r.json.data.status === 'done' && r.json;
  });
}

describe('gamma-volc end to end (signed, asynchronous images and videos)', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  test('image, url: a synchronous answer over the vendor task; ratio and resolution pick the size; the URL serves the vendor bytes', async () => {
    const res = await h.post('/v1/images/generations', {
      model: 'gamma-4.5',
      prompt: 'a red kite',
      ratio: '16:9',
      resolution: '1k',
      image: ['https://example.com/a.png'],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.json.created, 'number');
    assert.equal(res.json.data.length, 1);
    const url = res.json.data[0].url as string;
    assert.ok(url.startsWith(`${h.url}/v1/links/`), `a gateway link, not the vendor's URL: ${url}`);
    const id = vendorIdOf(await vendorUrlBehind(h.store, url));
    const sent = vendorRequest(h, id);
    assert.equal(sent.req_key, 'gamma_t2i_v45');
    assert.deepEqual([sent.width, sent.height], [1280, 720]);
    assert.deepEqual(sent.image_urls, ['https://example.com/a.png']);
    const file = await fetch(url);
    const bytes = Buffer.from(await file.arrayBuffer());
    assert.ok(bytes.equals(h.sims['gamma-volc']!.result!(id, 0)!), "the URL serves the vendor's image");
  });

  test('image, b64_json: every image the vendor made comes back as base64 (default 2048x2048), one vendor call per look', async () => {
    const stats = h.sims['gamma-volc']!.stats!;
    const queriesBefore = stats.queries!;
    const res = await h.post('/v1/images/generations', { model: 'gamma-4.0', prompt: 'two kites [sim:images=2]', response_format: 'b64_json' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.length, 2);
    // The await looks once a second and the simulator finishes in 300 ms: one look, one GetResult (return_url false).
    assert.equal(stats.queries! - queriesBefore, 1, 'no second lookup for the bytes');
    for (const item of res.json.data) {
      assert.deepEqual(Object.keys(item), ['b64_json']);
      assert.deepEqual(pngSize(Buffer.from(item.b64_json, 'base64')), [128, 128], 'the simulator draws 1/16 of 2048x2048');
    }
    assert.notEqual(res.json.data[0].b64_json, res.json.data[1].b64_json);
  });

  test('image edit: uploaded files go as raw base64; a size W*H is sent as width and height', async () => {
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a2a1f1c60000000049454e44ae426082',
      'hex',
    );
    const form = new FormData();
    form.set('model', 'gamma-4.5');
    form.set('prompt', 'make it blue');
    form.set('size', '1024*768');
    form.append('image', new Blob([png], { type: 'image/png' }), 'a.png');
    const res = await fetch(`${h.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${h.key}` }, body: form });
    const json = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(json));
    const id = vendorIdOf(await vendorUrlBehind(h.store, json.data[0].url));
    const sent = vendorRequest(h, id);
    assert.deepEqual(sent.binary_data_base64, [png.toString('base64')]);
    assert.deepEqual([sent.width, sent.height], [1024, 768]);
  });

  test('image refusals: input refused (50411) → 400, output refused (50511) → 502 naming it, 429, unsupported ratio before any call', async () => {
    const refused = await h.post('/v1/images/generations', { model: 'gamma-4.5', prompt: 'x [sim:refuse-input]' });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.json.error.code, 'invalid_request');
    assert.match(refused.json.error.message, /50411/);
    const failed = await h.post('/v1/images/generations', { model: 'gamma-4.5', prompt: 'x [sim:fail]' });
    assert.equal(failed.status, 502, failed.text);
    assert.equal(failed.json.error.code, 'bad_response');
    assert.match(failed.json.error.message, /content check refused the generated output \(50511/);
    const busy = await h.post('/v1/images/generations', { model: 'gamma-4.5', prompt: 'x [sim:fault=429]' });
    assert.equal(busy.status, 429, busy.text);
    assert.equal(busy.json.code, 'too_many_requests');
    const before = h.sims['gamma-volc']!.stats!.submits;
    const ratio = await h.post('/v1/images/generations', { model: 'gamma-4.5', prompt: 'x', ratio: '5:4' });
    assert.equal(ratio.status, 400, ratio.text);
    assert.match(ratio.json.error.message, /ratio must be one of/);
    assert.equal(h.sims['gamma-volc']!.stats!.submits, before, 'no vendor call');
  });

  test("video: submit → in progress → completed → downloaded bytes equal the vendor's; 10 s is 241 frames, 1280x720 is 16:9", async () => {
    const sub = await h.post('/v1/videos', {
      model: 'gamma-video-3.0',
      prompt: 'a paper boat',
      seconds: '10',
      size: '1280x720',
      input_reference: 'https://example.com/first.png',
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.equal(sub.json.seconds, '10');
    assert.equal(sub.json.size, '16:9');
    const rec = await h.record(id);
    const sent = vendorRequest(h, rec!.upstreamId!);
    assert.deepEqual(sent, { req_key: 'gamma_v30', prompt: 'a paper boat', image_urls: ['https://example.com/first.png'], aspect_ratio: '16:9', frames: 241 });
    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => {
      seen.add(t.status);
      return t.status === 'completed';
    });
    assert.ok(seen.has('queued') || seen.has('in_progress'));
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(h.sims['gamma-volc']!.result!(rec!.upstreamId!)!));
  });

  test('video reference mode (mode "reference", unified create route) and a failed task refunded', async () => {
    const ref = await h.post('/v1/video/create', {
      model: 'gamma-video-2.0',
      prompt: 'the cat',
      mode: 'reference',
      images: ['https://example.com/1.png', 'https://example.com/2.png'],
      aspect_ratio: '9:16',
    });
    assert.equal(ref.status, 200, ref.text);
    const sent = vendorRequest(h, (await h.record(ref.json.id))!.upstreamId!);
    assert.equal(sent.mode, 'reference');
    assert.equal(sent.frames, 121);
    const key = await h.createKey(5);
    const sub = await h.post('/v1/video/generations', { model: 'gamma-video-3.0', prompt: 'doomed [sim:fail=50512]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const last = await h.waitFor(sub.json.id, (t) => t.status === 'failed' || t.status === 'completed', { key });
    assert.equal(last.status, 'failed');
    assert.equal(last.error.code, 'output_refused');
    assert.match(last.error.message, /50512 Post Text Risk Not Pass/);
    assert.equal((await h.store.listTokens()).find((t) => t.quota === 5)!.used, 0, 'refunded');
  });

  test('official routes: submit in the vendor format, GetResult with our id (a string), download through the gateway', async () => {
    const sub = await h.post(SUBMIT, { req_key: 'gamma_t2i_v45', prompt: 'official [sim:images=2]', width: 1024, height: 1024 });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.json.code, 10000);
    const id = sub.json.data.task_id as string;
    assert.match(id, /^task_/);
    const rec = await h.record(id);
    assert.equal(h.sims['gamma-volc']!.tasks!.get(rec!.upstreamId!)!.model, 'gamma_t2i_v45');
    const answer = await resultWhenDone(h, { req_key: 'gamma_t2i_v45', task_id: id, req_json: '{"return_url":true}' });
    assert.equal(answer.code, 10000);
    assert.equal(answer.message, 'Success');
    assert.deepEqual(answer.data.image_urls, [`${h.url}/gamma/content/${id}`, `${h.url}/gamma/content/${id}?index=1`]);
    assert.equal(answer.data.binary_data_base64, null);
    const second = await h.get(`/gamma/content/${id}?index=1`);
    assert.equal(second.status, 200);
    assert.ok(second.bytes.equals(h.sims['gamma-volc']!.result!(rec!.upstreamId!, 1)!));
    // return_url false (the vendor's default, bytes): the same links, and a message saying so.
    const noUrl = await h.post(RESULT, { req_key: 'gamma_t2i_v45', task_id: id, req_json: '{"return_url":false}' });
    assert.equal(noUrl.status, 200, noUrl.text);
    assert.deepEqual(noUrl.json.data.image_urls, answer.data.image_urls);
    assert.equal(noUrl.json.data.binary_data_base64, null);
    assert.match(noUrl.json.message, /keeps links, not bytes/);
    // Another req_key: not_found, as at the vendor.
    const otherKey = await h.post(RESULT, { req_key: 'gamma_t2i_v40', task_id: id });
    assert.equal(otherKey.status, 200, otherKey.text);
    assert.equal(otherKey.json.data.status, 'not_found');
    // An unknown id: the engine's 404 for a string, the vendor envelope's not_found for a one-id array.
    const unknown = await h.post(RESULT, { req_key: 'gamma_t2i_v45', task_id: 'task_000000000000000000000000' });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.json.error.code, 'task_not_found');
    const unknownArray = await h.post(RESULT, { req_key: 'gamma_t2i_v45', task_id: ['task_000000000000000000000000'] });
    assert.equal(unknownArray.status, 200, unknownArray.text);
    assert.equal(unknownArray.json.data.status, 'not_found');
  });

  test("official routes take the interface's names (4.5): req_key gamma-4.5 / gamma-4.0 reach the vendor as its own keys, and GetResult answers under the name submitted", async () => {
    for (const [name, vendorKey] of [
      ['gamma-4.5', 'gamma_t2i_v45'],
      ['gamma-4.0', 'gamma_t2i_v40'],
    ] as const) {
      const sub = await h.post(SUBMIT, { req_key: name, prompt: `official ${name}`, image_urls: ['https://example.com/a.png'], width: 1024, height: 1024 });
      assert.equal(sub.status, 200, sub.text);
      assert.equal(sub.json.code, 10000);
      const id = sub.json.data.task_id as string;
      const upstreamId = (await h.record(id))!.upstreamId!;
      assert.deepEqual(vendorRequest(h, upstreamId), {
        req_key: vendorKey,
        prompt: `official ${name}`,
        image_urls: ['https://example.com/a.png'],
        width: 1024,
        height: 1024,
      });
      const answer = await resultWhenDone(h, { req_key: name, task_id: id, req_json: '{"return_url":true}' });
      assert.equal(answer.code, 10000);
      assert.deepEqual(answer.data.image_urls, [`${h.url}/gamma/content/${id}`]);
      const file = await h.get(`/gamma/content/${id}`);
      assert.equal(file.status, 200);
      assert.ok(file.bytes.equals(h.sims['gamma-volc']!.result!(upstreamId, 0)!), `${name}: the vendor's image`);
      const byVendorKey = await h.post(RESULT, { req_key: vendorKey, task_id: id });
      assert.equal(byVendorKey.json.data.status, 'not_found', 'a task answers under the req_key it was submitted with');
    }
  });
});
