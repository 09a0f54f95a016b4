/**
 * The beta-native simulator over real HTTP: the four submit kinds, created → queueing → processing →
 * success with signed result URLs whose bytes equal `sim.result`, failures, odd and stuck states, the
 * token check, the vendor's validation errors, and the fault forms.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { startBetaSimulator } from '../../src/sim/beta-native.js';
import { simClient } from '../helpers/sim-client.js';

const IMG = 'https://example.com/a.png';
const DATA_IMG = 'data:image/webp;base64,UklGRgAAAABXRUJQ';

function client(sim: Simulator) {
  const c = simClient(sim, { authorization: `Token ${sim.secrets.key}` });
  return {
    submit: (kind: string, body: unknown, headers?: Record<string, string>) => c.post(`/ent/v2/${kind}`, body, headers),
    query: (id: string, headers?: Record<string, string>, search = '') => c.get(`/ent/v2/tasks/${id}/creations${search}`, headers),
  };
}

const ref = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: 'betaq2-pro',
  subjects: [{ id: 'cat', images: [IMG, DATA_IMG] }],
  prompt,
  ...extra,
});

describe('beta-native simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  before(async () => {
    sim = await startBetaSimulator({ finishMs: 3000, clock: () => now });
  });
  after(() => sim.close());

  test('a task goes created → queueing → processing → success, and its files download without the key, with Range', async () => {
    const c = client(sim);
    const sub = await c.submit('reference2video', ref('@cat surfing', { duration: 8, resolution: '1080p', seed: 7, payload: 'p1' }));
    assert.equal(sub.status, 200);
    assert.equal(sub.body.state, 'created');
    assert.equal(sub.body.model, 'betaq2-pro');
    assert.equal(sub.body.duration, 8);
    assert.equal(sub.body.seed, 7);
    assert.equal(sub.body.resolution, '1080p');
    assert.equal(sub.body.credits, 64);
    assert.equal(sub.body.created_at, Math.floor(now / 1000));
    const id = sub.body.task_id as string;
    assert.equal(sim.tasks?.get(id)?.kind, 'reference2video');

    assert.equal((await c.query(id)).body.state, 'created');
    const queued = await c.query(id);
    assert.deepEqual(queued.body, { id, state: 'queueing', err_code: '', credits: 64, payload: 'p1', creations: [] });
    now += 1500;
    assert.equal((await c.query(id)).body.state, 'processing');
    assert.equal(sim.result!(id), null);
    now += 2000;
    const done = await c.query(id);
    assert.equal(done.body.state, 'success');
    assert.equal(done.body.creations.length, 1);
    const { url, cover_url, watermarked_url } = done.body.creations[0];

    const expected = sim.result!(id)!;
    const whole = await fetch(url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), expected);
    const part = await fetch(url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(100, 200));

    const cover = Buffer.from(await (await fetch(cover_url)).arrayBuffer());
    assert.deepEqual(cover.subarray(1, 4), Buffer.from('PNG'));
    const wm = Buffer.from(await (await fetch(watermarked_url)).arrayBuffer());
    assert.equal(wm.subarray(4, 8).toString('ascii'), 'ftyp');
    assert.notDeepEqual(wm, expected);

    const tampered = await fetch(url.replace(/sig=[0-9a-f]/, 'sig=g'));
    assert.equal(tampered.status, 403);
    now += 86_401_000;
    assert.equal((await fetch(url)).status, 403, 'a result URL expires after a day');
  });

  test('a failed task reports its reason in err_code, refunds the credits and has no creations', async () => {
    const c = client(sim);
    const id = (await c.submit('text2video', { model: 'beta2.0', prompt: 'x [sim:fail=content_blocked]' })).body.task_id as string;
    now += 3000;
    const q = await c.query(id);
    assert.equal(q.body.state, 'failed');
    assert.equal(q.body.err_code, 'content_blocked');
    assert.equal(q.body.credits, 0);
    assert.deepEqual(q.body.creations, []);
    assert.equal(sim.result!(id), null);
  });

  test('an odd status is reported as is, and a stuck task stays processing', async () => {
    const c = client(sim);
    const odd = (await c.submit('img2video', { model: 'betaq1', images: [IMG], prompt: '[sim:status=paused]' })).body.task_id as string;
    const stuck = (await c.submit('start-end2video', { model: 'betaq1-classic', images: [IMG, DATA_IMG], prompt: '[sim:never]' })).body.task_id;
    now += 60_000;
    assert.equal((await c.query(odd)).body.state, 'paused');
    assert.equal((await c.query(stuck)).body.state, 'processing');
    assert.equal(sim.tasks?.get(stuck)?.kind, 'start-end2video');
  });

  test('a missing or wrong token is refused with 401 and the vendor error body', async () => {
    for (const authorization of [undefined, `Token nope`, `Bearer ${sim.secrets.key}`]) {
      const res = await fetch(`${sim.url}/ent/v2/text2video`, {
        method: 'POST',
        headers: authorization ? { authorization } : {},
        body: JSON.stringify({ model: 'beta2.0', prompt: 'x' }),
      });
      assert.equal(res.status, 401);
      assert.deepEqual(await res.json(), { err_code: 401, reason: 'Unauthorized', message: 'invalid token' });
    }
    const q = await fetch(`${sim.url}/ent/v2/tasks/abc/creations`);
    assert.equal(q.status, 401);
  });

  test('unknown tasks and paths answer 404 with the vendor error body', async () => {
    const c = client(sim);
    const q = await c.query('doesnotexist');
    assert.equal(q.status, 404);
    assert.equal(q.body.reason, 'TaskNotFound');
    const p = await fetch(`${sim.url}/ent/v2/video2video`, { method: 'POST', body: '{}' });
    assert.equal(p.status, 404);
    assert.equal(((await p.json()) as any).err_code, 404);
  });

  test('the vendor validation errors answer 400', async () => {
    const c = client(sim);
    const bad: [string, unknown, RegExp][] = [
      ['reference2video', { subjects: [{ id: 'a', images: [IMG] }] }, /model is required/],
      ['reference2video', ref('x', { model: 'betaq9' }), /not supported/],
      ['reference2video', { model: 'betaq2-pro', prompt: 'x' }, /subjects is required/],
      ['reference2video', ref('x', { subjects: [{ images: [IMG] }] }), /subjects\[0\]\.id/],
      ['reference2video', ref('x', { subjects: [{ id: 'a', images: [IMG, IMG, IMG, IMG] }] }), /1 to 3/],
      ['reference2video', ref('x', { subjects: [{ id: 'a', images: [] }] }), /1 to 3/],
      ['reference2video', ref('x', { subjects: [{ id: 'a', images: ['iVBORw0KGgo='] }] }), /data:image/],
      ['reference2video', ref('x', { subjects: [{ id: 'a', images: ['data:image/gif;base64,R0lG'] }] }), /data:image/],
      [
        'reference2video',
        ref('x', {
          subjects: [
            { id: 'a', images: [IMG] },
            { id: 'a', images: [IMG] },
          ],
        }),
        /duplicated/,
      ],
      ['img2video', { model: 'betaq1', images: [IMG, IMG] }, /exactly 1/],
      ['img2video', { model: 'betaq1' }, /images is required/],
      ['start-end2video', { model: 'betaq1', images: [IMG] }, /exactly 2/],
      ['text2video', { model: 'betaq1' }, /prompt is required/],
      ['text2video', { model: 'betaq1', prompt: 'x', duration: 11 }, /duration/],
      ['text2video', { model: 'betaq1', prompt: 'x', duration: 5.5 }, /duration/],
      ['text2video', { model: 'betaq1', prompt: 'x', duration: '5' }, /duration/],
      ['text2video', { model: 'betaq1', prompt: 'x', resolution: '4k' }, /resolution/],
      ['text2video', { model: 'betaq1', prompt: 'x', bgm: 'yes' }, /bgm/],
      ['text2video', '{not json', /invalid JSON/],
      ['text2video', [1, 2], /JSON object/],
    ];
    for (const [kind, body, message] of bad) {
      const r = await c.submit(kind, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.err_code, 400);
      assert.equal(r.body.reason, 'BadRequest');
      assert.match(r.body.message, message);
    }
    for (const model of ['betaq3-pro', 'betaq2-turbo', 'betaq2-pro-fast', 'beta-q3-pro', 'beta-q3-turbo']) {
      assert.equal((await c.submit('reference2video', ref('ok', { model, duration: 1, resolution: '540p' }))).status, 200);
    }
  });

  test('faults: status, reset, malformed JSON, slow headers and body, by header, query parameter and queue', async () => {
    const c = client(sim);
    const limited = await c.submit('text2video', { model: 'beta2.0', prompt: 'x' }, { 'x-sim-fault': '429' });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '2');
    assert.deepEqual(limited.body, { err_code: 429, reason: 'TooManyRequests', message: 'too many requests, please retry later' });

    await assert.rejects(c.submit('text2video', { model: 'beta2.0', prompt: 'x' }, { 'x-sim-fault': 'reset' }));

    const broken = await fetch(`${sim.url}/ent/v2/text2video`, {
      method: 'POST',
      headers: { authorization: `Token ${sim.secrets.key}`, 'x-sim-fault': 'malformed-json' },
      body: JSON.stringify({ model: 'beta2.0', prompt: 'x' }),
    });
    assert.equal(broken.status, 200);
    await assert.rejects(broken.json());

    const slow = await c.submit('text2video', { model: 'beta2.0', prompt: 'x' }, { 'x-sim-fault': 'slow-headers:20' });
    assert.equal(slow.status, 200);
    assert.equal(slow.body.state, 'created');
    const slowBody = await c.submit('text2video', { model: 'beta2.0', prompt: 'x [sim:fault=slow-body:20]' });
    assert.equal(slowBody.status, 200);
    assert.ok(sim.tasks?.get(slowBody.body.task_id), 'a slow-body submit still creates the task');

    const id = slow.body.task_id as string;
    const viaParam = await c.query(id, {}, '?sim_fault=503');
    assert.equal(viaParam.status, 503);
    assert.equal(viaParam.body.reason, 'ServiceUnavailable');
    sim.faults.push('500');
    const viaQueue = await c.query(id);
    assert.equal(viaQueue.status, 500);
    assert.equal(viaQueue.body.err_code, 500);
    assert.equal((await c.query(id)).status, 200);
  });
});

describe('beta-native simulator (real clock)', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startBetaSimulator();
  });
  after(() => sim.close());

  test('a short task finishes and counts its requests', async () => {
    const c = client(sim);
    const id = (await c.submit('text2video', { model: 'betaq2-turbo', prompt: 'a dog [sim:finish=50]' })).body.task_id as string;
    let state = '';
    let body: Record<string, any> = {};
    for (let i = 0; i < 100 && state !== 'success'; i++) {
      await delay(10);
      body = (await c.query(id)).body;
      state = body.state;
    }
    assert.equal(state, 'success');
    const bytes = Buffer.from(await (await fetch(body.creations[0].url)).arrayBuffer());
    assert.deepEqual(bytes, sim.result!(id));
    assert.equal(sim.stats.submits, 1);
    assert.ok((sim.stats.queries ?? 0) >= 1);
    assert.ok(sim.stats.requests >= 3);
  });
});
