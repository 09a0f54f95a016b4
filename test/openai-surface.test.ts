/**
 * The rest of the OpenAI surface the official `openai` client calls (issue 13), against a real
 * gateway in front of the simulators: downloadContent's thumbnail variant (before: 409).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startTaskHarness, type TaskHarness } from './helpers/task-harness.js';

/** Retrieves a video through the client until it ends (bounded: 200 tries, 25 ms apart). */
async function untilEnded(client: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  let last: OpenAI.Videos.Video | undefined;
  for (let i = 0; i < 200; i++) {
    last = await client.videos.retrieve(id);
    if (last.status === 'completed' || last.status === 'failed') return last;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`video ${id} did not end; last answer ${JSON.stringify(last)}`);
}

/** The error a client call fails with; fails the test when it succeeds. */
async function failure(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await call.then(
    (v) => assert.fail(`expected an error, got ${JSON.stringify(v)?.slice(0, 300)}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof OpenAI.APIError, String(err));
  return err;
}

/** Checks the error is shape A with this status and code. */
function isShapeA(err: InstanceType<typeof OpenAI.APIError>, status: number, code: string): void {
  assert.equal(err.status, status, err.message);
  assert.equal(err.type, 'svc_api_error');
  assert.equal(err.code, code, err.message);
  const body = err.error as { message?: unknown; param?: unknown };
  assert.equal(typeof body.message, 'string');
  assert.equal(typeof body.param, 'string');
}

describe('the official openai client on the rest of the OpenAI surface', () => {
  let h: TaskHarness;
  let client: OpenAI;
  const create = (c: OpenAI, prompt: string, model = 'epsilon-video-3') => c.videos.create({ model, prompt, seconds: '4', size: '1280x720' });

  before(async () => {
    h = await startTaskHarness({ finishMs: 150 });
    client = new OpenAI({ baseURL: h.url + '/v1', apiKey: h.key, maxRetries: 0, timeout: 10_000 });
  });
  after(() => h?.close());

  test('downloadContent thumbnail: the cover where the vendor makes one, else a 404 of shape A', async () => {
    const video = await create(client, 'no thumbnail here');
    assert.equal((await untilEnded(client, video.id)).status, 'completed');
    for (const variant of ['thumbnail', 'spritesheet'] as const) {
      const err = await failure(client.videos.downloadContent(video.id, { variant }));
      assert.ok(err instanceof OpenAI.NotFoundError, `${variant}: ${String(err)}`);
      isShapeA(err, 404, 'not_found');
      assert.equal(err.param, 'variant');
    }
    // The video variant is the video, as without a variant.
    const asked = Buffer.from(await (await client.videos.downloadContent(video.id, { variant: 'video' })).arrayBuffer());
    assert.ok(asked.equals(Buffer.from(await (await client.videos.downloadContent(video.id)).arrayBuffer())));

    // The beta vendor makes a cover image with each video: that is the thumbnail.
    const beta = await client.videos.create({ model: 'beta-q3-pro', prompt: 'a cat with a cover' });
    assert.equal((await untilEnded(client, beta.id)).status, 'completed');
    const thumb = await client.videos.downloadContent(beta.id, { variant: 'thumbnail' });
    assert.equal(thumb.status, 200);
    assert.equal(thumb.headers.get('content-type'), 'image/png');
    const upstreamId = (await h.record(beta.id))!.upstreamId!;
    const bytes = Buffer.from(await thumb.arrayBuffer());
    assert.ok(bytes.equals(h.sims['beta-native']!.result!(upstreamId, 1)!), "the thumbnail is the vendor's cover image");
    isShapeA(await failure(client.videos.downloadContent(beta.id, { variant: 'spritesheet' })), 404, 'not_found');
  });
});
