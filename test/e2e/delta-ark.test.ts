import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makePng } from '../../src/sim/png.js';
import { vendorUrlBehind } from '../helpers/links.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('delta-ark (delta image, delta video 2 and 1.5, assets), end to end', () => {
  let h: TaskHarness;
  const sim = () => h.sims['delta-ark']!;
  /** What the simulator kept of the submit body of one of our tasks. */
  const vendorTask = async (id: string) => (await h.vendorTask(id, 'delta-ark')).sim;

  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  test("images: b64_json by default, url on request; the bytes are the vendor's", async () => {
    const b64 = await h.post('/v1/images/generations', { model: 'delta-img-4-5-251128', prompt: 'a red kite', aspect_ratio: '16:9' });
    assert.equal(b64.status, 200, b64.text);
    assert.equal(b64.json.data.length, 1);
    assert.equal(b64.json.size, '2560x1440', 'the ratio table size reached the vendor');
    assert.ok(Buffer.from(b64.json.data[0].b64_json, 'base64').subarray(0, 8).equals(PNG_SIGNATURE));
    assert.equal(b64.json.data[0].url, undefined);

    const url = await h.post('/v1/images/generations', { model: 'delta-img-5-0-260128', prompt: 'three kites', n: 3, response_format: 'url', size: '1K' });
    assert.equal(url.status, 200, url.text);
    assert.equal(url.json.data.length, 3, 'n 3 → sequential generation of 3 images');
    const link = url.json.data[0].url as string;
    assert.ok(link.startsWith(`${h.url}/v1/links/`), `a gateway link, not the vendor's URL: ${link}`);
    const vendorUrl = await vendorUrlBehind(h.store, link);
    assert.ok(vendorUrl.startsWith(sim().url), 'the link stands for the vendor URL');
    const id = /\/files\/(img-[^/]+)\.png$/.exec(vendorUrl)![1]!;
    const bytes = Buffer.from(await (await fetch(link)).arrayBuffer());
    assert.ok(bytes.equals(sim().result!(id)!));

    const bad = await h.post('/v1/images/generations', { model: 'delta-img-4-5-251128', prompt: 'x', aspect_ratio: '5:4' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'invalid_request');
    assert.equal(bad.json.error.param, 'aspect_ratio');
  });

  test('video 2: submit → in progress → completed; video and last frame downloaded as the vendor serves them', async () => {
    const sub = await h.post('/v1/video/generations', {
      model: 'delta-vid-2-0-260128',
      prompt: 'a paper boat',
      size: '720x1280',
      metadata: { duration: 6, return_last_frame: true, seed: 9 },
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.equal(sub.json.seconds, '6');
    const v = (await vendorTask(id)).body as Record<string, unknown>;
    assert.deepEqual(
      { prompt: v.prompt, resolution: v.resolution, ratio: v.ratio, duration: v.duration, seed: v.seed, returnLastFrame: v.returnLastFrame },
      { prompt: 'a paper boat', resolution: '720p', ratio: '9:16', duration: 6, seed: 9, returnLastFrame: true },
    );
    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => (seen.add(t.status), t.status === 'completed'));
    assert.ok(seen.has('queued') || seen.has('in_progress'));
    assert.equal(done.size, '720x1280');
    assert.equal(done.seconds, '6');
    const rec = await h.record(id);
    assert.equal(rec!.vendorStatus, 'succeeded');
    const video = await h.get(`/v1/videos/${id}/content`);
    assert.equal(video.status, 200);
    assert.equal(video.headers.get('content-type'), 'video/mp4');
    assert.ok(video.bytes.equals(sim().result!(rec!.upstreamId!, 0)!));
    const frame = await h.get(`/v1/videos/${id}/content?index=1`);
    assert.equal(frame.status, 200);
    assert.ok(frame.bytes.equals(sim().result!(rec!.upstreamId!, 1)!));
  });

  test('assets: create (data URI), look up, and reference as asset:// in content[] of a video 2 task', async () => {
    const data = `data:image/png;base64,${makePng(8, 8, 3).toString('base64')}`;
    const made = await h.post('/v1/kappa/asset/create', { type: 'image', data, name: 'dancer' });
    assert.equal(made.status, 200, made.text);
    assert.match(made.json.id, /^asset-/);
    assert.equal(made.json.asset_url, `asset://${made.json.id}`);
    assert.equal(made.json.status, 'active');
    const got = await h.get(`/v1/kappa/asset/${made.json.id}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json, made.json);
    const byPost = await h.post('/v1/kappa/asset/get', { asset_id: made.json.asset_url });
    assert.deepEqual(byPost.json, made.json);
    const missing = await h.get('/v1/kappa/asset/asset-ffff');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'not_found');

    const sub = await h.post('/v1/videos', {
      model: 'delta-vid-2-0-fast-260128',
      content: [
        { type: 'text', text: 'the dancer dances' },
        { type: 'image_url', image_url: { url: made.json.asset_url }, role: 'reference_image' },
      ],
    });
    assert.equal(sub.status, 200, sub.text);
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed' || t.status === 'failed');
    assert.equal(done.status, 'completed', JSON.stringify(done));

    // An asset of another type is refused by the vendor; its message reaches the client.
    const wrong = await h.post('/v1/video/generations', {
      model: 'delta-vid-2-0-260128',
      content: [
        { type: 'text', text: 'x' },
        { type: 'audio_url', audio_url: { url: made.json.asset_url }, role: 'reference_audio' },
      ],
    });
    assert.equal(wrong.status, 400);
    assert.match(wrong.json.error.message, /is of type image, not audio/);
  });

  test('video 1.5: multipart first and last frames, resolution from the model name', async () => {
    const form = new FormData();
    form.set('model', 'delta-vid-1-5-pro_1080p');
    form.set('prompt', 'from dawn to dusk');
    form.set('seconds', '11');
    form.set('first_frame_image', new Blob([makePng(4, 4, 1)], { type: 'image/png' }), 'dawn.png');
    form.set('last_frame_image', new Blob([makePng(4, 4, 2)], { type: 'image/png' }), 'dusk.png');
    const res = await fetch(`${h.url}/v1/videos`, { method: 'POST', body: form, headers: { authorization: `Bearer ${h.key}` } });
    const sub = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(sub));
    const t = await vendorTask(sub.id);
    assert.equal(t.model, 'delta-vid-1-5-pro');
    assert.equal((t.body as any).resolution, '1080p');
    assert.equal((t.body as any).duration, 11);
    const done = await h.waitFor(sub.id, (x) => x.status === 'completed');
    assert.equal(done.seconds, '11');
    const rec = await h.record(sub.id);
    const file = await h.get(`/v1/videos/${sub.id}/content`);
    assert.ok(file.bytes.equals(sim().result!(rec!.upstreamId!)!));
  });

  test('family limits and modes are enforced before the vendor is called', async () => {
    const before = sim().stats.submits!;
    const cases: [unknown, RegExp][] = [
      [{ model: 'delta-vid-1-5-pro_720p', prompt: 'x', duration: 3 }, /duration must be >= 4/],
      [{ model: 'delta-vid-1-5-pro_720p', prompt: 'x', duration: 12 }, /duration must be <= 11/],
      [
        { model: 'delta-vid-1-5-pro_720p', prompt: 'x', images: ['https://img.example/a.png'] },
        /mode reference is not supported by the delta video 1.5 family/,
      ],
      [{ model: 'delta-vid-2-0-260128', prompt: 'x', duration: 16 }, /duration must be <= 15/],
    ];
    for (const [body, message] of cases) {
      const r = await h.post('/v1/video/generations', body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.error.code, 'invalid_request');
      assert.match(r.json.error.message, message);
    }
    assert.equal(sim().stats.submits, before, 'no refused request reached the vendor');
  });

  test('a task the vendor fails ends failed with its code, refunded; vendor refusals are mapped', async () => {
    const key = await h.createKey(5);
    const auth = { authorization: `Bearer ${key}` };
    const sub = await h.post('/v1/video/generations', { model: 'delta-vid-2-0-260128', prompt: 'doomed [sim:fail]' }, auth);
    assert.equal(sub.status, 200, sub.text);
    const last = await h.waitFor(sub.json.id, (t) => t.status === 'failed' || t.status === 'completed', { key });
    assert.equal(last.status, 'failed');
    assert.equal(last.error.code, 'OutputVideoSensitiveContentDetected');
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the failed task was refunded');

    const refusals: [string, unknown, number, string][] = [
      ['/v1/video/generations', { model: 'delta-vid-2-0-260128', prompt: 'x [sim:fault=401]' }, 502, 'bad_response'],
      ['/v1/video/generations', { model: 'delta-vid-2-0-260128', prompt: 'x [sim:fault=429]' }, 429, 'too_many_requests'],
      ['/v1/video/generations', { model: 'delta-vid-2-0-260128', prompt: 'x [sim:fault=503]' }, 503, 'upstream_unavailable'],
      ['/v1/images/generations', { model: 'delta-img-4-5-251128', prompt: 'x [sim:fail]' }, 400, 'invalid_request'],
      ['/v1/images/generations', { model: 'delta-img-4-5-251128', prompt: 'x [sim:fault=500]' }, 502, 'bad_response'],
    ];
    for (const [path, body, status, code] of refusals) {
      const r = await h.post(path, body, auth);
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
      assert.equal((r.json.error ?? r.json).code, code, r.text);
    }
  });
});
