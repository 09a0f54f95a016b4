/**
 * The gamma-volc simulator over real HTTP, every request signed by the gateway's signer: image and video
 * tasks in_queue → generating → done with the bytes of `sim.result`, every status word, failures, input
 * refusals, the concurrency limit, signature and timestamp refusals, Action/Version and path checks, the
 * vendor's validation errors, and every fault form.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { startGammaVolcSimulator } from '../../src/sim/gamma-volc.js';
import { pngSize } from '../../src/sim/png.js';
import { signHmacV4 } from '../../src/signers/hmac-v4.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-request.js';
import { type Answer, answerOf } from '../helpers/sim-client.js';

const SUBMIT = 'CVSync2AsyncSubmitTask';
const QUERY = 'CVSync2AsyncGetResult';
const IMG = 'https://img.example/a.png';

interface CallOptions {
  path?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** Appended to the URL after signing (what a test harness does). */
  extra?: string;
  signAt?: number;
  secretKey?: string;
  /** Replaces the body after signing. */
  tamper?: string;
}

function client(sim: Simulator, clock: () => number = Date.now) {
  async function call(action: string, body: unknown, o: CallOptions = {}): Promise<Answer> {
    const req: UpstreamRequest = {
      method: 'POST',
      path: o.path ?? '/',
      query: o.query ?? { Action: action, Version: '2022-08-31' },
      headers: { 'content-type': 'application/json', ...o.headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    };
    const keys = { accessKey: sim.secrets.access_key!, secretKey: o.secretKey ?? sim.secrets.secret_key! };
    signHmacV4(req, { ...keys, region: 'cn-north-1', service: 'cv', dateHeader: 'x-date', hashHeader: 'x-content-sha256', nowMs: o.signAt ?? clock() });
    const url = `${sim.url}${req.path}?${new URLSearchParams(req.query).toString()}${o.extra ?? ''}`;
    return answerOf(await fetch(url, { method: 'POST', headers: req.headers, body: o.tamper ?? req.body }));
  }
  return {
    call,
    submit: (body: unknown, o?: CallOptions) => call(SUBMIT, body, o),
    query: (reqKey: string, taskId: string, reqJson?: unknown, o?: CallOptions) =>
      call(QUERY, { req_key: reqKey, task_id: taskId, ...(reqJson === undefined ? {} : { req_json: JSON.stringify(reqJson) }) }, o),
  };
}

const image = (prompt: string, extra: Record<string, unknown> = {}) => ({ req_key: 'gamma_t2i_v40', prompt, ...extra });
const video = (prompt: string, extra: Record<string, unknown> = {}) => ({ req_key: 'gamma_v30', prompt, ...extra });

function assertEnvelope(a: Answer, code: number): void {
  assert.equal(a.body.code, code, JSON.stringify(a.body));
  assert.equal(a.body.status, code);
  assert.match(a.body.request_id, /^\d{14}[0-9A-F]{18}$/);
  assert.match(a.body.time_elapsed, /^\d+\.\d{3}ms$/);
}

describe('gamma-volc simulator (fake clock)', () => {
  let now = Date.UTC(2025, 4, 6, 7, 8, 9);
  let sim: Simulator;
  before(async () => {
    sim = await startGammaVolcSimulator({ finishMs: 3000, clock: () => now, expireMs: 60_000 });
  });
  after(() => sim.close());

  test('an image task: in_queue → generating → done as base64 or URLs (Range), then expired', async () => {
    const c = client(sim, () => now);
    const sub = await c.submit(image('a red fox [sim:images=3]', { width: 1024, height: 2048, seed: -1, image_urls: [IMG] }), { path: '/cv/base/' });
    assert.equal(sub.status, 200);
    assertEnvelope(sub, 10000);
    assert.equal(sub.body.message, 'Success');
    const id = sub.body.data.task_id as string;
    assert.equal(sim.tasks?.get(id)?.model, 'gamma_t2i_v40');
    assert.equal((sim.tasks!.get(id)!.body as any).plan.mode, 'image');

    const empty = { image_urls: null, binary_data_base64: null, video_url: null };
    let q = await c.query('gamma_t2i_v40', id);
    assert.deepEqual(q.body.data, { status: 'in_queue', ...empty });
    assert.equal(sim.result!(id), null);
    now += 1500;
    q = await c.query('gamma_t2i_v40', id, { return_url: true });
    assert.deepEqual(q.body.data, { status: 'generating', ...empty });
    assertEnvelope(q, 10000);

    now += 1500;
    q = await c.query('gamma_t2i_v40', id);
    assert.equal(q.body.data.status, 'done');
    assertEnvelope(q, 10000);
    assert.equal(q.body.data.image_urls, null);
    const b64 = q.body.data.binary_data_base64 as string[];
    assert.equal(b64.length, 3);
    b64.forEach((b, i) => {
      assert.deepEqual(Buffer.from(b, 'base64'), sim.result!(id, i));
    });
    assert.deepEqual(pngSize(sim.result!(id, 0)!), { width: 64, height: 128 });
    assert.notDeepEqual(sim.result!(id, 0), sim.result!(id, 1));
    assert.equal(sim.result!(id, 3), null);

    q = await c.query('gamma_t2i_v40', id, { return_url: true });
    const urls = q.body.data.image_urls as string[];
    assert.equal(q.body.data.binary_data_base64, null);
    assert.deepEqual(
      urls,
      [0, 1, 2].map((i) => `${sim.url}/files/${id}-${i}.png`),
    );
    const whole = await fetch(urls[1]!);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), sim.result!(id, 1));
    const part = await fetch(urls[0]!, { headers: { range: 'bytes=0-7' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), sim.result!(id, 0)!.subarray(0, 8));
    assert.equal((await fetch(`${sim.url}/files/${id}.mp4`)).status, 404, 'an image task has no video');
    assert.equal(sim.tasks?.get(id)?.polls, 4);

    now += 60_000;
    q = await c.query('gamma_t2i_v40', id, { return_url: true });
    assert.deepEqual(q.body.data, { status: 'expired', ...empty });
    assertEnvelope(q, 10000);
    assert.equal(sim.result!(id), null);
    assert.equal((await fetch(urls[0]!)).status, 404);
  });

  test('image size: size as an area, default 2048x2048, one image by default', async () => {
    const c = client(sim, () => now);
    const a = (await c.submit(image('x', { size: 1024 * 1024 }))).body.data.task_id as string;
    const b = (await c.submit({ req_key: 'gamma_t2i_v45', prompt: 'y', binary_data_base64: ['iVBORw0KGgo='] })).body.data.task_id as string;
    now += 3000;
    assert.deepEqual(pngSize(sim.result!(a)!), { width: 64, height: 64 });
    assert.deepEqual(pngSize(sim.result!(b)!), { width: 128, height: 128 });
    const q = await c.query('gamma_t2i_v45', b);
    assert.equal(q.body.data.binary_data_base64.length, 1);
    assert.equal((sim.tasks!.get(b)!.body as any).plan.mode, 'image');
  });

  test('video tasks in every mode end with a video_url whose bytes are sim.result', async () => {
    const c = client(sim, () => now);
    const cases: [Record<string, unknown>, string][] = [
      [video('v', { aspect_ratio: '21:9', frames: 241, seed: 5 }), 'text'],
      [video('v', { image_urls: [IMG] }), 'first-frame'],
      [{ req_key: 'gamma_v20', prompt: 'v', binary_data_base64: ['AAAA', 'BBBB'] }, 'first-last'],
      [video('v', { mode: 'reference', image_urls: [IMG, IMG, IMG, IMG] }), 'reference'],
    ];
    const ids: string[] = [];
    for (const [body, mode] of cases) {
      const sub = await c.submit(body);
      assert.equal(sub.status, 200, JSON.stringify(sub.body));
      const id = sub.body.data.task_id as string;
      assert.equal((sim.tasks!.get(id)!.body as any).plan.mode, mode);
      ids.push(id);
    }
    assert.equal((sim.tasks!.get(ids[0]!)!.body as any).plan.frames, 241);
    assert.equal((await c.query('gamma_v30', ids[0]!)).body.data.status, 'in_queue');
    now += 3000;
    for (const [i, id] of ids.entries()) {
      const q = await c.query(i === 2 ? 'gamma_v20' : 'gamma_v30', id, { return_url: true });
      assert.deepEqual(q.body.data, { status: 'done', image_urls: null, binary_data_base64: null, video_url: `${sim.url}/files/${id}.mp4` });
    }
    const expected = sim.result!(ids[0]!)!;
    const res = await fetch(`${sim.url}/files/${ids[0]}.mp4`);
    assert.equal(res.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), expected);
    const part = await fetch(`${sim.url}/files/${ids[0]}.mp4`, { method: 'GET', headers: { range: 'bytes=-100' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(expected.length - 100));
    assert.equal(sim.result!(ids[0]!, 1), null);
    assert.equal((await fetch(`${sim.url}/files/${ids[0]}-0.png`)).status, 404);
  });

  test('not_found, [sim:never], [sim:status=WORD], and failures with their codes', async () => {
    const c = client(sim, () => now);
    const unknown = await c.query('gamma_v30', 'deadbeef');
    assert.equal(unknown.status, 200);
    assertEnvelope(unknown, 10000);
    assert.equal(unknown.body.data.status, 'not_found');
    const id = async (prompt: string) => (await c.submit(video(prompt))).body.data.task_id as string;
    const never = await id('x [sim:never]');
    const odd = await id('x [sim:status=paused]');
    const fail = await id('x [sim:fail]');
    const fail512 = await id('x [sim:fail=50512]');
    const failText = await id('x [sim:fail=AudienceRefused]');
    assert.equal((await c.query('gamma_v20', never)).body.data.status, 'not_found', 'another req_key does not find the task');
    now += 30_000;
    assert.equal((await c.query('gamma_v30', never)).body.data.status, 'generating');
    assert.equal((await c.query('gamma_v30', odd)).body.data.status, 'paused');
    for (const [task, code, message] of [
      [fail, 50511, 'Post Img Risk Not Pass'],
      [fail512, 50512, 'Post Text Risk Not Pass'],
      [failText, 50511, 'AudienceRefused'],
    ] as const) {
      const q = await c.query('gamma_v30', task);
      assert.equal(q.status, 200);
      assertEnvelope(q, code);
      assert.equal(q.body.message, message);
      assert.deepEqual(q.body.data, { status: 'done', image_urls: null, binary_data_base64: null, video_url: null });
      assert.equal(sim.result!(task), null);
    }
  });

  test("signature refusals: the real service's ResponseMetadata.Error and status, the simulator's reason in x-sim-refusal; X-Date more than 15 minutes off", async () => {
    const c = client(sim, () => now);
    const cases: [CallOptions, number, string, string][] = [
      [{ secretKey: 'wrong' }, 401, 'SignatureDoesNotMatch', 'SignatureDoesNotMatch'],
      [{ tamper: JSON.stringify(image('changed')) }, 401, 'SignatureDoesNotMatch', 'ContentSha256Mismatch'],
      [{ signAt: now - 16 * 60_000 }, 403, 'InvalidTimestamp', 'RequestExpired'],
      [{ signAt: now + 16 * 60_000 }, 403, 'InvalidTimestamp', 'RequestExpired'],
    ];
    const size = sim.tasks!.size;
    for (const [o, status, code, reason] of cases) {
      const a = await c.submit(image('x'), o);
      assert.equal(a.status, status, reason);
      assert.deepEqual(Object.keys(a.body), ['ResponseMetadata'], 'not the CV envelope');
      assert.equal(a.body.ResponseMetadata.Error.Code, code);
      assert.equal(a.body.ResponseMetadata.Action, SUBMIT);
      assert.match(a.headers.get('x-sim-refusal') ?? '', new RegExp(`^${reason}: `));
    }
    assert.equal((await c.submit(image('x'), { signAt: now - 14 * 60_000 })).status, 200);
    const bare = await fetch(`${sim.url}/?Action=${QUERY}&Version=2022-08-31`, { method: 'POST', body: '{}' });
    assert.equal(bare.status, 401);
    assert.match(bare.headers.get('x-sim-refusal') ?? '', /^MissingAuthorization: /);
    assert.equal(((await bare.json()) as any).ResponseMetadata.Error.Code, 'MissingAuthenticationToken');
    assert.equal(sim.tasks!.size, size + 1);
  });
});

describe('gamma-volc simulator (real time)', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startGammaVolcSimulator({ finishMs: 60_000, region: 'cn-north-1', service: 'cv' });
  });
  after(() => sim.close());

  test('a task with [sim:finish=…] settles by polling', async () => {
    const c = client(sim);
    const id = (await c.submit(image('quick [sim:finish=40]'))).body.data.task_id as string;
    let q: Answer | undefined;
    for (let i = 0; i < 100; i++) {
      q = await c.query('gamma_t2i_v40', id);
      if (q.body.data.status === 'done') break;
      assert.ok(['in_queue', 'generating'].includes(q.body.data.status));
      await delay(10);
    }
    assert.equal(q?.body.data.status, 'done');
    assert.deepEqual(Buffer.from(q!.body.data.binary_data_base64[0], 'base64'), sim.result!(id));
  });

  test('Action, Version, path and method are checked', async () => {
    const c = client(sim);
    const queries: Record<string, string>[] = [
      { Action: 'CVProcess', Version: '2022-08-31' },
      { Action: SUBMIT, Version: '2024-01-01' },
      { Action: SUBMIT },
      {},
    ];
    for (const query of queries) {
      const a = await c.call(SUBMIT, image('x'), { query });
      assert.equal(a.status, 400);
      assertEnvelope(a, 50400);
      assert.match(a.body.message, /InvalidActionOrVersion/);
    }
    const noSlash = await c.submit(image('x'), { path: '/cv' });
    assert.equal(noSlash.status, 404);
    assertEnvelope(noSlash, 50404);
    assert.equal((await fetch(`${sim.url}/?Action=${SUBMIT}&Version=2022-08-31`)).status, 404);
    assert.equal((await c.submit(image('x'), { path: '/a/b/c/' })).status, 200, 'any base path ending in /');
  });

  test('input refusals at submit: 400 with 50411 / 50412 / 50413, and no task', async () => {
    const c = client(sim);
    const size = sim.tasks!.size;
    for (const [marker, code] of [
      ['[sim:refuse-input]', 50411],
      ['[sim:refuse-input=50412]', 50412],
      ['[sim:refuse-input=50413]', 50413],
    ] as const) {
      const a = await c.submit(image(`x ${marker}`));
      assert.equal(a.status, 400);
      assertEnvelope(a, code);
    }
    assert.equal(sim.tasks!.size, size);
  });

  test('validation errors answer 400 / 50400 with the field named', async () => {
    const c = client(sim);
    const long = 'x'.repeat(801);
    const cases: [unknown, RegExp][] = [
      ['{"req_key": ', /not valid JSON/],
      [[1], /JSON object/],
      [{ prompt: 'x' }, /req_key is required/],
      [{ req_key: 'gamma_t2i_v99', prompt: 'x' }, /invalid req_key/],
      [image(''), /prompt is required/],
      [image(long), /at most 800/],
      [image('x', { seed: 1.5 }), /seed/],
      [image('x', { seed: -2 }), /seed/],
      [image('x', { image_urls: [IMG], binary_data_base64: ['AAAA'] }), /mutually exclusive/],
      [image('x', { image_urls: [] }), /non-empty/],
      [image('x', { image_urls: 'https://a.example/x.png' }), /non-empty array/],
      [image('x', { image_urls: ['ftp://a/x.png'] }), /http\(s\) URL/],
      [image('x', { binary_data_base64: ['data:image/png;base64,AAAA'] }), /raw base64/],
      [image('x', { image_urls: Array(11).fill(IMG) }), /at most 10/],
      [image('x', { width: 1024 }), /width and height/],
      [image('x', { width: 511, height: 1024 }), /width and height/],
      [image('x', { width: 4096, height: 1024 }), /1:3 and 3:1/],
      [image('x', { size: 1000 }), /size/],
      [image('x', { aspect_ratio: '16:9' }), /aspect_ratio is not supported by image/],
      [image('x', { frames: 121 }), /frames is not supported by image/],
      [video('x', { width: 1024, height: 1024 }), /width is not supported by video/],
      [video('x', { size: 4194304 }), /size is not supported by video/],
      [video('x', { aspect_ratio: '2:1' }), /aspect_ratio must be one of/],
      [video('x', { frames: 120 }), /frames must be 121/],
      [video('x', { image_urls: [IMG, IMG, IMG] }), /at most 2/],
      [video('x', { mode: 'reference' }), /needs image_urls/],
      [video('x', { mode: 'reference', image_urls: Array(5).fill(IMG) }), /at most 4/],
      [video('x', { mode: 'first_last' }), /mode must be "reference"/],
    ];
    for (const [body, message] of cases) {
      const a = await c.submit(body);
      assert.equal(a.status, 400, JSON.stringify(body));
      assertEnvelope(a, 50400);
      assert.match(a.body.message, message);
      assert.equal(a.body.data, null);
    }
    const queries: [unknown, RegExp][] = [
      [{ task_id: 'x' }, /req_key/],
      [{ req_key: 'gamma_v30' }, /task_id is required/],
      [{ req_key: 'gamma_v30', task_id: 'x', req_json: { return_url: true } }, /req_json must be a JSON string/],
      [{ req_key: 'gamma_v30', task_id: 'x', req_json: '{"return_url":' }, /req_json is not valid JSON/],
      [{ req_key: 'gamma_v30', task_id: 'x', req_json: '[]' }, /JSON object/],
      [{ req_key: 'gamma_v30', task_id: 'x', req_json: '{"return_url":"yes"}' }, /return_url must be a boolean/],
    ];
    for (const [body, message] of queries) {
      const a = await c.call(QUERY, body);
      assert.equal(a.status, 400, JSON.stringify(body));
      assert.match(a.body.message, message);
    }
  });

  test('faults: vendor bodies for 429 / 5xx, reset, malformed JSON, slow headers, slow body, queue and marker', async () => {
    const c = client(sim);
    const r429 = await c.submit(image('x'), { headers: { 'x-sim-fault': '429' } });
    assert.equal(r429.status, 429);
    assertEnvelope(r429, 50429);
    assert.equal(r429.headers.get('retry-after'), '2');
    const r500 = await c.query('gamma_v30', 'any', undefined, { headers: { 'x-sim-fault': '500' } });
    assert.equal(r500.status, 500);
    assertEnvelope(r500, 50500);
    assert.equal(r500.body.message, 'Internal Error');
    const r503 = await c.query('gamma_v30', 'any', undefined, { extra: '&sim_fault=503' });
    assert.equal(r503.status, 503);
    assertEnvelope(r503, 50500);
    const r403 = await c.query('gamma_v30', 'any', undefined, { extra: '&sim_fault=403' });
    assertEnvelope(r403, 50403);

    await assert.rejects(c.submit(image('x'), { headers: { 'x-sim-fault': 'reset' } }));
    await assert.rejects(c.query('gamma_v30', 'any', undefined, { headers: { 'x-sim-fault': 'reset' } }));
    await assert.rejects(c.query('gamma_v30', 'any', undefined, { headers: { 'x-sim-fault': 'malformed-json' } }), SyntaxError);

    const slow = await c.submit(image('x'), { headers: { 'x-sim-fault': 'slow-headers:30' } });
    assert.equal(slow.status, 200);
    const slowBody = await c.submit(image('x'), { headers: { 'x-sim-fault': 'slow-body:30' } });
    assert.ok(sim.tasks!.get(slowBody.body.data.task_id), 'slow-body still creates the task');

    sim.faults.push('429');
    assert.equal((await c.query('gamma_v30', 'any')).status, 429);
    assert.equal((await c.query('gamma_v30', 'any')).status, 200);
    const marked = await c.submit(image('x [sim:fault=500]'));
    assert.equal(marked.status, 500);
    assertEnvelope(marked, 50500);
  });

  test('counters: requests, submits, queries, downloads', () => {
    assert.ok(sim.stats.requests >= sim.stats.submits! + sim.stats.queries!);
    assert.ok(sim.stats.submits! > 0 && sim.stats.queries! > 0);
  });
});

test('gamma-volc: the concurrency limit refuses with 429 / 50430 until a task ends', async () => {
  let now = Date.UTC(2025, 0, 1);
  const sim = await startGammaVolcSimulator({ finishMs: 1000, clock: () => now, maxConcurrent: 2, accessKey: 'AK1', secretKey: 'SK1' });
  try {
    assert.deepEqual(sim.secrets, { access_key: 'AK1', secret_key: 'SK1' });
    assert.equal(sim.profile, 'gamma-volc');
    const c = client(sim, () => now);
    assert.equal((await c.submit(video('a'))).status, 200);
    assert.equal((await c.submit(video('b'))).status, 200);
    const busy = await c.submit(video('c'));
    assert.equal(busy.status, 429);
    assertEnvelope(busy, 50430);
    now += 1000;
    assert.equal((await c.submit(video('d'))).status, 200);
  } finally {
    await sim.close();
  }
});
