/**
 * The official `openai` package against the gateway's OpenAI-format video routes (POST /v1/videos,
 * GET /v1/videos/{id}, GET /v1/videos/{id}/content), in front of the zeta-openai simulator. The
 * client sends multipart/form-data for creation; an `input_reference` upload or `{image_url}` must
 * reach the vendor. And `images.generate`: a GPT-image-style model's base64 by default, and asked
 * for a URL a gateway link, never the vendor's; with `stream: true`, `images.generate` and
 * `images.edit` iterate the vendor's events relayed through the gateway (issue 39).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { makePng, pngSize } from '../../src/sim/png.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { until } from '../helpers/until.js';

/** Retrieves a video through the client until it ends (bounded: 200 tries, 25 ms apart). */
async function untilEnded(client: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  let last: OpenAI.Videos.Video | undefined;
  for (let i = 0; i < 200; i++) {
    last = await client.videos.retrieve(id);
    assert.equal(last.id, id);
    if (last.status === 'completed' || last.status === 'failed') return last;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`video ${id} did not end; last answer ${JSON.stringify(last)}`);
}

describe('the official openai client on /v1/videos and /v1/images', () => {
  let h: TaskHarness;
  let client: OpenAI;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
    client = new OpenAI({ baseURL: h.url + '/v1', apiKey: h.key, maxRetries: 0, timeout: 10_000 });
  });
  after(() => h.close());

  test("create (multipart) → retrieve until completed → downloadContent gives the vendor's bytes", async () => {
    const submitsBefore = h.sims['zeta-openai']!.stats.submits!;
    const created = await client.videos.create({
      model: 'epsilon-video-3',
      prompt: 'a paper boat drifting down a rain gutter',
      seconds: '4',
      size: '1280x720',
    });
    assert.match(created.id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(created.object, 'video');
    assert.equal(created.model, 'epsilon-video-3');
    assert.ok(['queued', 'in_progress'].includes(created.status), created.status);
    assert.equal(h.sims['zeta-openai']!.stats.submits, submitsBefore + 1, 'one submission reached the vendor');

    const rec = await h.record(created.id);
    assert.ok(rec?.upstreamId, 'the task record holds the vendor id');
    const vendorTask = h.sims['zeta-openai']!.tasks!.get(rec.upstreamId)!;
    assert.equal(vendorTask.model, 'epsilon-video-3');
    assert.equal(vendorTask.prompt, 'a paper boat drifting down a rain gutter');
    assert.deepEqual(vendorTask.body, { seconds: '4', size: '1280x720', references: 0, remixOf: null }, 'seconds and size reached the vendor as sent');

    const done = await untilEnded(client, created.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.progress, 100);
    assert.equal(done.seconds, '4');
    assert.equal(done.size, '1280x720');
    assert.equal(typeof done.completed_at, 'number');

    const response = await client.videos.downloadContent(created.id);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'video/mp4');
    const bytes = Buffer.from(await response.arrayBuffer());
    const expected = h.sims['zeta-openai']!.result!(rec.upstreamId);
    assert.ok(expected && expected.length > 0, 'the vendor has the result');
    assert.ok(bytes.equals(expected), `the downloaded ${bytes.length} bytes are the vendor's ${expected.length}`);
  });

  test('an uploaded input_reference file reaches the vendor', async () => {
    const png = makePng(16, 9, 7);
    const created = await client.videos.create({
      model: 'epsilon-video-3',
      prompt: 'the boat from this picture',
      seconds: '4',
      size: '1280x720',
      input_reference: await toFile(png, 'ref.png', { type: 'image/png' }),
    });
    assert.ok(['queued', 'in_progress'].includes(created.status), created.status);
    const rec = await h.record(created.id);
    assert.ok(rec?.upstreamId);
    const vendorTask = h.sims['zeta-openai']!.tasks!.get(rec.upstreamId)!;
    // The simulator counts a reference only once it checked it: an image/png file or data URI.
    assert.equal((vendorTask.body as { references: number }).references, 1, 'the vendor received one input_reference');

    const done = await untilEnded(client, created.id);
    assert.equal(done.status, 'completed');
    const bytes = Buffer.from(await (await client.videos.downloadContent(created.id)).arrayBuffer());
    assert.ok(bytes.equals(h.sims['zeta-openai']!.result!(rec.upstreamId)!));
  });

  test('an input_reference {image_url} (sent by the client as the form part input_reference[image_url]) reaches the vendor', async () => {
    const created = await client.videos.create({
      model: 'epsilon-video-3',
      prompt: 'the boat from this link',
      input_reference: { image_url: 'https://img.example/boat.png' },
    });
    assert.ok(['queued', 'in_progress'].includes(created.status), created.status);
    const rec = await h.record(created.id);
    const vendorTask = h.sims['zeta-openai']!.tasks!.get(rec!.upstreamId!)!;
    assert.equal((vendorTask.body as { references: number }).references, 1, 'the vendor received the reference, not a silently dropped field');
  });

  test('an uploaded file of a type the vendor refuses is a 400 BadRequestError, and nothing is charged', async () => {
    const key = await h.createKey(1);
    const limited = new OpenAI({ baseURL: h.url + '/v1', apiKey: key, maxRetries: 0, timeout: 10_000 });
    const submitsBefore = h.sims['zeta-openai']!.stats.submits!;
    const err = await limited.videos
      .create({ model: 'epsilon-video-3', prompt: 'x', input_reference: await toFile(Buffer.from('plain text'), 'ref.txt', { type: 'text/plain' }) })
      .then(
        () => assert.fail('a text/plain reference was accepted'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.type, 'svc_api_error');
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.param, 'input_reference');
    assert.equal(h.sims['zeta-openai']!.stats.submits, submitsBefore, 'no vendor task was created');
    // The quota of 1 is still there: the refused submission was not charged.
    const ok = await limited.videos.create({ model: 'epsilon-video-3', prompt: 'x', seconds: '4', size: '1280x720' });
    assert.ok(['queued', 'in_progress'].includes(ok.status));
  });

  test('a wrong key is an AuthenticationError with status 401', async () => {
    const wrong = new OpenAI({ baseURL: h.url + '/v1', apiKey: 'gw-not-a-key-of-this-gateway', maxRetries: 0, timeout: 10_000 });
    const submitsBefore = h.sims['zeta-openai']!.stats.submits!;
    const err = await wrong.videos.create({ model: 'epsilon-video-3', prompt: 'x', seconds: '4', size: '1280x720' }).then(
      () => assert.fail('a wrong key was accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.AuthenticationError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.type, 'svc_api_error');
    assert.equal(h.sims['zeta-openai']!.stats.submits, submitsBefore, 'nothing reached the vendor');

    const err2 = await wrong.videos.retrieve('task_AAAAAAAAAAAAAAAAAAAAAAAA').then(
      () => assert.fail('a wrong key was accepted'),
      (e: unknown) => e,
    );
    assert.ok(err2 instanceof OpenAI.AuthenticationError, String(err2));
    assert.equal(err2.status, 401);
  });

  test('a missing task is a NotFoundError on retrieve and on downloadContent', async () => {
    for (const call of [
      () => client.videos.retrieve('task_AAAAAAAAAAAAAAAAAAAAAAAA'),
      () => client.videos.downloadContent('task_AAAAAAAAAAAAAAAAAAAAAAAA'),
      () => client.videos.retrieve('nope'),
    ]) {
      const err = await call().then(
        () => assert.fail('a missing task was found'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.equal(err.status, 404);
      assert.equal(err.code, 'task_not_found');
    }
  });

  test("images.generate on a GPT-image-style model with no response_format: b64_json, and usage with the input_tokens_details the client's type requires", async () => {
    const image = await client.images.generate({ model: 'zeta-image-2', prompt: 'a red kite', size: '1024x1024' });
    assert.equal(typeof image.data?.[0]?.b64_json, 'string');
    assert.equal(image.data?.[0]?.url, undefined);
    assert.ok(image.usage, JSON.stringify(image));
    assert.equal(typeof image.usage.input_tokens_details.image_tokens, 'number');
    assert.equal(typeof image.usage.input_tokens_details.text_tokens, 'number');
  });

  test("images.generate with response_format url: the url is a gateway link, served with no key, never the vendor's", async () => {
    const image = await client.images.generate({ model: 'zeta-image-2', prompt: 'a red kite', size: '1024x1024', response_format: 'url' });
    const url = image.data?.[0]?.url ?? '';
    assert.match(url, new RegExp(`^${h.url}/v1/links/[A-Za-z0-9_-]{32}$`));
    assert.ok(!url.includes(h.sims['zeta-openai']!.url), 'not the vendor host');
    const file = await fetch(url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.ok(
      Buffer.from(await file.arrayBuffer())
        .subarray(1, 4)
        .equals(Buffer.from('PNG')),
    );
  });
  test('images.generate({stream: true, partial_images: 2}) iterates every partial image, in order, before the completed one', async () => {
    const sim = h.sims['zeta-openai']!;
    const streams = sim.stats.streams!;
    const stream = await client.images.generate({ model: 'zeta-image-1', prompt: 'a red kite', stream: true, partial_images: 2 });
    const events: OpenAI.Images.ImageGenStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    assert.deepEqual(
      events.map((e) => (e.type === 'image_generation.partial_image' ? `${e.type} ${e.partial_image_index}` : e.type)),
      ['image_generation.partial_image 0', 'image_generation.partial_image 1', 'image_generation.completed'],
    );
    for (const e of events) assert.ok(pngSize(Buffer.from(e.b64_json, 'base64')), `${e.type}: not a PNG`);
    const done = events.at(-1) as OpenAI.Images.ImageGenCompletedEvent;
    assert.ok(done.usage.total_tokens > 0);
    assert.equal(sim.stats.streams, streams + 1, "one vendor stream: the vendor's events, not a JSON answer cut up");
  });

  test('images.edit({stream: true}) iterates image_edit events: the partials, then the completed one', async () => {
    const stream = await client.images.edit({
      model: 'zeta-image-1',
      prompt: 'make it blue',
      image: await toFile(makePng(64, 64, 3), 'a.png', { type: 'image/png' }),
      stream: true,
      partial_images: 1,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    assert.deepEqual(types, ['image_edit.partial_image', 'image_edit.completed']);
  });

  test('a partial image reaches the client while the vendor has not finished; the client aborting ends the vendor call', async () => {
    const sim = h.sims['zeta-openai']!;
    const abandoned = sim.stats.abandoned!;
    // The vendor stalls after its first event for a minute: only a relay gives the client that event now.
    const stream = await client.images.generate({
      model: 'zeta-image-1',
      prompt: 'a red kite [sim:fault=stream-stall:60000]',
      stream: true,
      partial_images: 2,
    });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(first.done, false);
    assert.equal((first.value as OpenAI.Images.ImageGenStreamEvent).type, 'image_generation.partial_image');
    stream.controller.abort();
    await it.next().catch(() => undefined);
    // The gateway aborts its vendor call when its client goes: the simulator sees its stream left.
    await until('the vendor stream abandoned', () => sim.stats.abandoned === abandoned + 1);
  });

  test("a vendor error after the first event: the client throws the gateway's error event as an APIError", async () => {
    const stream = await client.images.generate({ model: 'zeta-image-1', prompt: 'a red kite [sim:fault=stream-error]', stream: true, partial_images: 1 });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const e of stream) seen.push(e.type);
    })().then(
      () => assert.fail('the stream ended without an error'),
      (e: unknown) => e,
    );
    assert.deepEqual(seen, ['image_generation.partial_image']);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.match(err.message, /failed while making the image/);
  });

  test('stream: true on a model whose vendor does not stream is a BadRequestError naming stream, before any vendor call', async () => {
    const images = h.sims['zeta-openai']!.stats.images;
    const err = await client.images.generate({ model: 'zeta-draw-3', prompt: 'a red kite', stream: true }).then(
      () => assert.fail('streamed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal((err.error as { param?: string }).param, 'stream');
    assert.equal(h.sims['zeta-openai']!.stats.images, images);
  });
});
