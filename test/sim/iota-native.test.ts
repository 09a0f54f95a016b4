/**
 * The iota-native simulator over real HTTP: music and lyrics tasks through every status word, the
 * two clips and their six files equal to `sim.result`, single and batch queries, auth, validation
 * and every fault form.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { startIotaSimulator } from '../../src/sim/iota-native.js';
import { simClient } from '../helpers/sim-client.js';

function client(sim: Simulator) {
  const c = simClient(sim, { authorization: `Bearer ${sim.secrets.key}` });
  return {
    submit: (action: 'music' | 'lyrics', body: unknown, headers?: Record<string, string>) => c.post(`/submit/${action}`, body, headers),
    fetchOne: (id: string, headers?: Record<string, string>, search = '') => c.get(`/fetch/${id}${search}`, headers),
    fetchMany: (ids: unknown, headers?: Record<string, string>) => c.post('/fetch', { ids }, headers),
  };
}

const music = (prompt: string, extra: Record<string, unknown> = {}) => ({ mv: 'iota-v4.5', gpt_description_prompt: prompt, ...extra });

describe('iota-native simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  before(async () => {
    sim = await startIotaSimulator({ finishMs: 9000, clock: () => now });
  });
  after(() => sim.close());

  test('a music task walks every status word and yields two clips with six files', async () => {
    const c = client(sim);
    const sub = await c.submit('music', { mv: 'iota-v4.5', prompt: 'la la la', title: 'Rain', tags: 'lofi', make_instrumental: false });
    assert.equal(sub.status, 200);
    assert.equal(sub.body.code, 'success');
    assert.equal(sub.body.message, '');
    const id = sub.body.data as string;
    assert.equal(sim.tasks?.get(id)?.kind, 'MUSIC');

    const seen: string[] = [];
    for (const step of [0, 1000, 1000, 1000, 1500, 4500]) {
      now += step;
      const q = await c.fetchOne(id);
      assert.equal(q.status, 200);
      assert.equal(q.body.data.task_id, id);
      assert.equal(q.body.data.action, 'MUSIC');
      seen.push(`${q.body.data.status} ${q.body.data.progress}`);
    }
    assert.deepEqual(seen, ['NOT_START 0%', 'SUBMITTED 0%', 'QUEUED 0%', 'IN_PROGRESS 33%', 'IN_PROGRESS 50%', 'SUCCESS 100%']);

    const task = (await c.fetchOne(id)).body.data;
    assert.equal(task.fail_reason, '');
    assert.ok(task.submit_time > 0 && task.start_time >= task.submit_time && task.finish_time >= task.start_time);
    assert.equal(task.data.length, 2);
    const [clip0, clip1] = task.data;
    assert.notEqual(clip0.id, clip1.id);
    assert.equal(clip0.status, 'complete');
    assert.equal(clip0.title, 'Rain');
    assert.deepEqual(clip0.metadata, { tags: 'lofi', prompt: 'la la la', duration: clip0.metadata.duration });
    assert.ok(clip0.metadata.duration > 0);

    const urls = [clip0.audio_url, clip0.image_url, clip0.video_url, clip1.audio_url, clip1.image_url, clip1.video_url];
    const types = ['audio/mpeg', 'image/png', 'video/mp4', 'audio/mpeg', 'image/png', 'video/mp4'];
    for (const [index, url] of urls.entries()) {
      const res = await fetch(url); // no auth: CDN-style URLs
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), types[index]);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), sim.result!(id, index));
    }
    assert.equal(sim.result!(id, 6), null);
    assert.notDeepEqual(sim.result!(id, 0), sim.result!(id, 3));
    const mp3 = sim.result!(id, 3)!;
    const part = await fetch(clip1.audio_url, { headers: { range: 'bytes=10-41' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-41/${mp3.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), mp3.subarray(10, 42));
  });

  test('a lyrics task yields [{text, title}] and no files', async () => {
    const c = client(sim);
    const id = (await c.submit('lyrics', { mv: 'iota-v4.5', prompt: 'a song about tea', title: 'Tea' })).body.data as string;
    now += 10_000;
    const task = (await c.fetchOne(id)).body.data;
    assert.equal(task.action, 'LYRICS');
    assert.equal(task.status, 'SUCCESS');
    assert.equal(task.data.length, 1);
    assert.equal(task.data[0].title, 'Tea');
    assert.match(task.data[0].text, /a song about tea/);
    assert.equal(sim.result!(id), null);
    assert.equal((await fetch(`${sim.url}/files/${id}-0.mp3`)).status, 404);
  });

  test('[sim:never] stays IN_PROGRESS; [sim:status=WORD] reports WORD', async () => {
    const c = client(sim);
    const stuck = (await c.submit('music', music('slow [sim:never]'))).body.data as string;
    const odd = (await c.submit('music', music('', { prompt: 'odd [sim:status=UNKNOWN]' }))).body.data as string;
    now += 3_600_000;
    assert.equal((await c.fetchOne(stuck)).body.data.status, 'IN_PROGRESS');
    assert.equal((await c.fetchOne(odd)).body.data.status, 'UNKNOWN');
  });
});

describe('iota-native simulator (real time)', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startIotaSimulator({ finishMs: 60_000 });
  });
  after(() => sim.close());

  async function settle(id: string): Promise<Record<string, any>> {
    for (let i = 0; i < 100; i++) {
      const q = await client(sim).fetchOne(id);
      if (!['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS'].includes(q.body.data.status)) return q.body.data;
      await delay(20);
    }
    throw new Error(`task ${id} did not settle`);
  }

  test('a task finishes after [sim:finish=…]; a failed one reports FAILURE and its reason', async () => {
    const c = client(sim);
    const good = (await c.submit('music', music('jazz [sim:finish=40]'))).body.data as string;
    const bad = (await c.submit('music', music('noise [sim:finish=30][sim:fail=content_policy]'))).body.data as string;
    const ok = await settle(good);
    assert.equal(ok.status, 'SUCCESS');
    assert.deepEqual(Buffer.from(await (await fetch(ok.data[0].audio_url)).arrayBuffer()), sim.result!(good, 0));
    const failed = await settle(bad);
    assert.equal(failed.status, 'FAILURE');
    assert.equal(failed.fail_reason, 'content_policy');
    assert.deepEqual(failed.data, []);
    assert.equal(sim.result!(bad, 0), null);
  });

  test('batch query answers known tasks in order and leaves unknown ids out', async () => {
    const c = client(sim);
    const a = (await c.submit('music', music('a'))).body.data as string;
    const b = (await c.submit('lyrics', { mv: 'iota-v4', prompt: 'b' })).body.data as string;
    const before = sim.stats.batch_queries!;
    const q = await c.fetchMany([b, 'nope', a, b]);
    assert.equal(q.status, 200);
    assert.equal(q.body.code, 'success');
    assert.deepEqual(
      q.body.data.map((t: { task_id: string }) => t.task_id),
      [b, a],
    );
    assert.equal(q.body.data[0].action, 'LYRICS');
    assert.equal(sim.stats.batch_queries, before + 1);
    assert.deepEqual((await c.fetchMany(['nope'])).body.data, []);
    for (const ids of [[], Array.from({ length: 101 }, (_, i) => `t${i}`), 'abc', [1]]) {
      const bad = await c.fetchMany(ids);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body, { code: 'error', message: 'ids must be an array of 1 to 100 task ids', data: null });
    }
  });

  test('an unknown id answers 404 task not found', async () => {
    const q = await client(sim).fetchOne('no-such-task');
    assert.equal(q.status, 404);
    assert.deepEqual(q.body, { code: 'error', message: 'task not found', data: null });
  });

  test('a wrong or missing key is refused with 401 on every path', async () => {
    for (const headers of [{ authorization: 'Bearer wrong' }, {}] as Record<string, string>[]) {
      for (const [method, path] of [
        ['POST', '/submit/music'],
        ['GET', '/fetch/x'],
        ['POST', '/fetch'],
      ]) {
        const res = await fetch(sim.url + path!, { method, headers, body: method === 'POST' ? JSON.stringify(music('x')) : undefined });
        assert.equal(res.status, 401);
        assert.deepEqual(await res.json(), { code: 'unauthorized', message: 'invalid api key', data: null });
      }
    }
  });

  test('validation errors answer 400 with the vendor body', async () => {
    const c = client(sim);
    const size = sim.tasks!.size;
    const cases: [unknown, string][] = [
      [{ prompt: 'x' }, 'invalid mv'],
      [{ mv: 'v4.5', prompt: 'x' }, 'invalid mv'],
      [{ mv: 'iota-v4.5' }, 'prompt or gpt_description_prompt is required'],
      [{ mv: 'iota-v4.5', prompt: '  ' }, 'prompt or gpt_description_prompt is required'],
      [music('x', { make_instrumental: 'yes' }), 'invalid make_instrumental'],
      [music('x', { continue_at: -1 }), 'invalid continue_at'],
      [music('x', { tags: ['a'] }), 'invalid tags'],
      ['[1, 2', 'invalid request body'],
      [[1, 2], 'invalid request body'],
    ];
    for (const [body, message] of cases) {
      const a = await c.submit('music', body);
      assert.equal(a.status, 400, JSON.stringify(body));
      assert.deepEqual(a.body, { code: 'error', message, data: null });
    }
    assert.equal((await c.submit('lyrics', { prompt: 'x' })).body.message, 'invalid mv');
    assert.equal(sim.tasks!.size, size);
  });

  test('faults: vendor error bodies, reset, malformed JSON, slow headers, slow body, queue and marker', async () => {
    const c = client(sim);
    const r429 = await c.submit('music', music('x'), { 'x-sim-fault': '429' });
    assert.equal(r429.status, 429);
    assert.deepEqual(r429.body, { code: 'error', message: 'too many requests', data: null });
    assert.equal(r429.headers.get('retry-after'), '2');
    const r500 = await c.fetchOne('any', { 'x-sim-fault': '500' });
    assert.equal(r500.status, 500);
    assert.equal(r500.body.code, 'error');
    assert.equal((await c.fetchOne('any', {}, '?sim_fault=503')).status, 503);
    assert.equal((await c.fetchMany(['any'], { 'x-sim-fault': '502' })).status, 502);

    await assert.rejects(c.submit('music', music('x'), { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.fetchMany(['any'], { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.fetchOne('any', { 'x-sim-fault': 'malformed-json' }), SyntaxError);

    const slow = await c.submit('music', music('x'), { 'x-sim-fault': 'slow-headers:30' });
    assert.equal(slow.status, 200);
    assert.equal(slow.body.code, 'success');
    const slowBody = await c.submit('music', music('x'), { 'x-sim-fault': 'slow-body:30' });
    assert.ok(sim.tasks!.get(slowBody.body.data), 'slow-body still creates the task');

    sim.faults.push('429');
    assert.equal((await c.fetchMany(['any'])).status, 429);
    assert.equal((await c.fetchMany(['any'])).status, 200);
    const marked = await c.submit('music', { mv: 'iota-v4.5', prompt: 'x [sim:fault=503]' });
    assert.equal(marked.status, 503);
    assert.deepEqual(marked.body, { code: 'error', message: 'service unavailable', data: null });
  });

  test('counters: requests, submits, queries, batch_queries', () => {
    const s = sim.stats;
    assert.ok(s.requests >= s.submits! + s.queries! + s.batch_queries!);
    assert.ok(s.submits! > 0 && s.queries! > 0 && s.batch_queries! > 0);
  });
});
