/**
 * The rest of the OpenAI surface the official `openai` client calls (issue 13): models.list and
 * models.retrieve (GET /v1/models[/{id}]), videos.list with its pages (GET /v1/videos),
 * videos.delete (DELETE /v1/videos/{id}) and downloadContent's thumbnail variant, against a real
 * gateway in front of the simulators. Before these routes the client got 404, 405, 405 and 409.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { hashKey, generateKey } from '../../src/tokens/keys.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

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
  const clientFor = (key: string) => new OpenAI({ baseURL: h.url + '/v1', apiKey: key, maxRetries: 0, timeout: 10_000 });
  /** A token of the harness store with this group and list of models. */
  const tokenKey = async (group: string, models: string[] | null, quota: number | null = null) => {
    const key = generateKey();
    await h.store.createToken({ name: `surface-${group}-${models?.length ?? 'all'}`, keyHash: hashKey(key), group, models, quota });
    return key;
  };
  const create = (c: OpenAI, prompt: string, model = 'epsilon-video-3') => c.videos.create({ model, prompt, seconds: '4', size: '1280x720' });

  before(async () => {
    h = await startTaskHarness({ finishMs: 150 });
    client = clientFor(h.key);
  });
  after(() => h?.close());

  test('models.list: every model the token may use by name, in the OpenAI shape, sorted; no pattern, no fixed-model route', async () => {
    const models: OpenAI.Models.Model[] = [];
    for await (const m of client.models.list()) models.push(m);
    const ids = models.map((m) => m.id);
    for (const m of models) assert.deepEqual(m, { id: m.id, object: 'model', created: 0, owned_by: 'gateway' });
    assert.deepEqual(ids, [...ids].sort(), 'sorted by id');
    for (const id of ['epsilon-video-3', 'alpha-3-pro-image-preview', 'gamma-4.0', 'gamma_t2i_v40', 'betaq2-pro', 'mu2.6-t2v:1280*720', 'theta-H3'])
      assert.ok(ids.includes(id), `${id} is listed`);
    assert.ok(!ids.some((id) => id.endsWith('*')), 'patterns are not models');
    assert.ok(!ids.includes('kappa-asset'), 'a route with a fixed model names no model a client asks for');
    // What the list names, retrieve answers the same.
    for (const id of ['epsilon-video-3', 'mu2.6-t2v:1280*720'])
      assert.deepEqual(
        await client.models.retrieve(id),
        models.find((m) => m.id === id),
      );
  });

  test("models: a token's list of models and its group filter both list and retrieve; unknown and refused models are the same 404", async () => {
    const limited = clientFor(await tokenKey('default', ['epsilon-video-3', 'zeta-image-2', 'no-such-model', 'GV-own']));
    const ids: string[] = [];
    for await (const m of limited.models.list()) ids.push(m.id);
    // GV-own is served by a pattern: listed because the token names it.
    assert.deepEqual(ids, ['GV-own', 'epsilon-video-3', 'zeta-image-2']);
    assert.equal((await limited.models.retrieve('zeta-image-2')).id, 'zeta-image-2');
    const refused = await failure(limited.models.retrieve('alpha-3-pro-image-preview'));
    assert.ok(refused instanceof OpenAI.NotFoundError);
    isShapeA(refused, 404, 'model_not_found');
    const unknown = await failure(limited.models.retrieve('no-such-model'));
    assert.equal(unknown.message.replace('no-such-model', 'X'), refused.message.replace('alpha-3-pro-image-preview', 'X'), 'refused reads like unknown');

    const elsewhere = clientFor(await tokenKey('nobody', null));
    const none: string[] = [];
    for await (const m of elsewhere.models.list()) none.push(m.id);
    assert.deepEqual(none, [], 'no channel serves the group');
    isShapeA(await failure(elsewhere.models.retrieve('epsilon-video-3')), 404, 'model_not_found');
  });

  test('models.retrieve: a name a pattern serves is a model; a made-up one is model_not_found', async () => {
    assert.deepEqual(await client.models.retrieve('GV-anything'), { id: 'GV-anything', object: 'model', created: 0, owned_by: 'gateway' });
    isShapeA(await failure(client.models.retrieve('made-up-1')), 404, 'model_not_found');
  });

  test("videos.list: the token's own videos newest first, in pages of `limit` the client follows; asc the other way", async () => {
    const key = await h.createKey();
    const own = clientFor(key);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create(own, `boat ${i}`)).id);
    const newestFirst = [...made].reverse();

    const first = await own.videos.list({ limit: 2 });
    assert.deepEqual(
      first.data.map((v) => v.id),
      newestFirst.slice(0, 2),
    );
    assert.equal(first.has_more, true);
    assert.equal(first.last_id, newestFirst[1]);
    // The page on the wire, as OpenAI answers it (the client keeps only data, has_more and last_id).
    const wire = await h.get('/v1/videos?limit=2', { authorization: `Bearer ${key}` });
    assert.deepEqual(
      { ...wire.json, data: wire.json.data.map((v: { id: string }) => v.id) },
      {
        object: 'list',
        data: newestFirst.slice(0, 2),
        first_id: newestFirst[0],
        last_id: newestFirst[1],
        has_more: true,
      },
    );
    // Auto-pagination: the client asks again with after=last_id until has_more is false.
    const all: string[] = [];
    for await (const v of own.videos.list({ limit: 2 })) all.push(v.id);
    assert.deepEqual(all, newestFirst);
    const asc: string[] = [];
    for await (const v of own.videos.list({ limit: 3, order: 'asc' })) asc.push(v.id);
    assert.deepEqual(asc, made);
    const last = await own.videos.list({ limit: 2, after: newestFirst[3] });
    assert.deepEqual(
      last.data.map((v) => v.id),
      [newestFirst[4]],
    );
    assert.equal(last.has_more, false);

    // Each item is the video object, as retrieve answers it (once they ended, nothing moves).
    for (const id of made) await untilEnded(own, id);
    const page = await own.videos.list({ limit: 100 });
    assert.equal(page.data.length, 5);
    for (const v of page.data) assert.deepEqual(v, await own.videos.retrieve(v.id));

    isShapeA(await failure(own.videos.list({ limit: 101 })), 400, 'invalid_request');
  });

  test('videos.delete: a finished video goes with its results and its charge stays; an unfinished one is a 409', async () => {
    const key = await tokenKey('default', null, 100);
    const own = clientFor(key);
    const video = await create(own, 'a boat to delete');
    const running = await create(own, 'a boat that never ends [sim:never]');
    assert.equal((await untilEnded(own, video.id)).status, 'completed');
    const token = (await h.store.listTokens()).find((t) => t.keyHash === hashKey(key))!;
    const used = (await h.store.getToken(token.id))!.used;
    assert.ok(used > 0, 'the videos were charged');

    assert.deepEqual(await own.videos.delete(video.id), { id: video.id, object: 'video.deleted', deleted: true });
    assert.equal(await h.record(video.id), null, 'the record and its results are gone');
    isShapeA(await failure(own.videos.retrieve(video.id)), 404, 'task_not_found');
    isShapeA(await failure(own.videos.downloadContent(video.id)), 404, 'task_not_found');
    isShapeA(await failure(own.videos.delete(video.id)), 404, 'task_not_found');
    const listed: string[] = [];
    for await (const v of own.videos.list()) listed.push(v.id);
    assert.deepEqual(listed, [running.id]);
    assert.equal((await h.store.getToken(token.id))!.used, used, 'deleting neither charges nor refunds');

    const busy = await failure(own.videos.delete(running.id));
    assert.ok(busy instanceof OpenAI.ConflictError);
    isShapeA(busy, 409, 'task_not_ready');
    assert.match(busy.message, /in_progress|queued/);
    assert.ok(await h.record(running.id), 'the unfinished task is kept');
  });

  test('another token neither lists nor deletes your videos: your ids are unknown to it', async () => {
    const mine = clientFor(await h.createKey());
    const theirs = clientFor(await h.createKey());
    const video = await create(mine, 'only mine');
    await untilEnded(mine, video.id);

    const seen: string[] = [];
    for await (const v of theirs.videos.list()) seen.push(v.id);
    assert.deepEqual(seen, [], 'a new token lists nothing');
    const cursor = await failure(theirs.videos.list({ after: video.id }));
    isShapeA(cursor, 400, 'invalid_request');
    assert.equal(cursor.param, 'after');
    const unknownCursor = await failure(theirs.videos.list({ after: 'task_AAAAAAAAAAAAAAAAAAAAAAAA' }));
    assert.equal(
      cursor.message.replace(video.id, 'X'),
      unknownCursor.message.replace('task_AAAAAAAAAAAAAAAAAAAAAAAA', 'X'),
      'their id reads like an unknown one',
    );

    const del = await failure(theirs.videos.delete(video.id));
    isShapeA(del, 404, 'task_not_found');
    assert.equal((await mine.videos.retrieve(video.id)).status, 'completed', 'still there for its owner');
  });

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
