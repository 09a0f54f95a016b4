/**
 * The unified-passthrough simulator (another gateway speaking the public unified video routes)
 * over real HTTP: submit on both routes → queued → in_progress → completed with the bytes of
 * `sim.result` (whole and by Range), failures, odd and stuck statuses, auth refusals, validation
 * errors in shape A, 429 in shape B, and every fault form.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { startUnifiedPassthroughSimulator } from '../../src/sim/unified-passthrough.js';
import { type Answer, simClient } from '../helpers/sim-client.js';

function client(sim: Simulator) {
  const c = simClient(sim, { authorization: `Bearer ${sim.secrets.key}` });
  return {
    submit: (body: unknown, headers?: Record<string, string>, path = '/v1/video/generations') => c.post(path, body, headers),
    query: (id: string, headers?: Record<string, string>, path = '/v1/videos/') => c.get(path + id, headers),
    content: (id: string, headers?: Record<string, string>) => c.fetch(`/v1/videos/${id}/content`, { headers }),
  };
}

const req = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: 'GV-3-fast', prompt, seconds: '10', size: '1280x720', ...extra });

describe('unified-passthrough simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  let c: ReturnType<typeof client>;
  before(async () => {
    sim = await startUnifiedPassthroughSimulator({ finishMs: 3000, clock: () => now });
    c = client(sim);
  });
  after(() => sim.close());

  test('submit → queued → in_progress → completed, bytes equal to result(), Range gives 206', async () => {
    const sub = await c.submit(req('a boat', { image: 'https://example.com/a.png', metadata: { style: 'anime' } }));
    assert.equal(sub.status, 200);
    const id = sub.body.id as string;
    assert.match(id, /^upt_[0-9a-f]{24}$/);
    assert.deepEqual(sub.body, { id, task_id: id, object: 'video', model: 'GV-3-fast', status: 'queued', progress: 0, created_at: Math.floor(now / 1000) });
    const first = await c.query(id, {}, '/v1/video/generations/');
    assert.equal(first.body.status, 'queued');
    assert.equal(first.body.video_url, null);
    assert.equal(first.body.completed_at, null);
    assert.equal((await c.content(id)).status, 404, 'no content before completion');

    now += 1500;
    const mid = await c.query(id);
    assert.equal(mid.body.status, 'in_progress');
    assert.ok(mid.body.progress > 0 && mid.body.progress < 100);

    now += 1500;
    const done = await c.query(id);
    assert.equal(done.status, 200);
    assert.deepEqual(
      { status: done.body.status, progress: done.body.progress, seconds: done.body.seconds, size: done.body.size, task_id: done.body.task_id },
      { status: 'completed', progress: 100, seconds: '10', size: '1280x720', task_id: id },
    );
    assert.equal(done.body.completed_at, Math.floor(now / 1000));
    assert.equal(done.body.video_url, `${sim.url}/v1/videos/${id}/content`);
    assert.equal('error' in done.body, false);

    const expected = sim.result!(id)!;
    const whole = await fetch(done.body.video_url as string, { headers: { authorization: `Bearer ${sim.secrets.key}` } });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), expected);
    const part = await c.content(id, { range: 'bytes=-50' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes ${expected.length - 50}-${expected.length - 1}/${expected.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(expected.length - 50));
    const noKey = await fetch(done.body.video_url as string);
    assert.equal(noKey.status, 401, 'the download needs the key');
    assert.ok(sim.stats.submits! >= 1 && sim.stats.queries! >= 3 && sim.stats.downloads! >= 3);
  });

  test('POST /v1/videos works the same; duration fills seconds when seconds is absent', async () => {
    const sub = await c.submit({ model: 'SV-2', prompt: 'x', duration: 8, input_reference: ['https://example.com/r.png'] }, {}, '/v1/videos');
    assert.equal(sub.status, 200);
    const q = await c.query(sub.body.id as string, {}, '/v1/video/generations/');
    assert.deepEqual([q.body.seconds, q.body.size, q.body.model], ['8', '1280x720', 'SV-2']);
  });

  test('a failed task reports its reason and has no content', async () => {
    const sub = await c.submit(req('x [sim:fail=content_violation]'));
    now += 3000;
    const q = await c.query(sub.body.id as string);
    assert.equal(q.body.status, 'failed');
    assert.equal(q.body.error.code, 'content_violation');
    assert.equal(typeof q.body.error.message, 'string');
    assert.equal(q.body.video_url, null);
    assert.equal((await c.content(sub.body.id as string)).status, 404);
    assert.equal(sim.result!(sub.body.id as string), null);
  });

  test('odd and stuck statuses', async () => {
    const odd = await c.submit(req('x [sim:status=rendering]'));
    const stuck = await c.submit(req('x [sim:never]'));
    now += 60_000;
    assert.equal((await c.query(odd.body.id as string)).body.status, 'rendering');
    assert.equal((await c.query(stuck.body.id as string)).body.status, 'in_progress');
  });

  test('validation errors in shape A with code invalid_request', async () => {
    const cases: [unknown, string][] = [
      [{ prompt: 'x' }, 'model'],
      [{ model: 'GV-3' }, 'prompt'],
      [{ model: 'GV-3', prompt: '  ' }, 'prompt'],
      [req('x', { images: 'one' }), 'images'],
      [req('x', { duration: '5' }), 'duration'],
      [req('x', { seconds: 5 }), 'seconds'],
      [req('x', { metadata: [] }), 'metadata'],
    ];
    for (const [body, param] of cases) {
      const r = await c.submit(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(
        { type: r.body.error.type, code: r.body.error.code, param: r.body.error.param },
        { type: 'svc_api_error', code: 'invalid_request', param },
      );
    }
    const broken = await c.submit('{"model":');
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.code, 'invalid_request');
  });

  test('a missing or wrong key is refused with 401 invalid_api_key; unknown ids and paths answer 404', async () => {
    for (const headers of [{ authorization: 'Bearer wrong' }, { authorization: '' }]) {
      const r = await c.submit(req('x'), headers);
      assert.equal(r.status, 401);
      assert.deepEqual([r.body.error.type, r.body.error.code], ['svc_api_error', 'invalid_api_key']);
    }
    const unknown = await c.query('upt_nope');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'task_not_found');
    assert.equal((await c.query('x', {}, '/v1/nothing/')).status, 404);
  });
});

describe('unified-passthrough simulator faults (real clock)', () => {
  let sim: Simulator;
  let c: ReturnType<typeof client>;
  before(async () => {
    sim = await startUnifiedPassthroughSimulator({ finishMs: 3000 });
    c = client(sim);
  });
  after(() => sim.close());

  test('429 in shape B, 5xx in shape A', async () => {
    const limited = await c.submit(req('x'), { 'x-sim-fault': '429' });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '2');
    assert.deepEqual({ code: limited.body.code, data: limited.body.data }, { code: 'too_many_requests', data: null });
    assert.equal(typeof limited.body.message, 'string');
    const bad = await c.submit(req('x'), { 'x-sim-fault': '500' });
    assert.deepEqual([bad.status, bad.body.error.type, bad.body.error.code], [500, 'svc_api_error', 'bad_response']);
    const sub = await c.submit(req('x'));
    sim.faults.push('503');
    const q = await c.query(sub.body.id as string);
    assert.deepEqual([q.status, q.body.error.code], [503, 'upstream_unavailable']);
    assert.equal((await c.query(`${sub.body.id}?sim_fault=502`)).status, 502);
    assert.equal((await c.submit(req('x [sim:fault=429]'))).status, 429);
  });

  test('reset, malformed JSON, slow headers and slow body', async () => {
    const init = (fault: string): RequestInit => ({
      method: 'POST',
      headers: { authorization: `Bearer ${sim.secrets.key}`, 'content-type': 'application/json', 'x-sim-fault': fault },
      body: JSON.stringify(req('x')),
    });
    await assert.rejects(fetch(`${sim.url}/v1/video/generations`, init('reset')));
    const bad = await fetch(`${sim.url}/v1/video/generations`, init('malformed-json'));
    assert.equal(bad.status, 200);
    await assert.rejects(bad.json());
    const slow = await c.submit(req('x'), { 'x-sim-fault': 'slow-headers:30' });
    assert.deepEqual([slow.status, slow.body.status], [200, 'queued']);
    const body = await c.submit(req('x'), { 'x-sim-fault': 'slow-body:30' });
    assert.equal(body.status, 200);
    assert.ok(sim.tasks!.get(body.body.id as string), 'a slow-body answer still names a real task');
  });

  test('a short task finishes in real time (bounded polling)', async () => {
    const sub = await c.submit(req('quick [sim:finish=50]'));
    let last: Answer | undefined;
    for (let i = 0; i < 100 && last?.body.status !== 'completed'; i++) {
      await delay(20);
      last = await c.query(sub.body.id as string);
    }
    assert.equal(last?.body.status, 'completed');
    const bytes = Buffer.from(await (await c.content(sub.body.id as string)).arrayBuffer());
    assert.deepEqual(bytes, sim.result!(sub.body.id as string));
  });
});
