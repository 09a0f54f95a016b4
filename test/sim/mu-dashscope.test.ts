/**
 * The mu-dashscope simulator over real HTTP: submit → PENDING → RUNNING → SUCCEEDED with the bytes
 * of `sim.result`, failures, odd and stuck statuses, auth and async-header refusals, the vendor's
 * validation errors, and every fault form.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { startMuSimulator } from '../../src/sim/mu-dashscope.js';
import { type Answer, simClient } from '../helpers/sim-client.js';

const SUBMIT = '/api/v1/services/aigc/video-generation/video-synthesis';

function client(sim: Simulator) {
  const c = simClient(sim, { authorization: `Bearer ${sim.secrets.key}` });
  return {
    submit: (body: unknown, headers: Record<string, string> = {}) => c.post(SUBMIT, body, { 'x-dashscope-async': 'enable', ...headers }),
    query: (id: string, headers?: Record<string, string>, search = '') => c.get(`/api/v1/tasks/${id}${search}`, headers),
  };
}

const t2v = (prompt: string, parameters: Record<string, unknown> = { size: '1280*720', duration: 5 }) => ({
  model: 'mu2.6-t2v',
  input: { prompt },
  parameters,
});

describe('mu-dashscope simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  before(async () => {
    sim = await startMuSimulator({ finishMs: 3000, clock: () => now });
  });
  after(() => sim.close());

  test('a task goes PENDING → RUNNING → SUCCEEDED and its video downloads without auth, with Range', async () => {
    const c = client(sim);
    const sub = await c.submit(t2v('a cat surfing', { size: '1920*1080', duration: 10, watermark: false, seed: 7 }));
    assert.equal(sub.status, 200);
    assert.equal(sub.body.output.task_status, 'PENDING');
    assert.equal(typeof sub.body.request_id, 'string');
    const id = sub.body.output.task_id as string;
    assert.equal(sim.tasks?.get(id)?.model, 'mu2.6-t2v');

    let q = await c.query(id);
    assert.equal(q.body.output.task_status, 'PENDING');
    assert.equal(q.body.output.scheduled_time, undefined);
    assert.deepEqual(q.body.usage, { video_duration: 10, video_ratio: '1920*1080', video_count: 0 });
    assert.equal(sim.result!(id), null);

    now += 1500;
    q = await c.query(id);
    assert.equal(q.body.output.task_status, 'RUNNING');
    assert.match(q.body.output.scheduled_time, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    assert.equal(q.body.output.end_time, undefined);

    now += 1500;
    q = await c.query(id);
    assert.equal(q.body.output.task_status, 'SUCCEEDED');
    assert.equal(q.body.usage.video_count, 1);
    assert.ok(q.body.output.end_time);
    const videoUrl = q.body.output.video_url as string;
    assert.ok(videoUrl.startsWith(sim.url));
    const expected = sim.result!(id);
    assert.ok(expected);
    const whole = await fetch(videoUrl);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), expected);
    const part = await fetch(videoUrl, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${expected.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(100, 200));
    assert.equal(sim.result!(id, 1), null);
    assert.equal(sim.tasks?.get(id)?.polls, 3);
  });

  test('[sim:never] stays RUNNING for ever; [sim:status=WORD] reports WORD', async () => {
    const c = client(sim);
    const stuck = (await c.submit(t2v('slow [sim:never]'))).body.output.task_id as string;
    const odd = (await c.submit(t2v('odd [sim:status=SUSPENDED]'))).body.output.task_id as string;
    now += 10 * 60_000;
    assert.equal((await c.query(stuck)).body.output.task_status, 'RUNNING');
    assert.equal((await c.query(odd)).body.output.task_status, 'SUSPENDED');
  });
});

describe('mu-dashscope simulator (real time)', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startMuSimulator({ finishMs: 60_000 });
  });
  after(() => sim.close());

  async function settle(id: string): Promise<Answer> {
    for (let i = 0; i < 100; i++) {
      const q = await client(sim).query(id);
      if (!['PENDING', 'RUNNING'].includes(q.body.output.task_status)) return q;
      await delay(20);
    }
    throw new Error(`task ${id} did not settle`);
  }

  test('an image-to-video task with a data URI finishes after [sim:finish=…]', async () => {
    const sub = await client(sim).submit({
      model: 'mu2.6-i2v',
      input: { prompt: 'waves [sim:finish=50]', img_url: 'data:image/png;base64,iVBORw0KGgo=' },
    });
    assert.equal(sub.status, 200);
    const q = await settle(sub.body.output.task_id);
    assert.equal(q.body.output.task_status, 'SUCCEEDED');
    const bytes = Buffer.from(await (await fetch(q.body.output.video_url)).arrayBuffer());
    assert.deepEqual(bytes, sim.result!(sub.body.output.task_id));
    assert.deepEqual(q.body.usage, { video_duration: 5, video_ratio: '1280*720', video_count: 1 });
  });

  test('a failed task reports FAILED with code and the reason, and has no video', async () => {
    const sub = await client(sim).submit(t2v('bad [sim:finish=30][sim:fail=DataInspectionFailed]'));
    const id = sub.body.output.task_id as string;
    const q = await settle(id);
    assert.equal(q.body.output.task_status, 'FAILED');
    assert.equal(q.body.output.code, 'GenerationFailed');
    assert.equal(q.body.output.message, 'DataInspectionFailed');
    assert.equal(q.body.output.video_url, undefined);
    assert.equal(sim.result!(id), null);
    assert.equal((await fetch(`${sim.url}/files/${id}.mp4`)).status, 404);
  });

  test('an unknown task id answers 200 with UNKNOWN', async () => {
    const q = await client(sim).query('no-such-task');
    assert.equal(q.status, 200);
    assert.deepEqual(q.body.output, { task_id: 'no-such-task', task_status: 'UNKNOWN' });
  });

  test('a wrong or missing key is refused with 401 InvalidApiKey', async () => {
    for (const headers of [{ authorization: 'Bearer wrong' }, {}] as Record<string, string>[]) {
      const res = await fetch(sim.url + SUBMIT, { method: 'POST', headers: { 'x-dashscope-async': 'enable', ...headers }, body: JSON.stringify(t2v('x')) });
      assert.equal(res.status, 401);
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(body.code, 'InvalidApiKey');
      assert.equal(body.message, 'Invalid API-key provided.');
      assert.equal(typeof body.request_id, 'string');
      const q = await fetch(`${sim.url}/api/v1/tasks/x`, { headers });
      assert.equal(q.status, 401);
    }
  });

  test('a submit without X-DashScope-Async is refused with 403 AccessDenied', async () => {
    const size = sim.tasks!.size;
    const a = await client(sim).submit(t2v('sync please'), { 'x-dashscope-async': 'disable' });
    assert.equal(a.status, 403);
    assert.equal(a.body.code, 'AccessDenied');
    assert.equal(a.body.message, 'current user api does not support synchronous calls');
    assert.equal(sim.tasks!.size, size);
  });

  test('validation errors answer 400 InvalidParameter', async () => {
    const cases: [unknown, RegExp][] = [
      [{ model: 'mu9-t2v', input: { prompt: 'x' } }, /^Model not exist\.$/],
      [{ model: 'mu2.6-t2v', input: {} }, /input\.prompt/],
      [{ model: 'mu2.6-t2v', input: { prompt: 'x', img_url: 'https://e.example/a.png' } }, /img_url/],
      [{ model: 'mu2.6-i2v', input: { prompt: 'x' } }, /img_url/],
      [{ model: 'mu2.6-i2v', input: { img_url: 'not a url' } }, /img_url/],
      [{ model: 'mu2.6-t2v' }, /input/],
      [t2v('x', { size: '1024*1024' }), /size/],
      [t2v('x', { resolution: '4K' }), /resolution/],
      [t2v('x', { duration: 5.5 }), /duration/],
      [t2v('x', { watermark: 'no' }), /watermark/],
      [t2v('x', { seed: -1 }), /seed/],
      ['{"model": ', /JSON/],
    ];
    for (const [body, message] of cases) {
      const a = await client(sim).submit(body);
      assert.equal(a.status, 400, JSON.stringify(body));
      assert.equal(a.body.code, 'InvalidParameter');
      assert.match(a.body.message, message);
    }
  });

  test('faults: vendor error bodies, reset, malformed JSON, slow headers, slow body, queue and marker', async () => {
    const c = client(sim);
    const r429 = await c.submit(t2v('x'), { 'x-sim-fault': '429' });
    assert.equal(r429.status, 429);
    assert.equal(r429.body.code, 'Throttling.RateQuota');
    assert.equal(r429.headers.get('retry-after'), '2');
    const r500 = await c.query('any', { 'x-sim-fault': '500' });
    assert.equal(r500.status, 500);
    assert.equal(r500.body.code, 'InternalError');
    const r503 = await c.query('any', {}, '?sim_fault=503');
    assert.equal(r503.status, 503);
    assert.equal(r503.body.code, 'ServiceUnavailable');

    await assert.rejects(c.submit(t2v('x'), { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.query('any', { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.query('any', { 'x-sim-fault': 'malformed-json' }), SyntaxError);

    const slow = await c.submit(t2v('x'), { 'x-sim-fault': 'slow-headers:30' });
    assert.equal(slow.status, 200);
    assert.equal(slow.body.output.task_status, 'PENDING');
    const slowBody = await c.submit(t2v('x'), { 'x-sim-fault': 'slow-body:30' });
    assert.ok(sim.tasks!.get(slowBody.body.output.task_id), 'slow-body still creates the task');

    sim.faults.push('429');
    assert.equal((await c.query('any')).status, 429);
    assert.equal((await c.query('any')).status, 200);
    const marked = await c.submit(t2v('x [sim:fault=500]'));
    assert.equal(marked.status, 500);
    assert.equal(marked.body.code, 'InternalError');
  });

  test('counters: requests, submits, queries', () => {
    assert.ok(sim.stats.requests >= sim.stats.submits! + sim.stats.queries!);
    assert.ok(sim.stats.submits! > 0 && sim.stats.queries! > 0);
  });
});
