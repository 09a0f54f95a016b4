/**
 * Contract (issue 26): the official `openai` package, the reference for the zeta-openai protocol
 * (DESIGN, "The vendors are the reference"), pointed straight at the zeta-openai simulator. Every
 * call the gateway's routes and profile use is driven as the package sends it (images.generate and
 * images.edit, videos.create/retrieve/downloadContent/remix) and must be accepted, and every answer
 * must carry the fields the package's types require; its error classes must come out of the
 * vendor's error answers. The image streams (`stream: true`) are iterated as the package reads
 * them, every partial image before the completed event, and a mid-stream error event throws its
 * APIError. Where the simulator disagreed with the package, the package won.
 *
 * The simulator's model names follow the vendor's lines: zeta-image-1/-2 are GPT-image-style
 * (answers always base64, token usage), zeta-draw-3/-2 the older dall-e-3/-2 style, zeta-video-2
 * the default video model (the package's `sora-2`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { Simulator } from '../../src/sim/http.js';
import { makePng, pngSize } from '../../src/sim/png.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import { webpSize } from '../../src/sim/zeta-webp.js';
import { assertImages, assertUsage, assertVideo, failsWith, hasKeys } from './helpers-openai-shapes.js';

const png = (w: number, h: number, seed: number, name: string) => toFile(makePng(w, h, seed), name, { type: 'image/png' });

/** The fields the package's stream event types require (ImageGen…/ImageEdit… PartialImageEvent and CompletedEvent). */
const EVENT_FIELDS = ['type', 'b64_json', 'background', 'created_at', 'output_format', 'quality', 'size'];

/** Every event of a stream the package iterates, each checked for its type's required fields. */
async function eventsOf(stream: AsyncIterable<OpenAI.Images.ImageGenStreamEvent | OpenAI.Images.ImageEditStreamEvent>): Promise<string[]> {
  const types: string[] = [];
  for await (const e of stream) {
    hasKeys(e, [...EVENT_FIELDS, e.type.endsWith('.completed') ? 'usage' : 'partial_image_index'], e.type);
    assert.ok(pngSize(Buffer.from(e.b64_json, 'base64')), `${e.type}: b64_json is a PNG`);
    if (e.type.endsWith('.completed')) assertUsage((e as OpenAI.Images.ImageGenCompletedEvent).usage);
    else assert.equal((e as OpenAI.Images.ImageGenPartialImageEvent).partial_image_index, types.length, 'partial images in order');
    types.push(e.type);
  }
  return types;
}
const bytesOf = async (r: Response) => Buffer.from(await r.arrayBuffer());

describe('openai 6.49.0 against the zeta-openai simulator', () => {
  let sim: Simulator;
  let client: OpenAI;
  /** The vendor's record of a video: what it kept of the request (seconds, size, references). */
  const kept = (id: string) => sim.tasks!.get(id)!.body as { seconds: string; size: string; references: number };

  /** Retrieves a video until it ends (bounded: 200 looks, 20 ms apart; the simulator finishes in 100 ms). */
  async function ended(id: string): Promise<OpenAI.Videos.Video> {
    for (let i = 0; i < 200; i++) {
      const v = await client.videos.retrieve(id);
      assertVideo(v);
      if (v.status === 'completed' || v.status === 'failed') return v;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`video ${id} did not end`);
  }

  before(async () => {
    sim = await SIMULATORS['zeta-openai']!({ finishMs: 100 });
    client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: sim.secrets.key!, maxRetries: 0, timeout: 10_000 });
  });
  after(() => sim?.close());

  describe('images.generate', () => {
    test('a GPT-image-style model asked with no response_format answers b64_json, with usage and its input_tokens_details', async () => {
      const r = await client.images.generate({ model: 'zeta-image-2', prompt: 'a red kite', size: '1536x1024' });
      assertImages(r, 1);
      assert.equal(r.data![0]!.url, undefined, 'GPT image models answer no URL');
      assert.deepEqual(pngSize(Buffer.from(r.data![0]!.b64_json!, 'base64')), { width: 96, height: 64 });
      assert.ok(r.usage, 'GPT image models report token usage');
      assert.equal(r.usage.input_tokens_details.image_tokens, 0, 'no input image');
      assert.equal(r.usage.input_tokens_details.text_tokens, r.usage.input_tokens);
    });

    test('a GPT-image-style model refuses response_format, as the real ones do (BadRequestError, unknown_parameter)', async () => {
      for (const response_format of ['url', 'b64_json'] as const) {
        const err = await failsWith(client.images.generate({ model: 'zeta-image-1', prompt: 'x', response_format }), OpenAI.BadRequestError);
        assert.deepEqual([err.status, err.type, err.param, err.code], [400, 'invalid_request_error', 'response_format', 'unknown_parameter']);
      }
    });

    test('dall-e-style models: response_format url (the default) is a file served with no key, b64_json inline', async () => {
      const byUrl = await client.images.generate({ model: 'zeta-draw-3', prompt: 'a city at night', size: '1792x1024', response_format: 'url' });
      assertImages(byUrl, 1);
      assert.equal(byUrl.data![0]!.revised_prompt, 'a city at night', 'the dall-e-3 style reports its revised prompt');
      const file = await fetch(byUrl.data![0]!.url!);
      assert.equal(file.status, 200);
      assert.deepEqual(pngSize(await bytesOf(file)), { width: 112, height: 64 });

      const byDefault = await client.images.generate({ model: 'zeta-draw-2', prompt: 'an icon', size: '512x512' });
      assertImages(byDefault, 1);
      assert.equal(typeof byDefault.data![0]!.url, 'string', 'url is the dall-e default');

      const inline = await client.images.generate({ model: 'zeta-draw-2', prompt: 'two icons', size: '256x256', n: 2, response_format: 'b64_json' });
      assertImages(inline, 2);
      assert.deepEqual(pngSize(Buffer.from(inline.data![1]!.b64_json!, 'base64')), { width: 16, height: 16 });
    });

    test('no model: the dall-e-2 style, unless a parameter only GPT image models take is given (the package documents both)', async () => {
      const plain = await client.images.generate({ prompt: 'an icon', size: '256x256' });
      assertImages(plain, 1);
      assert.equal(typeof plain.data![0]!.url, 'string');
      const gpt = await client.images.generate({ prompt: 'an icon', quality: 'high' });
      assertImages(gpt, 1);
      assert.equal(typeof gpt.data![0]!.b64_json, 'string', 'quality high names a GPT image model: base64');
    });
  });

  describe('images.edit', () => {
    test('typed files: two images (sent as image[]) and a mask on a GPT-image-style model; both images reach the vendor', async () => {
      const r = await client.images.edit({
        model: 'zeta-image-1',
        prompt: 'put a hat on the cat',
        image: [await png(8, 8, 1, 'cat.png'), await png(8, 8, 2, 'dog.png')],
        mask: await png(8, 8, 3, 'mask.png'),
        size: '1024x1024',
      });
      assertImages(r, 1);
      assert.equal(typeof r.data![0]!.b64_json, 'string');
      assert.equal(r.usage?.input_tokens_details.image_tokens, 2 * 272, 'the simulator counts 272 tokens per input image');
    });

    test('dall-e-2 style: one image, answered as a URL; a second image is refused as the package documents', async () => {
      const r = await client.images.edit({
        model: 'zeta-draw-2',
        prompt: 'smaller',
        image: await png(8, 8, 4, 'a.png'),
        size: '512x512',
        response_format: 'url',
      });
      assertImages(r, 1);
      assert.equal((await fetch(r.data![0]!.url!)).status, 200);
      const err = await failsWith(
        client.images.edit({ model: 'zeta-draw-2', prompt: 'x', image: [await png(8, 8, 5, 'a.png'), await png(8, 8, 6, 'b.png')] }),
        OpenAI.BadRequestError,
      );
      assert.equal(err.param, 'image');
    });
  });

  describe('image streams (stream: true)', () => {
    test('images.generate({ stream: true, partial_images: 2 }) iterates both partial images, then the completed one', async () => {
      const stream = await client.images.generate({ model: 'zeta-image-1', prompt: 'a lighthouse', stream: true, partial_images: 2 });
      assert.deepEqual(await eventsOf(stream), ['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    });

    test('images.edit({ stream: true, partial_images: 1 }): the package sends both as form fields; the partial image, then the completed one', async () => {
      const stream = await client.images.edit({
        model: 'zeta-image-2',
        prompt: 'at night',
        image: await png(8, 8, 7, 'day.png'),
        stream: true,
        partial_images: 1,
      });
      assert.deepEqual(await eventsOf(stream), ['image_edit.partial_image', 'image_edit.completed']);
    });

    test('a mid-stream error event (stream-error) makes the iterator throw APIError after the first event', async () => {
      const stream = await client.images.generate(
        { model: 'zeta-image-1', prompt: 'a lighthouse', stream: true, partial_images: 2 },
        { headers: { 'x-sim-fault': 'stream-error' } },
      );
      const seen: string[] = [];
      const err = await failsWith(
        (async () => {
          for await (const e of stream) seen.push(e.type);
        })(),
        OpenAI.APIError,
      );
      assert.deepEqual(seen, ['image_generation.partial_image']);
      assert.deepEqual([err.type, err.code, err.param], ['server_error', 'server_error', null]);
      assert.match(err.message, /The server had an error/);
    });

    test('a model that does not stream: BadRequestError naming stream, before any event', async () => {
      const err = await failsWith(client.images.generate({ model: 'zeta-draw-3', prompt: 'x', stream: true }), OpenAI.BadRequestError);
      assert.deepEqual([err.status, err.param, err.code], [400, 'stream', 'unsupported_value']);
    });
  });

  describe('videos', () => {
    test('create (text): every field of Video, seconds and size as sent', async () => {
      const v = await client.videos.create({ model: 'zeta-video-2', prompt: 'a paper boat', seconds: '8', size: '1280x720' });
      assertVideo(v);
      assert.deepEqual(
        [v.model, v.status, v.progress, v.seconds, v.size, v.prompt, v.completed_at, v.error],
        ['zeta-video-2', 'queued', 0, '8', '1280x720', 'a paper boat', null, null],
      );
    });

    test('create without model: the default model (the package documents sora-2), 4 s, 720x1280', async () => {
      const v = await client.videos.create({ prompt: 'a paper boat' });
      assertVideo(v);
      assert.deepEqual([v.model, v.seconds, v.size], ['zeta-video-2', '4', '720x1280']);
    });

    test("seconds other than 4, 8 or 12 is refused for every model of the protocol, the package's names included", async () => {
      for (const model of ['sora-2', 'zeta-video-2']) {
        const err = await failsWith(client.videos.create({ model, prompt: 'x', seconds: '5' as OpenAI.Videos.VideoSeconds }), OpenAI.BadRequestError);
        assert.deepEqual([err.param, err.code], ['seconds', 'invalid_value'], model);
      }
      assertVideo(await client.videos.create({ model: 'sora-2', prompt: 'x', seconds: '12' }));
    });

    test('input_reference: an uploaded file, an {image_url} URL and an {image_url} data URL each reach the vendor', async () => {
      const upload = await client.videos.create({ model: 'zeta-video-2', prompt: 'from a file', input_reference: await png(16, 9, 7, 'ref.png') });
      assertVideo(upload);
      assert.equal(kept(upload.id).references, 1);
      const byUrl = await client.videos.create({
        model: 'zeta-video-2',
        prompt: 'from a link',
        input_reference: { image_url: 'https://img.example/first.png' },
      });
      assertVideo(byUrl);
      assert.equal(kept(byUrl.id).references, 1, 'input_reference[image_url] was read, not dropped');
      const dataUrl = `data:image/png;base64,${makePng(16, 9, 8).toString('base64')}`;
      const byData = await client.videos.create({ model: 'zeta-video-2', prompt: 'from a data URL', input_reference: { image_url: dataUrl } });
      assert.equal(kept(byData.id).references, 1);
      const err = await failsWith(
        client.videos.create({ model: 'zeta-video-2', prompt: 'x', input_reference: await toFile(Buffer.from('plain'), 'a.txt', { type: 'text/plain' }) }),
        OpenAI.BadRequestError,
      );
      assert.equal(err.param, 'input_reference');
    });

    test('retrieve until completed, downloadContent of the video and of its thumbnail and spritesheet variants, then remix', async () => {
      const created = await client.videos.create({ model: 'zeta-video-2', prompt: 'a paper boat', seconds: '8', size: '1280x720' });
      const early = await failsWith(client.videos.downloadContent(created.id), OpenAI.NotFoundError);
      assert.equal(early.code, 'video_not_ready');
      const done = await ended(created.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.progress, 100);
      assert.equal(typeof done.completed_at, 'number');
      assert.equal(typeof done.expires_at, 'number');

      const video = await client.videos.downloadContent(created.id);
      assert.equal(video.headers.get('content-type'), 'video/mp4');
      assert.ok((await bytesOf(video)).equals(sim.result!(created.id)!), "the vendor's bytes");
      assert.ok((await bytesOf(await client.videos.downloadContent(created.id, { variant: 'video' }))).equals(sim.result!(created.id)!));
      for (const variant of ['thumbnail', 'spritesheet'] as const) {
        const r = await client.videos.downloadContent(created.id, { variant });
        assert.equal(r.status, 200, variant);
        assert.equal(r.headers.get('content-type'), 'image/webp', variant);
        assert.ok(webpSize(await bytesOf(r)), `${variant} is a WebP picture`);
      }

      const remix = await client.videos.remix(created.id, { prompt: 'the same boat, at night' });
      assertVideo(remix);
      assert.notEqual(remix.id, created.id);
      assert.deepEqual(
        [remix.remixed_from_video_id, remix.model, remix.seconds, remix.size, remix.status],
        [created.id, 'zeta-video-2', '8', '1280x720', 'queued'],
      );
    });
  });

  describe('videos.list and videos.delete', () => {
    test('list pages newest first in the list envelope; delete removes a finished video, refuses one under way', async () => {
      const a = await client.videos.create({ model: 'zeta-video-2', prompt: 'list one' });
      const b = await client.videos.create({ model: 'zeta-video-2', prompt: 'list two [sim:finish=60000]' });
      const page = await client.videos.list({ limit: 2 });
      for (const v of page.data) assertVideo(v);
      assert.deepEqual(
        page.data.map((v) => v.id),
        [b.id, a.id],
      );
      assert.equal(page.hasNextPage(), page.has_more);
      const asc = await client.videos.list({ order: 'asc', limit: 100 });
      assert.ok(asc.data.findIndex((v) => v.id === a.id) < asc.data.findIndex((v) => v.id === b.id), 'asc is oldest first');

      await ended(a.id);
      const gone = await client.videos.delete(a.id);
      assert.deepEqual(gone, { id: a.id, object: 'video.deleted', deleted: true });
      assert.equal((await failsWith(client.videos.retrieve(a.id), OpenAI.NotFoundError)).code, 'video_not_found');
      assert.ok(!(await client.videos.list({ limit: 100 })).data.some((v) => v.id === a.id), 'a deleted video is not listed');
      const busy = await failsWith(client.videos.delete(b.id), OpenAI.BadRequestError);
      assert.deepEqual([busy.param, busy.code], ['video_id', 'invalid_value']);
    });
  });

  describe("errors come out as the package's classes, with the vendor's type, param and code", () => {
    test('400 BadRequestError', async () => {
      const err = await failsWith(
        client.videos.create({ model: 'zeta-video-2', prompt: 'x', size: '1920x1080' as OpenAI.Videos.VideoSize }),
        OpenAI.BadRequestError,
      );
      assert.deepEqual([err.status, err.type, err.param, err.code], [400, 'invalid_request_error', 'size', 'invalid_value']);
      assert.match(err.message, /Supported values are/);
    });

    test('401 AuthenticationError', async () => {
      const wrong = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'not-the-key', maxRetries: 0 });
      for (const call of [wrong.images.generate({ model: 'zeta-image-1', prompt: 'x' }), wrong.videos.retrieve('video_x')]) {
        const err = await failsWith(call, OpenAI.AuthenticationError);
        assert.deepEqual([err.status, err.code], [401, 'invalid_api_key']);
      }
    });

    test('404 NotFoundError: an unknown video, on retrieve, downloadContent and remix', async () => {
      for (const call of [
        client.videos.retrieve('video_nope'),
        client.videos.downloadContent('video_nope'),
        client.videos.remix('video_nope', { prompt: 'x' }),
      ]) {
        const err = await failsWith(call, OpenAI.NotFoundError);
        assert.deepEqual([err.status, err.code, err.param], [404, 'video_not_found', 'video_id']);
      }
    });

    test('429 RateLimitError with the wait in retry-after', async () => {
      const err = await failsWith(client.images.generate({ model: 'zeta-image-1', prompt: 'x' }, { headers: { 'x-sim-fault': '429' } }), OpenAI.RateLimitError);
      assert.deepEqual([err.status, err.type, err.code], [429, 'requests', 'rate_limit_exceeded']);
      assert.equal(err.headers?.get('retry-after'), '2');
    });

    test('500 and 503 InternalServerError', async () => {
      for (const status of ['500', '503']) {
        const err = await failsWith(
          client.videos.create({ model: 'zeta-video-2', prompt: 'x' }, { headers: { 'x-sim-fault': status } }),
          OpenAI.InternalServerError,
        );
        assert.deepEqual([err.status, err.type, err.code], [Number(status), 'server_error', 'server_error']);
      }
    });
  });
});
