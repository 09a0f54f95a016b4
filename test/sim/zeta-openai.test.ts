/**
 * The zeta-openai simulator over real HTTP: video create (JSON and multipart) → queued →
 * in_progress → completed with the bytes of `sim.result` (whole and by Range, and the thumbnail and
 * spritesheet variants), failures, odd and stuck statuses, remix, synchronous images (generations and
 * multipart edits, per-model sizes, the GPT image and dall-e answer styles), auth refusals,
 * validation errors (what the official client never sends included) and every fault form. The
 * official client itself is driven against it in test/contract/openai-zeta.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { pngSize } from '../../src/sim/png.js';
import { webpSize } from '../../src/sim/zeta-webp.js';
import { startZetaOpenaiSimulator } from '../../src/sim/zeta-openai.js';
import { simClient } from '../helpers/sim-client.js';

function client(sim: Simulator) {
  const c = simClient(sim, { authorization: `Bearer ${sim.secrets.key}` });
  return { ...c, content: (id: string, headers?: Record<string, string>) => c.fetch(`/v1/videos/${id}/content`, { headers }) };
}

/** A small upload of the given content type and size. */
const png = (tag: string, type = 'image/png', size?: number) => new Blob([size === undefined ? Buffer.from(`fake ${tag}`) : Buffer.alloc(size)], { type });

/** An edit form with the given text parts and, unless told otherwise, one PNG `image`. */
function editForm(fields: Record<string, string>, withImage = true): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  if (withImage) form.append('image', png('a'), 'a.png');
  return form;
}

/** Adds a file part to a form and returns the form. */
function withFile(form: FormData, field: string, type: string, size?: number): FormData {
  form.append(field, png(field, type, size), `${field}.bin`);
  return form;
}

const video = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: 'zeta-video-2', prompt, seconds: '8', size: '1280x720', ...extra });

describe('zeta-openai simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  let c: ReturnType<typeof client>;
  before(async () => {
    sim = await startZetaOpenaiSimulator({ finishMs: 3000, clock: () => now });
    c = client(sim);
  });
  after(() => sim.close());

  test('create → queued → in_progress → completed, bytes equal to result(), Range gives 206', async () => {
    const sub = await c.post('/v1/videos', video('a fox'));
    assert.equal(sub.status, 200);
    const id = sub.body.id as string;
    assert.match(id, /^video_[0-9a-f]{24}$/);
    assert.deepEqual(
      { object: sub.body.object, model: sub.body.model, status: sub.body.status, progress: sub.body.progress, seconds: sub.body.seconds, size: sub.body.size },
      { object: 'video', model: 'zeta-video-2', status: 'queued', progress: 0, seconds: '8', size: '1280x720' },
    );
    assert.equal(sub.body.created_at, Math.floor(now / 1000));
    assert.equal(sub.body.completed_at, null);
    assert.equal((await c.content(id)).status, 404, 'no content before completion');
    assert.equal(sim.result!(id), null);

    now += 1500;
    const mid = await c.get(`/v1/videos/${id}`);
    assert.equal(mid.body.status, 'in_progress');
    assert.ok(mid.body.progress > 0 && mid.body.progress < 100);

    now += 1500;
    const done = await c.get(`/v1/videos/${id}`);
    assert.equal(done.body.status, 'completed');
    assert.equal(done.body.progress, 100);
    assert.equal(done.body.error, null);
    assert.equal(done.body.completed_at, Math.floor(now / 1000));

    const expected = sim.result!(id)!;
    assert.ok(expected.length > 1000);
    const whole = await c.content(id);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), expected);
    const part = await c.content(id, { range: 'bytes=100-199' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${expected.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(100, 200));
    assert.equal((await c.content(id, { authorization: 'Bearer nope' })).status, 401, 'the download needs the key');
    for (const [variant, index, width] of [
      ['thumbnail', 1, 80],
      ['spritesheet', 2, 320],
    ] as const) {
      const r = await fetch(`${sim.url}/v1/videos/${id}/content?variant=${variant}`, { headers: { authorization: `Bearer ${sim.secrets.key}` } });
      assert.equal(r.status, 200, variant);
      assert.equal(r.headers.get('content-type'), 'image/webp', 'the type OpenAI specifies for the preview variants');
      const bytes = Buffer.from(await r.arrayBuffer());
      assert.deepEqual(bytes, sim.result!(id, index), `${variant} is result ${index}`);
      assert.deepEqual(webpSize(bytes), { width, height: 45 }, `${variant}: 1/16 of 1280x720`);
    }
    assert.equal((await c.get(`/v1/videos/${id}/content?variant=poster`)).status, 400);
    assert.ok(sim.stats.submits! >= 1 && sim.stats.queries! >= 2 && sim.stats.downloads! >= 3);
  });

  test('a failed video reports its reason and has no content', async () => {
    const sub = await c.post('/v1/videos', video('x [sim:fail=moderation_blocked]'));
    now += 3000;
    const q = await c.get(`/v1/videos/${sub.body.id}`);
    assert.equal(q.body.status, 'failed');
    assert.equal(q.body.error.code, 'moderation_blocked');
    assert.equal(typeof q.body.error.message, 'string');
    assert.equal((await c.content(sub.body.id as string)).status, 404);
    assert.equal(sim.result!(sub.body.id as string), null);
  });

  test('odd and stuck statuses', async () => {
    const odd = await c.post('/v1/videos', video('x [sim:status=paused]'));
    const stuck = await c.post('/v1/videos', video('x [sim:never]'));
    now += 60_000;
    assert.equal((await c.get(`/v1/videos/${odd.body.id}`)).body.status, 'paused');
    assert.equal((await c.get(`/v1/videos/${stuck.body.id}`)).body.status, 'in_progress');
  });

  test('multipart create with uploaded files (several on the epsilon line) and with input_reference[image_url]', async () => {
    const form = new FormData();
    form.set('model', 'epsilon-video-3');
    form.set('prompt', 'from a picture');
    form.set('seconds', '15');
    form.set('size', '1920x1080');
    form.append('input_reference', new Blob([Buffer.from('fake png')], { type: 'image/png' }), 'a.png');
    form.append('input_reference', new Blob([Buffer.from('fake png 2')], { type: 'image/jpeg' }), 'b.jpg');
    const sub = await c.post('/v1/videos', form);
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    assert.equal(sub.body.seconds, '15');
    assert.equal(sub.body.size, '1920x1080');

    const form2 = new FormData();
    form2.set('model', 'zeta-video-2');
    form2.set('prompt', 'from a link');
    form2.set('input_reference[image_url]', 'https://example.com/a.png');
    const linked = await c.post('/v1/videos', form2);
    assert.equal(linked.status, 200, JSON.stringify(linked.body));
    assert.equal((sim.tasks!.get(linked.body.id as string)!.body as { references: number }).references, 1);

    // What the package never sends: a URL as a plain text part, two files on a model of the protocol
    // itself, a file and an object at once.
    const text = new FormData();
    text.set('prompt', 'x');
    text.set('input_reference', 'https://example.com/a.png');
    const two = new FormData();
    two.set('model', 'zeta-video-2');
    two.set('prompt', 'x');
    two.append('input_reference', new Blob([Buffer.from('a')], { type: 'image/png' }), 'a.png');
    two.append('input_reference', new Blob([Buffer.from('b')], { type: 'image/png' }), 'b.png');
    const both = new FormData();
    both.set('prompt', 'x');
    both.append('input_reference', new Blob([Buffer.from('a')], { type: 'image/png' }), 'a.png');
    both.set('input_reference[image_url]', 'https://example.com/a.png');
    for (const [form, code] of [
      [text, 'invalid_type'],
      [two, 'invalid_value'],
      [both, 'invalid_value'],
    ] as const) {
      const r = await c.post('/v1/videos', form);
      assert.deepEqual([r.status, r.body.error.param, r.body.error.code], [400, 'input_reference', code]);
    }

    const bad = new FormData();
    bad.set('model', 'zeta-video-2');
    bad.set('prompt', 'a gif');
    bad.append('input_reference', new Blob([Buffer.from('GIF89a')], { type: 'image/gif' }), 'a.gif');
    const refused = await c.post('/v1/videos', bad);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.param, 'input_reference');
  });

  test('remix of a completed video makes a new video; unknown or unfinished sources are refused', async () => {
    const src = await c.post('/v1/videos', video('source'));
    const early = await c.post(`/v1/videos/${src.body.id}/remix`, { prompt: 'more blue' });
    assert.equal(early.status, 400);
    now += 3000;
    const remix = await c.post(`/v1/videos/${src.body.id}/remix`, { prompt: 'more blue' });
    assert.equal(remix.status, 200);
    assert.notEqual(remix.body.id, src.body.id);
    assert.equal(remix.body.status, 'queued');
    assert.equal(remix.body.remixed_from_video_id, src.body.id);
    assert.equal(remix.body.seconds, '8');
    assert.equal((await c.post('/v1/videos/video_nope/remix', { prompt: 'x' })).status, 404);
    const unknown = await c.get('/v1/videos/video_nope');
    assert.equal(unknown.status, 404);
    // The vendor's own word that it does not know the video, which the profile recognises.
    assert.equal(unknown.body.error.code, 'video_not_found');
    assert.equal(unknown.body.error.param, 'video_id');
  });

  test('validation errors in the vendor shape', async () => {
    const cases: [unknown, string, string][] = [
      [video('x', { seconds: '5' }), 'seconds', 'invalid_value'],
      [video('x', { seconds: 8 }), 'seconds', 'invalid_type'],
      [video('x', { size: '1920x1080' }), 'size', 'invalid_value'],
      [video('x', { model: 'epsilon-video-3', seconds: '21' }), 'seconds', 'invalid_value'],
      [video('x', { model: 'sora-2', seconds: '5' }), 'seconds', 'invalid_value'],
      [video('x', { input_reference: 'https://example.com/a.png' }), 'input_reference', 'invalid_type'],
      [video('x', { input_reference: ['https://example.com/a.png'] }), 'input_reference', 'invalid_type'],
      [video('x', { input_reference: { image_url: 'not a url' } }), 'input_reference.image_url', 'invalid_value'],
      [video('x', { input_reference: { image_url: 'data:image/gif;base64,R0lG' } }), 'input_reference.image_url', 'invalid_value'],
      [video('x', { input_reference: { file_id: 'file_1' } }), 'input_reference.file_id', 'invalid_value'],
      [video('x', { input_reference: { image_url: 'https://example.com/a.png', file_id: 'file_1' } }), 'input_reference', 'invalid_value'],
      [video('x', { input_reference: { url: 'https://example.com/a.png' } }), 'input_reference.url', 'unknown_parameter'],
      [{ model: 'zeta-video-2' }, 'prompt', 'missing_required_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const r = await c.post('/v1/videos', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual({ type: r.body.error.type, param: r.body.error.param, code: r.body.error.code }, { type: 'invalid_request_error', param, code });
      assert.equal(typeof r.body.error.message, 'string');
    }
    assert.equal((await c.post('/v1/videos', video('x', { model: 'epsilon-video-3', seconds: '20', size: '1080x1920' }))).status, 200);
    const byJson = await c.post('/v1/videos', video('x', { input_reference: { image_url: 'https://example.com/a.png' } }));
    assert.equal((sim.tasks!.get(byJson.body.id as string)!.body as { references: number }).references, 1, 'a JSON {image_url} is read');
    const plain = await c.post('/v1/videos', { prompt: 'no model' });
    assert.deepEqual([plain.status, plain.body.model, plain.body.seconds, plain.body.size], [200, 'zeta-video-2', '4', '720x1280'], 'the defaults');
    const broken = await c.post('/v1/videos', '{"model":');
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.type, 'invalid_request_error');
  });

  test('images: url (dall-e style) and b64_json answers with real PNGs; GPT image models answer base64 only; bad fields refused', async () => {
    const byUrl = await c.post('/v1/images/generations', { model: 'zeta-draw-3', prompt: 'a cat', size: '1024x1792' });
    assert.equal(byUrl.status, 200);
    assert.deepEqual(Object.keys(byUrl.body).sort(), ['created', 'data'], 'dall-e-style answers carry no usage');
    assert.equal(byUrl.body.data.length, 1);
    assert.equal(byUrl.body.data[0].revised_prompt, 'a cat');
    const url = byUrl.body.data[0].url as string;
    assert.ok(url.startsWith(`${sim.url}/files/`));
    const file = await fetch(url);
    assert.equal(file.status, 200, 'image URLs need no key');
    assert.deepEqual(pngSize(Buffer.from(await file.arrayBuffer())), { width: 64, height: 112 });
    const again = Buffer.from(await (await fetch(url)).arrayBuffer());
    assert.deepEqual(pngSize(again), { width: 64, height: 112 }, 'the same URL serves the same file');

    const b64 = await c.post('/v1/images/generations', { model: 'zeta-image-2', prompt: 'two cats', n: 2, quality: 'high', output_format: 'webp' });
    assert.equal(b64.status, 200, JSON.stringify(b64.body));
    assert.equal(b64.body.data.length, 2);
    assert.deepEqual(pngSize(Buffer.from(b64.body.data[1].b64_json as string, 'base64')), { width: 64, height: 64 });
    assert.equal(b64.body.data[0].revised_prompt, undefined, 'GPT image models revise no prompt');
    assert.equal(typeof b64.body.created, 'number');
    assert.deepEqual([b64.body.background, b64.body.output_format, b64.body.quality, b64.body.size], ['opaque', 'webp', 'high', '1024x1024']);
    const text = Math.ceil('two cats'.length / 4);
    assert.deepEqual(b64.body.usage, {
      input_tokens: text,
      input_tokens_details: { image_tokens: 0, text_tokens: text },
      output_tokens: 2 * 1056,
      total_tokens: text + 2 * 1056,
    });

    const inline = await c.post('/v1/images/generations', { model: 'zeta-draw-2', prompt: 'an icon', size: '256x256', response_format: 'b64_json' });
    assert.deepEqual(pngSize(Buffer.from(inline.body.data[0].b64_json as string, 'base64')), { width: 16, height: 16 });
    assert.equal(inline.body.data[0].revised_prompt, undefined, 'the dall-e-2 style revises no prompt');

    for (const bad of [{ prompt: 'x', n: 0 }, { prompt: 'x', response_format: 'jpeg' }, { prompt: 'x', size: 'big' }, { model: 'zeta-image-1' }]) {
      const r = await c.post('/v1/images/generations', bad);
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.error.type, 'invalid_request_error');
    }
    for (const response_format of ['url', 'b64_json']) {
      const r = await c.post('/v1/images/generations', { model: 'zeta-image-1', prompt: 'x', response_format });
      assert.deepEqual(
        [r.status, r.body.error.param, r.body.error.code, r.body.error.message],
        [400, 'response_format', 'unknown_parameter', "Unknown parameter: 'response_format'."],
      );
    }
    // No model: the dall-e-2 style (256x256 is one of its sizes), a GPT image model when a parameter only those take is given.
    const plain = await c.post('/v1/images/generations', { prompt: 'x', size: '256x256' });
    assert.equal(typeof plain.body.data[0].url, 'string', JSON.stringify(plain.body));
    const gpt = await c.post('/v1/images/generations', { prompt: 'x', background: 'opaque' });
    assert.equal(typeof gpt.body.data[0].b64_json, 'string', JSON.stringify(gpt.body));
  });

  test('images: each model takes only its official sizes; zeta-draw-3 makes one image at a time', async () => {
    const ok: [Record<string, unknown>, number, number][] = [
      [{ model: 'zeta-image-1', size: 'auto' }, 64, 64],
      [{ model: 'zeta-image-2', size: '1536x1024' }, 96, 64],
      [{ model: 'zeta-draw-3' }, 64, 64],
      [{ model: 'zeta-draw-3', size: '1792x1024' }, 112, 64],
      [{ model: 'zeta-draw-2', size: '256x256' }, 16, 16],
      [{ model: 'zeta-draw-2' }, 64, 64],
      [{ model: 'epsilon-4-2-image', size: '2048x1152' }, 128, 72],
      [{ model: 'epsilon-4-2-image' }, 64, 64],
    ];
    for (const [extra, width, height] of ok) {
      // GPT image models answer base64 and refuse response_format; the others are asked for it.
      const format = String(extra.model).startsWith('zeta-image-') ? {} : { response_format: 'b64_json' };
      const r = await c.post('/v1/images/generations', { prompt: 'x', ...format, ...extra });
      assert.equal(r.status, 200, JSON.stringify(extra));
      assert.deepEqual(pngSize(Buffer.from(r.body.data[0].b64_json as string, 'base64')), { width, height }, JSON.stringify(extra));
    }
    const refused: [Record<string, unknown>, string, string][] = [
      [{ model: 'zeta-image-1', size: '1792x1024' }, 'size', "'auto', '1024x1024', '1536x1024', '1024x1536'"],
      [{ model: 'zeta-image-2', size: '512x512' }, 'size', "'auto', '1024x1024', '1536x1024', '1024x1536'"],
      [{ model: 'zeta-draw-3', size: 'auto' }, 'size', "'1024x1024', '1792x1024', '1024x1792'"],
      [{ model: 'zeta-draw-3', size: '1536x1024' }, 'size', "'1024x1024', '1792x1024', '1024x1792'"],
      [{ model: 'zeta-draw-2', size: '1792x1024' }, 'size', "'256x256', '512x512', '1024x1024'"],
      [{ model: 'epsilon-4-2-image', size: '8192x64' }, 'size', 'WIDTHxHEIGHT'],
      [{ model: 'zeta-draw-3', n: 2 }, 'n', 'exactly 1'],
      [{ model: 'zeta-draw-2', n: 11 }, 'n', 'from 1 to 10'],
    ];
    for (const [extra, param, listed] of refused) {
      const r = await c.post('/v1/images/generations', { prompt: 'x', ...extra });
      assert.equal(r.status, 400, JSON.stringify(extra));
      assert.deepEqual([r.body.error.type, r.body.error.param, r.body.error.code], ['invalid_request_error', param, 'invalid_value'], JSON.stringify(extra));
      assert.ok((r.body.error.message as string).includes(listed), r.body.error.message as string);
    }
    const typed = await c.post('/v1/images/generations', { prompt: 'x', n: '2' });
    assert.deepEqual([typed.status, typed.body.error.param, typed.body.error.code], [400, 'n', 'invalid_type']);
    assert.equal((await c.post('/v1/images/generations', { model: 'zeta-draw-2', prompt: 'x', n: 3 })).body.data.length, 3);
  });

  test('edits: multipart images and mask → b64_json (GPT image) and url answers with real PNGs', async () => {
    const before = sim.stats.edits!;
    const form = editForm({ model: 'zeta-image-1', prompt: 'paint it red', n: '2', size: '1536x1024' });
    form.append('image[]', png('b'), 'b.jpg');
    form.append('mask', new Blob([Buffer.from('mask')], { type: 'image/png' }), 'mask.png');
    const gpt = await c.post('/v1/images/edits', form);
    assert.equal(gpt.status, 200, JSON.stringify(gpt.body));
    assert.equal(gpt.body.data.length, 2);
    assert.equal(gpt.body.data[0].revised_prompt, undefined);
    assert.deepEqual(pngSize(Buffer.from(gpt.body.data[1].b64_json as string, 'base64')), { width: 96, height: 64 });
    assert.equal(typeof gpt.body.created, 'number');
    assert.equal(gpt.body.usage.input_tokens, Math.ceil('paint it red'.length / 4) + 2 * 272);
    assert.equal(gpt.body.usage.input_tokens_details.image_tokens, 2 * 272);
    assert.equal(gpt.body.usage.total_tokens, gpt.body.usage.input_tokens + gpt.body.usage.output_tokens);

    const byUrl = await c.post('/v1/images/edits', editForm({ model: 'zeta-draw-2', prompt: 'paint it red', n: '2', size: '1024x1024' }));
    assert.equal(byUrl.status, 200, JSON.stringify(byUrl.body));
    assert.equal(byUrl.body.usage, undefined);
    const url = byUrl.body.data[1].url as string;
    assert.ok(url.startsWith(`${sim.url}/files/`));
    const file = await fetch(url);
    assert.equal(file.status, 200);
    const bytes = Buffer.from(await file.arrayBuffer());
    assert.deepEqual(pngSize(bytes), { width: 64, height: 64 });
    const part = await fetch(url, { headers: { range: 'bytes=0-7' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(0, 8));

    const b64 = await c.post('/v1/images/edits', editForm({ model: 'zeta-draw-2', prompt: 'smaller', size: '512x512', response_format: 'b64_json' }));
    assert.equal(b64.status, 200, JSON.stringify(b64.body));
    assert.deepEqual(pngSize(Buffer.from(b64.body.data[0].b64_json as string, 'base64')), { width: 32, height: 32 });
    const other = await c.post('/v1/images/edits', editForm({ model: 'zeta-image-2', prompt: 'x' }));
    assert.deepEqual([other.status, other.body.data.length], [200, 1]);
    const free = await c.post('/v1/images/edits', editForm({ model: 'epsilon-4-2-image', prompt: 'x', size: '2048x1152' }));
    assert.equal(free.status, 200, 'models of other lines edit with any WxH');
    assert.equal(sim.stats.edits, before + 5);
  });

  test('edits: validation errors in the vendor shape', async () => {
    const json = await c.post('/v1/images/edits', { model: 'zeta-image-1', prompt: 'x', image: 'aGk=' });
    assert.equal(json.status, 400);
    assert.deepEqual([json.body.error.type, json.body.error.param, json.body.error.code], ['invalid_request_error', null, null]);
    assert.match(json.body.error.message as string, /multipart\/form-data/);

    const many = editForm({ prompt: 'x' });
    for (let i = 0; i < 16; i++) many.append('image', png(String(i)), `${i}.png`);
    // The dall-e-2 style takes one PNG of at most 4 MB (the package's words); masks are PNGs of at most 4 MB.
    const big = editForm({ model: 'zeta-draw-2', prompt: 'x' }, false);
    big.append('image', new Blob([Buffer.alloc(4 * 1024 * 1024 + 1)], { type: 'image/png' }), 'big.png');
    const bigMask = editForm({ prompt: 'x' });
    bigMask.append('mask', new Blob([Buffer.alloc(4 * 1024 * 1024 + 1)], { type: 'image/png' }), 'mask.png');
    const twoSmall = editForm({ model: 'zeta-draw-2', prompt: 'x' });
    twoSmall.append('image', png('b'), 'b.png');
    const cases: [FormData, string, string][] = [
      [editForm({ model: 'zeta-draw-3', prompt: 'x' }), 'model', 'invalid_value'],
      [editForm({ model: 'zeta-video-2', prompt: 'x' }), 'model', 'invalid_value'],
      [editForm({ model: 'zeta-image-1' }), 'prompt', 'missing_required_parameter'],
      [editForm({ prompt: 'x' }, false), 'image', 'missing_required_parameter'],
      [many, 'image', 'invalid_value'],
      [big, 'image', 'invalid_value'],
      [bigMask, 'mask', 'invalid_value'],
      [twoSmall, 'image', 'invalid_value'],
      [withFile(editForm({ model: 'zeta-draw-2', prompt: 'x' }, false), 'image', 'image/jpeg'), 'image', 'invalid_value'],
      [editForm({ model: 'zeta-image-2', prompt: 'x', response_format: 'b64_json' }), 'response_format', 'unknown_parameter'],
      [withFile(editForm({ prompt: 'x' }, false), 'image', 'image/gif'), 'image', 'invalid_value'],
      [withFile(editForm({ prompt: 'x' }, false), 'image', 'image/png', 0), 'image', 'invalid_value'],
      [withFile(editForm({ prompt: 'x' }), 'mask', 'image/jpeg'), 'mask', 'invalid_value'],
      [withFile(withFile(editForm({ prompt: 'x' }), 'mask', 'image/png'), 'mask', 'image/png'), 'mask', 'invalid_value'],
      [withFile(editForm({ prompt: 'x' }), 'photo', 'image/png'), 'photo', 'invalid_value'],
      [editForm({ prompt: 'x', image: 'https://example.com/a.png' }, false), 'image', 'invalid_type'],
      [editForm({ model: 'zeta-image-1', prompt: 'x', size: '512x512' }), 'size', 'invalid_value'],
      [editForm({ model: 'zeta-draw-2', prompt: 'x', size: 'auto' }), 'size', 'invalid_value'],
      [editForm({ prompt: 'x', n: '0' }), 'n', 'invalid_value'],
      [editForm({ prompt: 'x', n: 'two' }), 'n', 'invalid_type'],
      [editForm({ model: 'zeta-draw-2', prompt: 'x', response_format: 'png' }), 'response_format', 'invalid_value'],
      [editForm({ prompt: 'x', background: 'green' }), 'background', 'invalid_value'],
      [editForm({ prompt: 'x', output_format: 'gif' }), 'output_format', 'invalid_value'],
    ];
    for (const [form, param, code] of cases) {
      const r = await c.post('/v1/images/edits', form);
      assert.equal(r.status, 400, `${param} ${code}: ${JSON.stringify(r.body)}`);
      assert.deepEqual({ type: r.body.error.type, param: r.body.error.param, code: r.body.error.code }, { type: 'invalid_request_error', param, code });
      assert.equal(typeof r.body.error.message, 'string');
    }
    const gif = await c.post('/v1/images/edits', withFile(editForm({ prompt: 'x' }, false), 'image', 'image/gif'));
    assert.match(gif.body.error.message as string, /'image\/png', 'image\/jpeg', 'image\/webp'/);
  });

  test('a missing or wrong key is refused with 401 invalid_api_key', async () => {
    for (const headers of [{ authorization: 'Bearer wrong' }, { authorization: '' }]) {
      const r = await c.post('/v1/videos', video('x'), headers);
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'invalid_api_key');
      assert.equal(r.body.error.type, 'invalid_request_error');
    }
    assert.equal((await c.get('/v1/videos/video_x', { authorization: 'Bearer wrong' })).status, 401);
    const edit = await c.post('/v1/images/edits', editForm({ prompt: 'x' }), { authorization: 'Bearer wrong' });
    assert.deepEqual([edit.status, edit.body.error.code], [401, 'invalid_api_key']);
  });

  test('unknown paths answer 404 in the vendor shape', async () => {
    const r = await c.get('/v1/nothing');
    assert.equal(r.status, 404);
    assert.equal(r.body.error.type, 'invalid_request_error');
  });
});

describe('zeta-openai simulator faults (real clock)', () => {
  let sim: Simulator;
  let c: ReturnType<typeof client>;
  before(async () => {
    sim = await startZetaOpenaiSimulator({ finishMs: 3000 });
    c = client(sim);
  });
  after(() => sim.close());

  test('status faults answer the vendor error body', async () => {
    const limited = await c.post('/v1/videos', video('x'), { 'x-sim-fault': '429' });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '2');
    assert.equal(limited.body.error.code, 'rate_limit_exceeded');
    const failed = await c.post('/v1/images/generations', { prompt: 'x' }, { 'x-sim-fault': '500' });
    assert.equal(failed.status, 500);
    assert.deepEqual([failed.body.error.type, failed.body.error.code], ['server_error', 'server_error']);
    const sub = await c.post('/v1/videos', video('x'));
    sim.faults.push('503');
    const q = await c.get(`/v1/videos/${sub.body.id}`);
    assert.equal(q.status, 503);
    assert.equal(q.body.error.type, 'server_error');
    assert.equal((await c.get(`/v1/videos/${sub.body.id}?sim_fault=502`)).status, 502);
    assert.equal((await c.post('/v1/videos', video('x [sim:fault=429]'))).status, 429);
    const edit = await c.post('/v1/images/edits', editForm({ prompt: 'x' }), { 'x-sim-fault': '503' });
    assert.deepEqual([edit.status, edit.body.error.type], [503, 'server_error']);
    assert.equal((await c.post('/v1/images/edits', editForm({ prompt: 'x [sim:fault=429]' }))).status, 429);
    assert.equal((await c.post('/v1/images/edits?sim_fault=500', editForm({ prompt: 'x' }))).status, 500);
    sim.faults.push('502');
    assert.equal((await c.post('/v1/images/edits', editForm({ prompt: 'x' }))).status, 502);
    const slow = await c.post('/v1/images/edits', editForm({ prompt: 'x' }), { 'x-sim-fault': 'slow-body:20' });
    assert.deepEqual([slow.status, slow.body.data.length], [200, 1]);
  });

  test('reset, malformed JSON, slow headers and slow body', async () => {
    await assert.rejects(
      fetch(`${sim.url}/v1/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sim.secrets.key}`, 'x-sim-fault': 'reset' },
        body: JSON.stringify(video('x')),
      }),
    );
    const bad = await fetch(`${sim.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.secrets.key}`, 'x-sim-fault': 'malformed-json' },
      body: JSON.stringify(video('x')),
    });
    assert.equal(bad.status, 200);
    await assert.rejects(bad.json());
    const slow = await c.post('/v1/videos', video('x'), { 'x-sim-fault': 'slow-headers:30' });
    assert.equal(slow.status, 200);
    assert.equal(slow.body.status, 'queued');
    const body = await c.post('/v1/videos', video('x'), { 'x-sim-fault': 'slow-body:30' });
    assert.equal(body.status, 200);
    assert.ok(sim.tasks!.get(body.body.id as string), 'a slow-body answer still names a real task');
  });

  test('a short task finishes in real time (bounded polling)', async () => {
    const sub = await c.post('/v1/videos', video('quick [sim:finish=50]'));
    let status = '';
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      await delay(20);
      status = (await c.get(`/v1/videos/${sub.body.id}`)).body.status as string;
    }
    assert.equal(status, 'completed');
    const bytes = Buffer.from(await (await c.content(sub.body.id as string)).arrayBuffer());
    assert.deepEqual(bytes, sim.result!(sub.body.id as string));
  });
});
