import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makePng } from '../../src/sim/png.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** Width and height of a PNG, read from its IHDR chunk. */
function pngSize(bytes: Buffer): [number, number] {
  assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG', 'a PNG');
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

/**
 * The zeta-openai profile end to end against its simulator: the image families (zeta image 2, zeta
 * compatible, epsilon image) on the synchronous image routes, and the epsilon video limits, several
 * multipart references and remix. The simulator answers PNGs at 1/16 of the size it was asked for,
 * so the pixel size of an answer tells which size reached the vendor.
 */
describe('zeta-openai images and epsilon video, end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());
  const sim = () => h.sims['zeta-openai']!;

  test("zeta image 2 at 16:9 asked as url: the closest official size is generated, and the vendor's base64 comes back as a gateway link serving the PNG", async () => {
    const r = await h.post('/v1/images/generations', { model: 'zeta-image-2', prompt: 'a red kite', size: '16:9', response_format: 'url' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.length, 1);
    assert.equal(r.json.data[0].b64_json, undefined);
    assert.match(r.json.data[0].url, new RegExp(`^${h.url}/v1/links/[A-Za-z0-9_-]{32}$`), 'a gateway link (the GPT-image-style vendor answers base64 only)');
    assert.ok(r.json.usage.output_tokens > 0);
    assert.equal(typeof r.json.usage.input_tokens_details.text_tokens, 'number', 'the usage details pass');
    const file = await fetch(r.json.data[0].url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.deepEqual(pngSize(Buffer.from(await file.arrayBuffer())), [1536 / 16, 1024 / 16], '1536x1024 reached the vendor');

    const inline = await h.post('/v1/images/generations', { model: 'zeta-image-2', prompt: 'a red kite', size: '3:2' });
    assert.equal(inline.status, 200, inline.text);
    assert.equal(inline.json.data[0].url, undefined, "no response_format: the vendor's own base64");
    assert.deepEqual(pngSize(Buffer.from(inline.json.data[0].b64_json, 'base64')), [1536 / 16, 1024 / 16]);
  });

  test('zeta compatible: zeta-draw-3 writes the ratio into the prompt; zeta-draw-2 falls back to a square size, answered as b64_json', async () => {
    const draw3 = await h.post('/v1/images/generations', { model: 'zeta-draw-3', prompt: 'a city', size: '16:9' });
    assert.equal(draw3.status, 200, draw3.text);
    assert.equal(draw3.json.data[0].revised_prompt, 'a city (aspect ratio 16:9)', 'the dall-e-3 style echoes the prompt it got');
    const r = await h.post('/v1/images/generations', { model: 'zeta-draw-2', prompt: 'an icon', size: '300x200', response_format: 'b64_json' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(pngSize(Buffer.from(r.json.data[0].b64_json, 'base64')), [256 / 16, 256 / 16]);
  });

  test('epsilon image at 21:9: the table size goes up as it is; b64_json is refused before the vendor', async () => {
    const r = await h.post('/v1/images/generations', { model: 'epsilon-4-2-image', prompt: 'a wide valley', size: '21:9', image: ['iVBORw0KGgo='] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data[0].revised_prompt, 'a wide valley');
    const file = await fetch(r.json.data[0].url);
    assert.deepEqual(pngSize(Buffer.from(await file.arrayBuffer())), [Math.round(3024 / 16), Math.round(1296 / 16)]);
    const before = sim().stats.images!;
    const refused = await h.post('/v1/images/generations', { model: 'epsilon-4-2-image', prompt: 'x', response_format: 'b64_json' });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.json.error.code, 'invalid_request');
    assert.match(refused.json.error.message, /epsilon image/);
    assert.equal(sim().stats.images, before, 'no vendor call');
  });

  test('an unsupported ratio is refused naming the allowed ones; vendor faults are mapped', async () => {
    const r = await h.post('/v1/images/generations', { model: 'zeta-image-2', prompt: 'x', size: '21:9' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.param, 'size');
    const busy = await h.post('/v1/images/generations', { model: 'zeta-image-1', prompt: 'x [sim:fault=429]' });
    assert.equal(busy.status, 429, busy.text);
    assert.equal(busy.json.code, 'too_many_requests');
    const broken = await h.post('/v1/images/generations', { model: 'zeta-image-1', prompt: 'x [sim:fault=500]' });
    assert.equal(broken.status, 502, broken.text);
    assert.equal(broken.json.error.code, 'bad_response');
  });

  test('image edit (multipart): two image files and a mask reach the vendor as file parts', async () => {
    const form = new FormData();
    form.append('model', 'zeta-image-1');
    form.append('prompt', 'put a hat on the cat');
    form.append('size', '1024x1024');
    form.append('image[]', new Blob([makePng(8, 8, 1)], { type: 'image/png' }), 'cat.png');
    form.append('image[]', new Blob([makePng(8, 8, 2)], { type: 'image/png' }), 'dog.png');
    form.append('mask', new Blob([makePng(8, 8, 3)], { type: 'image/png' }), 'mask.png');
    const before = sim().stats.edits!;
    const res = await fetch(`${h.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${h.key}` }, body: form });
    const json = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(json));
    assert.equal(sim().stats.edits, before + 1);
    // The simulator counts 272 input tokens per image it received, plus a quarter of the prompt.
    assert.equal(json.usage.input_tokens, Math.ceil('put a hat on the cat'.length / 4) + 2 * 272);
    assert.equal(json.usage.input_tokens_details.image_tokens, 2 * 272);
    assert.ok(json.data[0].b64_json, 'no response_format asked: the GPT-image-style answer, base64');

    const draw3 = new FormData();
    draw3.append('model', 'zeta-draw-3');
    draw3.append('prompt', 'x');
    draw3.append('image', new Blob([makePng(8, 8, 1)], { type: 'image/png' }), 'a.png');
    const refused = await fetch(`${h.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${h.key}` }, body: draw3 });
    const err = (await refused.json()) as any;
    assert.equal(refused.status, 400);
    assert.equal(err.error.code, 'invalid_request');
    assert.equal(err.error.param, 'model');
  });

  test('epsilon-video-3-pro: the fixed 10 s is sent when absent, other durations are refused', async () => {
    const sub = await h.post('/v1/videos', { model: 'epsilon-video-3-pro', prompt: 'a paper boat' });
    assert.equal(sub.status, 200, sub.text);
    const rec = await h.record(sub.json.id);
    assert.equal((sim().tasks!.get(rec!.upstreamId!)!.body as { seconds: string }).seconds, '10');
    const bad = await h.post('/v1/videos', { model: 'epsilon-video-3-max', prompt: 'x', seconds: '10' });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.json.error.message, /epsilon-video-3-max/);
  });

  test("multipart with several input_reference files, then a remix of the result: both complete and download the vendor's bytes", async () => {
    const form = new FormData();
    form.append('model', 'epsilon-video-3');
    form.append('prompt', 'the two of them');
    form.append('seconds', '8');
    form.append('size', '1280x720');
    form.append('input_reference', new Blob([makePng(16, 9, 1)], { type: 'image/png' }), 'a.png');
    form.append('input_reference', new Blob([makePng(16, 9, 2)], { type: 'image/png' }), 'b.png');
    const res = await fetch(`${h.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${h.key}` }, body: form });
    const sub = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(sub));
    const rec = await h.record(sub.id);
    assert.equal((sim().tasks!.get(rec!.upstreamId!)!.body as { references: number }).references, 2, 'both references reached the vendor');
    const seen = new Set<string>();
    await h.waitFor(sub.id, (t) => (seen.add(t.status), t.status === 'completed'));
    assert.ok(seen.has('queued') || seen.has('in_progress'));

    const remix = await h.post(`/v1/videos/${sub.id}/remix`, { prompt: 'the two of them, at night' });
    assert.equal(remix.status, 200, remix.text);
    assert.notEqual(remix.json.id, sub.id);
    assert.equal(remix.json.model, 'epsilon-video-3');
    const remixRec = await h.record(remix.json.id);
    assert.equal(remixRec!.channel, rec!.channel, "the remix runs on the source's channel");
    const vendorRemix = sim().tasks!.get(remixRec!.upstreamId!)!;
    assert.equal((vendorRemix.body as { remixOf: string }).remixOf, rec!.upstreamId);
    const done = await h.waitFor(remix.json.id, (t) => t.status === 'completed', { path: (id) => `/v1/video/query?id=${id}` });
    assert.equal(done.seconds, '8');
    const file = await h.get(`/v1/videos/${remix.json.id}/content`);
    assert.equal(file.status, 200);
    assert.ok(file.bytes.equals(sim().result!(remixRec!.upstreamId!)!), "the downloaded bytes are the vendor's");
  });

  test('pictures as the vendor takes them: one URL as input_reference[image_url], inline ones as files; a URL among several is refused before the vendor', async () => {
    const byUrl = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'the boat sails off', image: 'https://img.example/first.png' });
    assert.equal(byUrl.status, 200, byUrl.text);
    const rec = await h.record(byUrl.json.id);
    assert.equal((sim().tasks!.get(rec!.upstreamId!)!.body as { references: number }).references, 1, 'the URL reached the vendor');

    const inline = `data:image/png;base64,${makePng(16, 9, 3).toString('base64')}`;
    const firstLast = await h.post('/v1/video/generations', {
      model: 'epsilon-video-3',
      prompt: 'dawn to dusk',
      image: inline,
      metadata: { last_frame_url: makePng(16, 9, 4).toString('base64') },
    });
    assert.equal(firstLast.status, 200, firstLast.text);
    const rec2 = await h.record(firstLast.json.id);
    assert.equal((sim().tasks!.get(rec2!.upstreamId!)!.body as { references: number }).references, 2, 'a data URI and bare base64, two files');

    const before = sim().stats.submits!;
    const refused = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'x', images: [inline, 'https://img.example/b.png'] });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual([refused.json.error.code, refused.json.error.param], ['invalid_request', 'images[1]']);
    assert.match(refused.json.error.message, /must be the only picture/);
    assert.equal(sim().stats.submits, before, 'no vendor call');
  });

  test("a failed epsilon video ends failed with the vendor's reason", async () => {
    const sub = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'doomed [sim:fail=content_policy]' });
    assert.equal(sub.status, 200, sub.text);
    const last = await h.waitFor(sub.json.id, (t) => t.status === 'failed' || t.status === 'completed');
    assert.equal(last.status, 'failed');
    assert.equal(last.error.code, 'content_policy');
  });
});
