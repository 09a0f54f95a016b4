/**
 * The lambda-native simulator over real HTTP: JWT verification (wrong secret, expired, wrong iss,
 * not yet valid, malformed), submitted → processing → succeed with the bytes of `sim.result`, the
 * per-kind query path, failures, odd and stuck states, the vendor's validation errors and the faults.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { startLambdaSimulator, verifyHs256Jwt } from '../../src/sim/lambda-native.js';
import { simClient } from '../helpers/sim-client.js';

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Signs a JWT the way the gateway must (header and claims overridable for the negative cases). */
function jwt(claims: Record<string, unknown>, secret: string, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }): string {
  const signing = `${b64url(header)}.${b64url(claims)}`;
  return `${signing}.${createHmac('sha256', secret).update(signing).digest('base64url')}`;
}

/** A fresh JWT on every request, signed at `nowMs()`. */
function client(sim: Simulator, nowMs: () => number) {
  const c = simClient(sim, () => {
    const now = Math.floor(nowMs() / 1000);
    return { authorization: `Bearer ${jwt({ iss: sim.secrets.access_key, exp: now + 1800, nbf: now - 5 }, sim.secrets.secret_key!)}` };
  });
  return {
    submit: (kind: string, body: unknown, headers?: Record<string, string>) => c.post(`/v1/videos/${kind}`, body, headers),
    query: (kind: string, id: string, headers?: Record<string, string>, search = '') => c.get(`/v1/videos/${kind}/${id}${search}`, headers),
  };
}

test('verifyHs256Jwt accepts a good token and names what is wrong with a bad one', () => {
  const now = 1_700_000_000;
  const good = { iss: 'ak', exp: now + 1800, nbf: now - 5 };
  assert.deepEqual(verifyHs256Jwt(jwt(good, 'sk'), 'ak', 'sk', now), { ok: true, claims: good });
  assert.equal(verifyHs256Jwt(jwt({ ...good, nbf: now + 5 }, 'sk'), 'ak', 'sk', now).ok, true, 'nbf leeway of 5 s');
  const code = (token: string) => {
    const r = verifyHs256Jwt(token, 'ak', 'sk', now);
    return r.ok ? 0 : r.code;
  };
  assert.equal(code(jwt(good, 'other')), 1000, 'wrong secret');
  assert.equal(code(jwt({ ...good, iss: 'someone' }, 'sk')), 1000, 'wrong iss');
  assert.equal(code(jwt({ ...good, exp: now }, 'sk')), 1004, 'expired');
  assert.equal(code(jwt({ ...good, nbf: now + 6 }, 'sk')), 1003, 'not yet valid');
  assert.equal(code(jwt({ iss: 'ak', nbf: now }, 'sk')), 1002, 'no exp');
  assert.equal(code(jwt(good, 'sk', { alg: 'HS512', typ: 'JWT' })), 1002, 'other alg');
  assert.equal(code(jwt(good, 'sk', { alg: 'HS256' })), 1002, 'no typ');
  assert.equal(code(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(good)}.`), 1002, 'alg none');
  assert.equal(code('not-a-jwt'), 1002);
  assert.equal(code(`${jwt(good, 'sk')}=`), 1002, 'padding is not base64url');
});

describe('lambda-native simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  before(async () => {
    sim = await startLambdaSimulator({ finishMs: 3000, clock: () => now });
  });
  after(() => sim.close());

  test('a task goes submitted → processing → succeed, and its video downloads without auth, with Range', async () => {
    const c = client(sim, () => now);
    const sub = await c.submit('text2video', {
      model_name: 'lambda-3.0',
      prompt: 'a fox in snow',
      negative_prompt: 'blur',
      cfg_scale: 0.5,
      mode: 'pro',
      duration: '10',
      aspect_ratio: '9:16',
      camera_control: { type: 'simple', config: { zoom: 5 } },
      callback_url: 'https://example.com/cb',
      external_task_id: 'ext-1',
    });
    assert.equal(sub.status, 200);
    assert.equal(sub.body.code, 0);
    assert.equal(sub.body.message, 'SUCCEED');
    assert.equal(typeof sub.body.request_id, 'string');
    assert.equal(sub.body.data.task_status, 'submitted');
    assert.equal(sub.body.data.created_at, now);
    assert.deepEqual(sub.body.data.task_info, { external_task_id: 'ext-1' });
    const id = sub.body.data.task_id as string;
    assert.equal(sim.tasks?.get(id)?.kind, 'text2video');
    assert.equal(sim.tasks?.get(id)?.model, 'lambda-3.0');

    assert.equal((await c.query('text2video', id)).body.data.task_status, 'submitted');
    now += 1500;
    const running = await c.query('text2video', id);
    assert.equal(running.body.data.task_status, 'processing');
    assert.equal(running.body.data.task_result, undefined);
    now += 2000;
    const done = await c.query('text2video', id);
    assert.equal(done.body.data.task_status, 'succeed');
    assert.equal(done.body.data.task_status_msg, undefined);
    const [video] = done.body.data.task_result.videos;
    assert.equal(video.duration, '10');

    const expected = sim.result!(id)!;
    const whole = await fetch(video.url);
    assert.equal(whole.status, 200);
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), expected);
    const part = await fetch(video.url, { headers: { range: 'bytes=-50' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(expected.length - 50));

    const wrongKind = await c.query('image2video', id);
    assert.equal(wrongKind.status, 404);
    assert.equal(wrongKind.body.code, 1203);

    const again = await c.submit('text2video', { prompt: 'x', external_task_id: 'ext-1' });
    assert.equal(again.status, 400);
    assert.match(again.body.message, /already exists/);
  });

  test('image2video accepts a URL or raw base64; a failed task reports task_status_msg', async () => {
    const c = client(sim, () => now);
    const url = await c.submit('image2video', { image: 'https://example.com/a.png', image_tail: 'iVBORw0KGgo=', prompt: '[sim:fail=risk_control]' });
    assert.equal(url.status, 200);
    const id = url.body.data.task_id as string;
    assert.equal(sim.tasks?.get(id)?.kind, 'image2video');
    now += 3000;
    const q = await c.query('image2video', id);
    assert.equal(q.body.data.task_status, 'failed');
    assert.equal(q.body.data.task_status_msg, 'risk_control');
    assert.equal(q.body.data.task_result, undefined);
    assert.equal(sim.result!(id), null);
  });

  test('an odd status is reported as is, and a stuck task stays processing', async () => {
    const c = client(sim, () => now);
    const odd = (await c.submit('text2video', { prompt: '[sim:status=paused]' })).body.data.task_id as string;
    const stuck = (await c.submit('text2video', { prompt: '[sim:never]' })).body.data.task_id as string;
    now += 60_000;
    assert.equal((await c.query('text2video', odd)).body.data.task_status, 'paused');
    assert.equal((await c.query('text2video', stuck)).body.data.task_status, 'processing');
  });

  test('auth: missing, not Bearer, wrong secret, expired, wrong iss and future nbf all answer 401 with the envelope', async () => {
    const s = Math.floor(now / 1000);
    const ak = sim.secrets.access_key!;
    const sk = sim.secrets.secret_key!;
    const cases: [string | undefined, number][] = [
      [undefined, 1001],
      [`Token ${jwt({ iss: ak, exp: s + 1800, nbf: s - 5 }, sk)}`, 1002],
      ['Bearer garbage', 1002],
      [`Bearer ${jwt({ iss: ak, exp: s + 1800, nbf: s - 5 }, 'wrong-secret')}`, 1000],
      [`Bearer ${jwt({ iss: ak, exp: s - 1, nbf: s - 1805 }, sk)}`, 1004],
      [`Bearer ${jwt({ iss: 'someone-else', exp: s + 1800, nbf: s - 5 }, sk)}`, 1000],
      [`Bearer ${jwt({ iss: ak, exp: s + 1800, nbf: s + 60 }, sk)}`, 1003],
    ];
    for (const [authorization, code] of cases) {
      const res = await fetch(`${sim.url}/v1/videos/text2video`, {
        method: 'POST',
        headers: authorization ? { authorization } : {},
        body: JSON.stringify({ prompt: 'x' }),
      });
      assert.equal(res.status, 401, authorization);
      const body = (await res.json()) as Record<string, any>;
      assert.equal(body.code, code, authorization);
      assert.equal(typeof body.message, 'string');
      assert.equal(typeof body.request_id, 'string');
    }
    const q = await fetch(`${sim.url}/v1/videos/text2video/abc`);
    assert.equal(q.status, 401);
  });

  test('the vendor validation errors answer 400 / 1201', async () => {
    const c = client(sim, () => now);
    const bad: [string, unknown, RegExp][] = [
      ['text2video', { prompt: 'x', duration: 5 }, /duration/],
      ['text2video', { prompt: 'x', duration: '7' }, /duration/],
      ['text2video', {}, /prompt is required/],
      ['text2video', { prompt: 'x'.repeat(2501) }, /2500/],
      ['text2video', { prompt: 'x', cfg_scale: 1.5 }, /cfg_scale/],
      ['text2video', { prompt: 'x', mode: 'fast' }, /mode/],
      ['text2video', { prompt: 'x', aspect_ratio: '4:3' }, /aspect_ratio/],
      ['text2video', { prompt: 'x', camera_control: 'zoom' }, /camera_control/],
      ['text2video', { prompt: 'x', callback_url: 'ftp://x' }, /callback_url/],
      ['image2video', { prompt: 'x' }, /image is required/],
      ['image2video', { image: 'data:image/png;base64,iVBORw0KGgo=' }, /data: prefix/],
      ['image2video', { image: 'https://example.com/a.png', image_tail: 'data:image/png;base64,AAAA' }, /image_tail/],
      ['image2video', { image: 'not base64!' }, /neither/],
      ['text2video', '{oops', /not valid JSON/],
    ];
    for (const [kind, body, message] of bad) {
      const r = await c.submit(kind, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.code, 1201);
      assert.match(r.body.message, message);
    }
    const unknown = await c.query('text2video', 'nope');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 1203);
  });

  test('faults: status, reset, malformed JSON, slow headers and body, by header, query parameter and queue', async () => {
    const c = client(sim, () => now);
    const limited = await c.submit('text2video', { prompt: 'x' }, { 'x-sim-fault': '429' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 1302);
    assert.equal(limited.headers.get('retry-after'), '2');

    await assert.rejects(c.submit('text2video', { prompt: 'x' }, { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.submit('text2video', { prompt: 'x' }, { 'x-sim-fault': 'malformed-json' }));

    const slow = await c.submit('text2video', { prompt: 'x' }, { 'x-sim-fault': 'slow-headers:20' });
    assert.equal(slow.body.code, 0);
    const slowBody = await c.submit('text2video', { prompt: 'x [sim:fault=slow-body:20]' });
    assert.equal(slowBody.body.code, 0);
    assert.ok(sim.tasks?.get(slowBody.body.data.task_id));

    const id = slow.body.data.task_id as string;
    const viaParam = await c.query('text2video', id, {}, '?sim_fault=500');
    assert.equal(viaParam.status, 500);
    assert.equal(viaParam.body.code, 5000);
    sim.faults.push('503');
    const viaQueue = await c.query('text2video', id);
    assert.equal(viaQueue.status, 503);
    assert.equal(viaQueue.body.code, 5001);
    assert.equal((await c.query('text2video', id)).status, 200);
  });
});

describe('lambda-native simulator (real clock)', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startLambdaSimulator({ accessKey: 'ak-fixed', secretKey: 'sk-fixed' });
  });
  after(() => sim.close());

  test('a short task finishes, with the secrets given', async () => {
    assert.deepEqual(sim.secrets, { access_key: 'ak-fixed', secret_key: 'sk-fixed' });
    const c = client(sim, Date.now);
    const id = (await c.submit('image2video', { image: 'iVBORw0KGgo=', prompt: 'go [sim:finish=50]' })).body.data.task_id as string;
    let data: Record<string, any> = {};
    for (let i = 0; i < 100 && data.task_status !== 'succeed'; i++) {
      await delay(10);
      data = (await c.query('image2video', id)).body.data;
    }
    assert.equal(data.task_status, 'succeed');
    const bytes = Buffer.from(await (await fetch(data.task_result.videos[0].url)).arrayBuffer());
    assert.deepEqual(bytes, sim.result!(id));
    assert.equal(sim.stats.submits, 1);
  });
});
