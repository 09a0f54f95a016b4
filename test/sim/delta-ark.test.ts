/**
 * The delta-ark simulator over real HTTP: synchronous images (url and b64_json, real PNGs), video
 * tasks queued → running → succeeded with the bytes of `sim.result` (whole, by Range), failed,
 * cancelled, expired, odd and stuck statuses, deletion, assets and `asset://` references, auth
 * refusals, the vendor's validation errors and every fault form.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { startDeltaArkSimulator } from '../../src/sim/delta-ark.js';
import type { Simulator } from '../../src/sim/http.js';
import { pngSize } from '../../src/sim/png.js';
import { type Answer, simClient } from '../helpers/sim-client.js';

const IMAGES = '/api/v3/images/generations';
const TASKS = '/api/v3/contents/generations/tasks';
const ASSETS = '/api/v3/assets';
const PNG_URI = 'data:image/png;base64,iVBORw0KGgo=';

const client = (sim: Simulator) => simClient(sim, { authorization: `Bearer ${sim.secrets.key}` });

const text = (t: string) => ({ type: 'text', text: t });
const image = (url: string, role?: string) => ({ type: 'image_url', image_url: { url }, ...(role ? { role } : {}) });
const video = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: 'delta-vid-2-0-260128', content: [text(prompt)], ...extra });
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());

describe('delta-ark simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  let c: ReturnType<typeof client>;
  before(async () => {
    sim = await startDeltaArkSimulator({ finishMs: 3000, clock: () => now });
    c = client(sim);
  });
  after(() => sim.close());

  test('images: url answer with nominal size, a 1/16 PNG served without auth and by Range', async () => {
    const r = await c.post(IMAGES, {
      model: 'delta-img-4-5-251128',
      prompt: 'a cat',
      size: '2560x1440',
      image: [PNG_URI, 'https://e.example/a.png'],
      watermark: false,
      seed: 3,
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.model, 'delta-img-4-5-251128');
    assert.equal(r.body.created_at, Math.floor(now / 1000));
    assert.equal(r.body.data.length, 1);
    assert.equal(r.body.data[0].size, '2560x1440');
    assert.deepEqual(r.body.usage, { generated_images: 1, output_tokens: 14400, total_tokens: 14400 });
    const url = r.body.data[0].url as string;
    assert.ok(url.startsWith(`${sim.url}/files/img-`));
    const file = await fetch(url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    const bytes = await bytesOf(file);
    assert.deepEqual(pngSize(bytes), { width: 160, height: 90 });
    const id = url.slice(url.lastIndexOf('/') + 1, -'.png'.length);
    assert.deepEqual(bytes, sim.result!(id));
    const part = await fetch(url, { headers: { range: 'bytes=0-7' } });
    assert.equal(part.status, 206);
    assert.deepEqual(await bytesOf(part), bytes.subarray(0, 8));
  });

  test('images: b64_json, presets, sequential auto with max_images', async () => {
    const r = await c.post(IMAGES, {
      model: 'delta-img-5-0-260128',
      prompt: 'x',
      size: '4K',
      response_format: 'b64_json',
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 3 },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.data.length, 3);
    assert.equal(r.body.usage.generated_images, 3);
    assert.equal(r.body.data[2].size, '4096x4096');
    assert.equal(r.body.data[0].url, undefined);
    assert.deepEqual(pngSize(Buffer.from(r.body.data[0].b64_json as string, 'base64')), { width: 256, height: 256 });
    const dflt = await c.post(IMAGES, { model: 'delta-img-4-0-250828', prompt: 'x', sequential_image_generation: 'auto' });
    assert.equal(dflt.body.data.length, 4);
    assert.equal(dflt.body.data[0].size, '2048x2048');
    const one = await c.post(IMAGES, { model: 'delta-img-4-0-250828', prompt: 'x', size: '1K', sequential_image_generation: 'disabled' });
    assert.equal(one.body.data.length, 1);
    assert.equal(one.body.data[0].size, '1024x1024');
    for (const size of ['4096x256', '256x4096', '8192x2048']) {
      assert.equal((await c.post(IMAGES, { model: 'delta-img-4-0-250828', prompt: 'x', size })).body.data[0].size, size, 'bounds are inclusive');
    }
  });

  test('images: [sim:fail] and [sim:fail=R] refuse the call', async () => {
    const a = await c.post(IMAGES, { model: 'delta-img-4-0-250828', prompt: 'bad [sim:fail]' });
    assert.equal(a.status, 400);
    assert.equal(a.body.error.code, 'OutputImageSensitiveContentDetected');
    const b = await c.post(IMAGES, { model: 'delta-img-4-0-250828', prompt: 'bad [sim:fail=InputTextSensitiveContentDetected]' });
    assert.equal(b.body.error.code, 'InputTextSensitiveContentDetected');
  });

  test('video: queued → running → succeeded; video and last frame equal result(), Range, HEAD, 416', async () => {
    const sub = await c.post(
      TASKS,
      video('a fox', {
        resolution: '1080p',
        ratio: '9:16',
        duration: 10,
        seed: 42,
        watermark: true,
        generate_audio: true,
        return_last_frame: true,
        callback_url: 'https://cb.example/x',
      }),
    );
    assert.equal(sub.status, 200);
    const id = sub.body.id as string;
    assert.match(id, /^cgt-[0-9a-f]{24}$/);
    assert.deepEqual(Object.keys(sub.body), ['id']);

    let q = await c.get(`${TASKS}/${id}`);
    assert.equal(q.status, 200);
    assert.deepEqual(
      { ...q.body },
      {
        id,
        model: 'delta-vid-2-0-260128',
        status: 'queued',
        usage: { completion_tokens: 0, total_tokens: 0 },
        created_at: now / 1000,
        updated_at: now / 1000,
        seed: 42,
        resolution: '1080p',
        ratio: '9:16',
        duration: 10,
      },
    );
    assert.equal(sim.result!(id), null);
    assert.equal((await fetch(`${sim.url}/files/${id}.mp4`)).status, 404);

    now += 1500;
    q = await c.get(`${TASKS}/${id}`);
    assert.equal(q.body.status, 'running');
    assert.equal(q.body.updated_at, now / 1000 - 0.5);
    assert.equal(q.body.content, undefined);

    now += 1500;
    q = await c.get(`${TASKS}/${id}`);
    assert.equal(q.body.status, 'succeeded');
    assert.ok(!Object.hasOwn(q.body, 'error'), 'no error field unless failed');
    assert.equal(q.body.updated_at, now / 1000);
    assert.deepEqual(q.body.usage, { completion_tokens: 486000, total_tokens: 486000 });
    const { video_url: videoUrl, last_frame_url: lastUrl } = q.body.content as Record<string, string>;
    assert.equal(videoUrl, `${sim.url}/files/${id}.mp4`);
    const expected = sim.result!(id, 0)!;
    const whole = await fetch(videoUrl!);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(await bytesOf(whole), expected);
    const part = await fetch(videoUrl!, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${expected.length}`);
    assert.deepEqual(await bytesOf(part), expected.subarray(100, 200));
    assert.equal((await fetch(videoUrl!, { headers: { range: `bytes=${expected.length}-` } })).status, 416);
    const head = await fetch(videoUrl!, { method: 'HEAD' });
    assert.equal(head.headers.get('content-length'), String(expected.length));
    const last = await bytesOf(await fetch(lastUrl!));
    assert.deepEqual(last, sim.result!(id, 1));
    assert.deepEqual(pngSize(last), { width: 68, height: 120 });
    assert.equal(sim.result!(id, 2), null);
    assert.equal(sim.tasks!.get(id)!.polls, 3);
  });

  test('video: defaults (720p, 16:9 or adaptive→16:9, 5 s, derived seed); no last frame unless asked', async () => {
    const t2v = (await c.post(TASKS, video('x'))).body.id as string;
    const i2v = (await c.post(TASKS, { model: 'delta-vid-2-0-fast-260128', content: [image(PNG_URI)], seed: -1 })).body.id as string;
    now += 3000;
    for (const id of [t2v, i2v]) {
      const q = await c.get(`${TASKS}/${id}`);
      assert.deepEqual([q.body.status, q.body.resolution, q.body.ratio, q.body.duration], ['succeeded', '720p', '16:9', 5]);
      assert.equal(q.body.seed, parseInt(id.slice(-8), 16));
      assert.deepEqual(Object.keys(q.body.content), ['video_url']);
      assert.equal(sim.result!(id, 1), null);
      assert.equal((await fetch(`${sim.url}/files/${id}-last.png`)).status, 404);
    }
  });

  test('failed: [sim:fail] → OutputVideoSensitiveContentDetected, [sim:fail=R] → R; no content', async () => {
    const a = (await c.post(TASKS, video('x [sim:fail]'))).body.id as string;
    const b = (await c.post(TASKS, video('x [sim:fail=InternalError_1]'))).body.id as string;
    now += 3000;
    const qa = await c.get(`${TASKS}/${a}`);
    assert.equal(qa.body.status, 'failed');
    assert.equal(qa.body.error.code, 'OutputVideoSensitiveContentDetected');
    assert.equal(typeof qa.body.error.message, 'string');
    assert.equal(qa.body.content, undefined);
    assert.equal((await c.get(`${TASKS}/${b}`)).body.error.code, 'InternalError_1');
    assert.equal(sim.result!(a), null);
    assert.equal((await fetch(`${sim.url}/files/${a}.mp4`)).status, 404);
  });

  test('[sim:never] stays running then expires; a long task expires too; [sim:status=WORD] reports WORD', async () => {
    const stuck = (await c.post(TASKS, video('x [sim:never]', { execution_expires_after: 3600 }))).body.id as string;
    const long = (await c.post(TASKS, video('x [sim:finish=9000000]', { execution_expires_after: 3600 }))).body.id as string;
    const odd = (await c.post(TASKS, video('x [sim:status=paused]'))).body.id as string;
    const created = now;
    now += 3599_000;
    assert.equal((await c.get(`${TASKS}/${stuck}`)).body.status, 'running');
    assert.equal((await c.get(`${TASKS}/${long}`)).body.status, 'running');
    now += 1000;
    for (const id of [stuck, long]) {
      const q = await c.get(`${TASKS}/${id}`);
      assert.equal(q.body.status, 'expired');
      assert.ok(!Object.hasOwn(q.body, 'error'), 'no error field unless failed');
      assert.equal(q.body.updated_at, created / 1000 + 3600);
    }
    assert.equal((await c.get(`${TASKS}/${odd}`)).body.status, 'paused');
  });

  test('DELETE: queued → cancelled, running refused, ended deleted (then 404)', async () => {
    const a = (await c.post(TASKS, video('x'))).body.id as string;
    const cancel = await c.del(`${TASKS}/${a}`);
    assert.equal(cancel.status, 200);
    assert.deepEqual(cancel.body, {});
    const q = await c.get(`${TASKS}/${a}`);
    assert.equal(q.body.status, 'cancelled');
    assert.equal(q.body.updated_at, now / 1000);
    now += 3000;
    assert.equal((await c.get(`${TASKS}/${a}`)).body.status, 'cancelled', 'a cancelled task never finishes');
    assert.equal(sim.result!(a), null);

    const b = (await c.post(TASKS, video('x'))).body.id as string;
    now += 1500;
    const refused = await c.del(`${TASKS}/${b}`);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'InvalidParameter');
    now += 1500;
    assert.equal((await c.del(`${TASKS}/${b}`)).status, 200);
    assert.equal((await c.del(`${TASKS}/${a}`)).status, 200);
    for (const id of [a, b]) {
      const gone = await c.get(`${TASKS}/${id}`);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.error.code, 'ResourceNotFound');
    }
    assert.equal(sim.result!(b), null);
    assert.equal((await c.del(`${TASKS}/cgt-nothing`)).status, 404);
  });

  test('assets: create from data or url, get, use as asset://; unknown or mistyped assets refused', async () => {
    const img = await c.post(ASSETS, { type: 'image', data: PNG_URI, name: 'cat' });
    assert.equal(img.status, 200);
    assert.match(img.body.id, /^asset-[0-9a-f]{20}$/);
    assert.deepEqual(img.body, { id: img.body.id, type: 'image', name: 'cat', status: 'active', created_at: Math.floor(now / 1000) });
    assert.deepEqual((await c.get(`${ASSETS}/${img.body.id}`)).body, img.body);
    const vid = await c.post(ASSETS, { type: 'video', url: 'https://e.example/ref.mp4' });
    assert.equal(vid.body.name, null);
    const aud = await c.post(ASSETS, { type: 'audio', data: 'data:audio/wav;base64,UklGRg==' });
    assert.equal(aud.status, 200);

    const content = [
      text('x'),
      image(`asset://${img.body.id}`, 'reference_image'),
      { type: 'video_url', video_url: { url: `asset://${vid.body.id}` }, role: 'reference_video' },
      { type: 'audio_url', audio_url: { url: `asset://${aud.body.id}` } },
    ];
    assert.equal((await c.post(TASKS, { model: 'delta-vid-2-0-260128', content })).status, 200);
    const unknown = await c.post(TASKS, { model: 'delta-vid-2-0-260128', content: [image('asset://asset-00ff', 'reference_image')] });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.param, 'content[0].image_url.url');
    const wrongType = await c.post(TASKS, { model: 'delta-vid-2-0-260128', content: [image(`asset://${vid.body.id}`)] });
    assert.equal(wrongType.status, 400);
    assert.match(wrongType.body.error.message, /type video/);

    const missing = await c.get(`${ASSETS}/asset-missing`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'ResourceNotFound');
    for (const bad of [
      { type: 'image' },
      { type: 'image', url: 'https://e.example/a', data: PNG_URI },
      { type: 'model', url: 'https://e.example/a' },
      { type: 'image', url: 'ftp://x' },
      { type: 'video', data: PNG_URI },
      { type: 'image', data: PNG_URI, name: 7 },
    ]) {
      const r = await c.post(ASSETS, bad);
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.error.code, 'InvalidParameter');
    }
    assert.equal(sim.stats.assets, 9);
  });
});

describe('delta-ark simulator (checks, auth, faults, real time)', () => {
  let sim: Simulator;
  let c: ReturnType<typeof client>;
  before(async () => {
    sim = await startDeltaArkSimulator({ finishMs: 60_000, key: 'k-delta' });
    c = client(sim);
  });
  after(() => sim.close());

  test('a short task finishes in real time (bounded polling)', async () => {
    const id = (await c.post(TASKS, video('quick [sim:finish=30]'))).body.id as string;
    let q: Answer | null = null;
    for (let i = 0; i < 100; i++) {
      q = await c.get(`${TASKS}/${id}`);
      if (!['queued', 'running'].includes(q.body.status)) break;
      await delay(10);
    }
    assert.equal(q!.body.status, 'succeeded');
    assert.deepEqual(await bytesOf(await fetch(q!.body.content.video_url)), sim.result!(id));
  });

  test('image validation answers 400 InvalidParameter (or 404 ModelNotOpen) with the field', async () => {
    const ok = { model: 'delta-img-4-0-250828', prompt: 'x' };
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ ...ok, model: 'delta-img-9' }, 404, 'ModelNotOpen', 'model'],
      [{ prompt: 'x' }, 400, 'InvalidParameter', 'model'],
      [{ ...ok, prompt: ' ' }, 400, 'InvalidParameter', 'prompt'],
      [{ ...ok, size: '512x512' }, 400, 'InvalidParameter', 'size'],
      [{ ...ok, size: '8192x256' }, 400, 'InvalidParameter', 'size'],
      [{ ...ok, size: '8K' }, 400, 'InvalidParameter', 'size'],
      [{ ...ok, size: '8192x2050' }, 400, 'InvalidParameter', 'size'],
      [{ ...ok, response_format: 'png' }, 400, 'InvalidParameter', 'response_format'],
      [{ ...ok, image: [] }, 400, 'InvalidParameter', 'image'],
      [{ ...ok, image: Array(11).fill(PNG_URI) }, 400, 'InvalidParameter', 'image'],
      [{ ...ok, image: 'data:image/gif;base64,R0lG' }, 400, 'InvalidParameter', 'image'],
      [{ ...ok, image: 7 }, 400, 'InvalidParameter', 'image'],
      [{ ...ok, watermark: 'no' }, 400, 'InvalidParameter', 'watermark'],
      [{ ...ok, seed: 1.5 }, 400, 'InvalidParameter', 'seed'],
      [{ ...ok, sequential_image_generation: 'on' }, 400, 'InvalidParameter', 'sequential_image_generation'],
      [{ ...ok, sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 16 } }, 400, 'InvalidParameter', 'max_images'],
      [
        { ...ok, image: Array(10).fill(PNG_URI), sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 6 } },
        400,
        'InvalidParameter',
        'image',
      ],
      [{ ...ok, stream: true }, 400, 'InvalidParameter', 'stream'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await c.post(IMAGES, body);
      assert.deepEqual([r.status, r.body.error?.code, r.body.error?.param], [status, code, param], JSON.stringify(body).slice(0, 200));
      assert.equal(typeof r.body.error.message, 'string');
      assert.equal(typeof r.body.error.type, 'string');
    }
    const broken = await c.post(IMAGES, '{"model":');
    assert.deepEqual([broken.status, broken.body.error.code, broken.body.error.type], [400, 'InvalidParameter', 'BadRequest']);
  });

  test('video validation: content roles, models, ranges', async () => {
    const m2 = 'delta-vid-2-0-260128';
    const pro = 'delta-vid-1-5-pro';
    const v = (model: string, content: unknown[], extra: Record<string, unknown> = {}) => ({ model, content, ...extra });
    const refused: [unknown, number, RegExp][] = [
      [v('delta-vid-9', [text('x')]), 404, /ModelNotOpen/],
      [v('delta-img-4-0-250828', [text('x')]), 404, /ModelNotOpen/],
      [{ content: [text('x')] }, 400, /model/],
      [v(m2, []), 400, /content/],
      [v(m2, [text('x'), text('y')]), 400, /one text/],
      [v(m2, [{ type: 'gif' }]), 400, /gif/],
      [v(m2, [{ text: 'x' }]), 400, /type/],
      [v(m2, [image('asset:nope')]), 400, /url/],
      [v(m2, [image('data:video/mp4;base64,AAAA')]), 400, /data URI/],
      [v(m2, [image(PNG_URI, 'hero')]), 400, /role/],
      [v(m2, [image(PNG_URI), image(PNG_URI)]), 400, /role/],
      [v(m2, [image(PNG_URI, 'last_frame')]), 400, /first_frame/],
      [v(m2, [image(PNG_URI, 'first_frame'), image(PNG_URI, 'first_frame')]), 400, /At most one/],
      [v(m2, [image(PNG_URI, 'first_frame'), image(PNG_URI, 'reference_image')]), 400, /combined/],
      [v(m2, Array(5).fill(image(PNG_URI, 'reference_image'))), 400, /4 reference_image/],
      [v(m2, [text('x'), ...Array(4).fill({ type: 'video_url', video_url: { url: 'https://e.example/v.mp4' } })]), 400, /3 reference_video/],
      [v(m2, [{ type: 'audio_url', audio_url: { url: 'https://e.example/a.mp3' } }]), 400, /text prompt/],
      [v(m2, [text(' ')]), 400, /text prompt/],
      [v(m2, [text('x')], { resolution: '4k' }), 400, /resolution/],
      [v(m2, [text('x')], { ratio: '2:1' }), 400, /ratio/],
      [v(m2, [text('x')], { duration: 3 }), 400, /duration/],
      [v(m2, [text('x')], { duration: 16 }), 400, /duration/],
      [v(m2, [text('x')], { seed: -2 }), 400, /seed/],
      [v(m2, [text('x')], { generate_audio: 1 }), 400, /generate_audio/],
      [v(m2, [text('x')], { callback_url: 'not-a-url' }), 400, /callback_url/],
      [v(m2, [text('x')], { execution_expires_after: 60 }), 400, /execution_expires_after/],
      [v(pro, [text('x')]), 400, /resolution.*required/],
      [v(pro, [text('x'), image(PNG_URI, 'reference_image')], { resolution: '720p' }), 400, /does not support reference/],
      [v(pro, [text('x'), { type: 'video_url', video_url: { url: 'https://e.example/v.mp4' } }], { resolution: '720p' }), 400, /does not support reference/],
      [v(pro, [text('x')], { resolution: '720p', duration: 13 }), 400, /duration/],
    ];
    for (const [body, status, message] of refused) {
      const r = await c.post(TASKS, body);
      assert.equal(r.status, status, JSON.stringify(body).slice(0, 200));
      assert.match(`${r.body.error.code} ${r.body.error.message}`, message, JSON.stringify(body).slice(0, 200));
    }
    const accepted = [
      v(pro, [text('x')], { resolution: '480p', duration: 2 }),
      v(pro, [image(PNG_URI, 'first_frame'), image('https://e.example/b.png', 'last_frame')], { resolution: '1080p', duration: 12 }),
      v(m2, [text('x'), ...Array(4).fill(image(PNG_URI, 'reference_image'))], { duration: 15, ratio: '21:9' }),
      v('delta-vid-2-0-fast-260128', [
        text('x'),
        { type: 'video_url', video_url: { url: 'data:video/mp4;base64,AAAA' } },
        { type: 'audio_url', audio_url: { url: 'https://e.example/a.mp3' }, role: 'reference_audio' },
      ]),
    ];
    for (const body of accepted) assert.equal((await c.post(TASKS, body)).status, 200, JSON.stringify(body).slice(0, 200));
  });

  test('a missing or wrong key is refused 401 AuthenticationError on every route; files need no key', async () => {
    const sub = await c.post(TASKS, video('x'));
    for (const authorization of ['Bearer wrong', '', 'k-delta']) {
      for (const [method, path] of [
        ['POST', IMAGES],
        ['POST', TASKS],
        ['GET', `${TASKS}/${sub.body.id}`],
        ['DELETE', `${TASKS}/${sub.body.id}`],
        ['POST', ASSETS],
        ['GET', `${ASSETS}/asset-1`],
      ]) {
        const res = await fetch(sim.url + path!, { method, headers: { authorization }, ...(method === 'POST' ? { body: '{}' } : {}) });
        assert.equal(res.status, 401, `${method} ${path}`);
        const body = (await res.json()) as Record<string, any>;
        assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
        assert.deepEqual([body.error.code, body.error.type], ['AuthenticationError', 'Unauthorized']);
      }
    }
    const img = await c.post(IMAGES, { model: 'delta-img-4-0-250828', prompt: 'x' });
    assert.equal((await fetch(img.body.data[0].url)).status, 200);
    const unknownPath = await c.get('/api/v3/nothing');
    assert.deepEqual([unknownPath.status, unknownPath.body.error.code], [404, 'ResourceNotFound']);
    assert.equal((await fetch(`${sim.url}/files/img-0123456789abcdef-9999x9999.png`)).status, 404);
    assert.equal((await fetch(`${sim.url}/files/${sub.body.id}.png`)).status, 404);
  });

  test('faults: status bodies by header, query, marker and queue; reset; malformed JSON; slow headers and body', async () => {
    const img = { model: 'delta-img-4-0-250828', prompt: 'x' };
    const r429 = await c.post(IMAGES, img, { 'x-sim-fault': '429' });
    assert.deepEqual([r429.status, r429.body.error.code, r429.headers.get('retry-after')], [429, 'RateLimitExceeded', '2']);
    const r500 = await c.post(TASKS, video('x'), { 'x-sim-fault': '500' });
    assert.deepEqual([r500.status, r500.body.error.code, r500.body.error.type], [500, 'InternalServiceError', 'InternalServerError']);
    const sub = await c.post(TASKS, video('x'));
    const r503 = await c.get(`${TASKS}/${sub.body.id}?sim_fault=503`);
    assert.deepEqual([r503.status, r503.body.error.code], [503, 'ServerOverloaded']);
    const r502 = await c.post(ASSETS, { type: 'image', url: 'https://e.example/a.png' }, { 'x-sim-fault': '502' });
    assert.deepEqual([r502.status, r502.body.error.code], [502, 'InternalServiceError']);
    const r403 = await c.get(`${ASSETS}/asset-x?sim_fault=403`);
    assert.equal(r403.status, 404, 'checks come before faults');
    const marked = await c.post(TASKS, video('x [sim:fault=429]'));
    assert.equal(marked.status, 429);
    const markedImage = await c.post(IMAGES, { ...img, prompt: 'x [sim:fault=500]' });
    assert.equal(markedImage.status, 500);
    sim.faults.push('403');
    const queued = await c.del(`${TASKS}/${sub.body.id}`);
    assert.deepEqual([queued.status, queued.body.error.code], [403, 'AccessDenied']);
    assert.equal((await c.get(`${TASKS}/${sub.body.id}`)).body.status, 'queued', 'a faulted cancel does not cancel');

    await assert.rejects(c.post(TASKS, video('x'), { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.get(`${TASKS}/${sub.body.id}`, { 'x-sim-fault': 'malformed-json' }), SyntaxError);
    const slow = await c.post(IMAGES, img, { 'x-sim-fault': 'slow-headers:20' });
    assert.equal(slow.status, 200);
    const slowBody = await c.post(TASKS, video('x'), { 'x-sim-fault': 'slow-body:20' });
    assert.ok(sim.tasks!.get(slowBody.body.id), 'a slow-body answer names a real task');
    const before = sim.tasks!.size;
    const hung = fetch(sim.url + TASKS, {
      method: 'POST',
      headers: { authorization: 'Bearer k-delta', 'x-sim-fault': 'hang' },
      body: JSON.stringify(video('x')),
      signal: AbortSignal.timeout(50),
    });
    await assert.rejects(hung);
    assert.equal(sim.tasks!.size, before, 'a hung submit creates no task');

    const files = await fetch(`${sim.url}/files/${sub.body.id}.mp4`, { headers: { 'x-sim-fault': '500' } });
    assert.equal(files.status, 404, 'files ignore faults');
  });

  test('counters', () => {
    const s = sim.stats;
    assert.ok(s.requests > s.images! + s.submits! + s.queries! + s.cancels! + s.assets!);
    for (const k of ['images', 'submits', 'queries', 'cancels', 'assets', 'downloads']) assert.ok(s[k]! > 0, k);
  });
});
