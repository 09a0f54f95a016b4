import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { channelsForModel } from '../../src/config/lookups.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { until } from '../helpers/until.js';

const PROFILE = 'unified-passthrough';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The client side of a harness with every answer kept: the upstream gateway's ids (`upt_…`) must
 * never reach the client, in a body, a header or a downloaded file.
 */
function client(h: () => TaskHarness) {
  const answers: string[] = [];
  const keep = <T extends { text: string; headers: Headers }>(r: T): T => {
    answers.push(r.text, ...[...r.headers.entries()].map(([k, v]) => `${k}: ${v}`));
    return r;
  };
  return {
    answers,
    post: async (path: string, body: unknown, headers?: Record<string, string>) => keep(await h().post(path, body, headers)),
    get: async (path: string, headers?: Record<string, string>) => keep(await h().get(path, headers)),
    /** No kept answer names an upstream id (downloads go through `h.get` and are checked by their callers). */
    assertNoUpstreamId(): void {
      const leaked = answers.filter((a) => a.includes('upt_'));
      assert.deepEqual(leaked, [], 'an upstream id reached the client');
    },
  };
}

/** Polls a task through both query routes, in turn, until `done` holds (bounded). */
function queryUntil(c: ReturnType<typeof client>, id: string, done: (t: any) => boolean, key?: string): Promise<any> {
  let i = 0;
  return until(`task ${id} to reach the expected state`, async () => {
    const r = await c.get(i++ % 2 ? `/v1/videos/${id}` : `/v1/video/generations/${id}`, key ? { authorization: `Bearer ${key}` } : undefined);
    return r.status === 200 && done(r.json) ? r.json : null;
  });
}

describe('video tasks on unified-passthrough (another gateway of this kind), end to end', () => {
  let h: TaskHarness;
  const c = client(() => h);
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(async () => {
    await h.close();
  });

  const upstreamOf = async (id: string) => {
    const rec = await h.record(id);
    assert.ok(rec?.upstreamId, 'the record carries the upstream id');
    assert.match(rec.upstreamId, /^upt_/);
    assert.equal(rec.channel, PROFILE);
    return { rec, sim: h.sims[PROFILE]!.tasks!.get(rec.upstreamId)! };
  };
  const submitsOf = () => h.sims[PROFILE]!.stats.submits ?? 0;

  test("GV- model: submit → in progress → completed → downloaded bytes equal the upstream's", async () => {
    const sub = await c.post('/v1/video/generations', {
      model: 'GV-2.1-pro',
      prompt: 'a paper boat',
      seconds: '8',
      duration: 5,
      size: '1280x720',
      metadata: { style: 'noir' },
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(sub.json.task_id, id);
    assert.equal(sub.json.model, 'GV-2.1-pro');
    assert.equal(sub.json.status, 'queued');
    assert.equal(sub.json.seconds, '8', 'seconds wins over duration, as upstream');
    const { rec, sim } = await upstreamOf(id);
    assert.equal(rec.upstreamModel, 'GV-2.1-pro', "a pattern keeps the client's model name");
    assert.equal(sim.model, 'GV-2.1-pro');
    assert.deepEqual(sim.body, { seconds: '8', size: '1280x720' });

    const seen = new Set<string>();
    const done = await queryUntil(c, id, (t) => {
      seen.add(t.status);
      return t.status === 'completed';
    });
    assert.ok(seen.has('in_progress') || seen.has('queued'));
    assert.equal(done.progress, 100);
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const finished = (await h.record(id))!;
    assert.match(finished.results[0]!.url!, new RegExp(`^${h.sims[PROFILE]!.url}/`), "the result is the upstream's own absolute URL");
    // The upstream's downloads need the key: equal bytes prove the engine signed the request.
    const expected = h.sims[PROFILE]!.result!(rec.upstreamId!)!;
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(expected), "the downloaded bytes are the upstream's");
    assert.ok(!file.bytes.includes(rec.upstreamId!));
    const part = await h.get(`/v1/videos/${id}/content`, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(expected.subarray(10, 20)));
    c.assertNoUpstreamId();
  });

  test('OS- model with references: image, images, input_reference and metadata.file_infos pass; integer seconds is sent as a string', async () => {
    const sub = await c.post('/v1/videos', {
      model: 'OS-motion-2',
      prompt: 'the dancer moves like the clip',
      image: 'https://img.example/first.png',
      images: ['https://img.example/ref-1.png'],
      input_reference: { image_url: 'https://img.example/extra.png' },
      seconds: 10,
      metadata: { mode: 'motion_control', file_infos: [{ type: 'video', url: 'https://vid.example/moves.mp4' }] },
    });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.json.seconds, '10');
    const { rec, sim } = await upstreamOf(sub.json.id);
    assert.equal(sim.model, 'OS-motion-2');
    assert.equal((sim.body as { seconds: string }).seconds, '10');
    const done = await queryUntil(c, sub.json.id, (t) => t.status === 'completed' || t.status === 'failed');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.size, '1280x720', "the upstream's size, reported by its query");
    const file = await h.get(`/v1/videos/${sub.json.id}/content`);
    assert.ok(file.bytes.equals(h.sims[PROFILE]!.result!(rec.upstreamId!)!));
    c.assertNoUpstreamId();
  });

  test('a task the upstream fails ends failed with its reason, and the price is refunded', async () => {
    const key = await h.createKey(5);
    const sub = await c.post('/v1/video/generations', { model: 'GV-2.1', prompt: 'doomed [sim:fail=content_policy]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const last = await queryUntil(c, sub.json.id, (t) => t.status === 'failed' || t.status === 'completed', key);
    assert.equal(last.status, 'failed');
    assert.equal(last.error.code, 'content_policy');
    assert.match(last.error.message, /content_policy/);
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the failed task was refunded');
    const dl = await c.get(`/v1/videos/${sub.json.id}/content`, { authorization: `Bearer ${key}` });
    assert.equal(dl.status, 409);
    assert.equal(dl.json.error.code, 'task_not_ready');
    c.assertNoUpstreamId();
  });

  test('an unknown upstream status keeps the task pending across several looks, with the word kept', async () => {
    const sub = await c.post('/v1/video/generations', { model: 'OS-2', prompt: 'odd [sim:status=moderating]' });
    assert.equal(sub.status, 200, sub.text);
    const { sim } = await upstreamOf(sub.json.id);
    // Let the upstream be asked several times (poller and query route); no timing is asserted.
    for (let i = 0; i < 200 && sim.polls < 4; i++) await sleep(25);
    assert.ok(sim.polls >= 4, 'the upstream was asked about the task several times');
    for (let i = 0; i < 3; i++) {
      const r = await c.get(`/v1/videos/${sub.json.id}`);
      assert.equal(r.status, 200);
      assert.equal(r.json.status, 'queued', JSON.stringify(r.json));
      assert.equal(r.json.error, null);
    }
    assert.equal((await h.record(sub.json.id))!.vendorStatus, 'moderating');
    c.assertNoUpstreamId();
  });

  test('upstream refusals of the submission are mapped, and nothing is charged or kept', async () => {
    const key = await h.createKey(1);
    const auth = { authorization: `Bearer ${key}` };
    const submits = submitsOf();
    const cases: [unknown, number, string, string?, string?][] = [
      // Our schema allows 1..120 seconds; the upstream refuses above 60, and says which field.
      [{ model: 'GV-2.1', prompt: 'x', duration: 90 }, 400, 'invalid_request', 'Invalid duration: expected an integer from 1 to 60.', 'duration'],
      // Our schema allows a prompt-less image request; the upstream requires a prompt.
      [{ model: 'JV-3', image: 'https://img.example/cat.png' }, 400, 'invalid_request', 'prompt is required', 'prompt'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=401]' }, 502, 'bad_response', 'the upstream refused the channel credentials'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=403]' }, 502, 'bad_response', 'the upstream refused the channel credentials'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=429]' }, 429, 'too_many_requests'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=500]' }, 502, 'bad_response'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=503]' }, 503, 'upstream_unavailable'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=504]' }, 504, 'upstream_timeout'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=malformed-json]' }, 502, 'bad_response'],
      [{ model: 'GV-2.1', prompt: 'x [sim:fault=reset]' }, 502, 'bad_response'],
    ];
    for (const [body, status, code, message, param] of cases) {
      const r = await c.post('/v1/video/generations', body, auth);
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
      // 429 answers shape B ({code, message, data}); the others shape A ({error:{…}}).
      const err = r.json.error ?? r.json;
      assert.equal(err.code, code, r.text);
      if (message) assert.equal(err.message, message);
      if (param) assert.equal(err.param, param);
      if (status === 429) assert.equal(r.headers.get('retry-after'), '2');
    }
    assert.ok(submitsOf() > submits, 'the refusals came from the upstream');
    const ok = await c.post('/v1/video/generations', { model: 'GV-2.1', prompt: 'x' }, auth);
    assert.equal(ok.status, 200, 'the refused submissions did not use the quota of 1');
    c.assertNoUpstreamId();
  });

  test("the patterns serve every group's prefix; a channel naming a model exactly wins over them", async () => {
    for (const model of ['beta-x1', 'lambda-9', 'gamma-video-4.0', 'GV-1', 'OS-1', 'mu-7', 'nu-1', 'xi-3.0', 'SV-1', 'JV-1']) {
      const names = channelsForModel(h.snapshot, model).map((ch) => ch.name);
      assert.ok(names.includes(PROFILE), `${model} → ${names.join(',')}`);
    }
    for (const ch of h.snapshot.channels) {
      if (ch.name === PROFILE) continue;
      for (const model of ch.models.keys()) {
        assert.ok(!channelsForModel(h.snapshot, model).some((x) => x.name === PROFILE), `${model} is named by ${ch.name} and must not fall to the patterns`);
      }
    }
    if (!h.snapshot.channelsByModel.get('beta-q3-pro')?.length) return;
    const submits = submitsOf();
    const sub = await c.post('/v1/video/generations', { model: 'beta-q3-pro', prompt: 'a paper boat' });
    assert.equal(submitsOf(), submits, 'beta-q3-pro did not reach the pattern channel');
    if (sub.status === 200) assert.notEqual((await h.record(sub.json.id))!.channel, PROFILE);
  });
});

describe('unified-passthrough: an unknown upstream status is bounded by the task deadline', () => {
  let h: TaskHarness;
  const c = client(() => h);
  before(async () => {
    h = await startTaskHarness({ finishMs: 300, deadlineMs: 1500 });
  });
  after(async () => {
    await h.close();
  });

  test('the task stays pending across several looks, then the deadline fails it with a refund', async () => {
    const key = await h.createKey(5);
    const sub = await c.post('/v1/video/generations', { model: 'GV-2.1', prompt: 'odd [sim:status=awaiting_review]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const rec = (await h.record(sub.json.id))!;
    const sim = h.sims[PROFILE]!.tasks!.get(rec.upstreamId!)!;
    for (let i = 0; i < 200 && sim.polls < 3; i++) await sleep(25);
    // The upstream has reported its odd word several times and the task is still open.
    assert.ok(sim.polls >= 3, 'the upstream was asked several times');
    const pending = await c.get(`/v1/videos/${sub.json.id}`, { authorization: `Bearer ${key}` });
    assert.equal(pending.json.status, 'queued', pending.text);
    assert.equal((await h.record(sub.json.id))!.vendorStatus, 'awaiting_review');
    const last = await queryUntil(c, sub.json.id, (t) => t.status === 'failed' || t.status === 'completed', key);
    assert.equal(last.status, 'failed');
    assert.equal(last.error.code, 'task_timeout');
    assert.ok(sim.polls >= 3, 'it failed by the deadline, after several looks, not at the first odd word');
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the timed-out task was refunded');
    c.assertNoUpstreamId();
  });
});
