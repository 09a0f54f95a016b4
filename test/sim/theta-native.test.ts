/**
 * The theta-native simulator over real HTTP: submit → Preparing → Queueing → Processing → Success, the
 * two-step result (file id → retrieve → signed, expiring download URL) with the bytes of `sim.result`,
 * remix, the xi models, failures with their base_resp codes, odd and stuck statuses, HTTP-200 auth and
 * validation refusals, and every fault form including `code:NNNN`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Simulator } from '../../src/sim/http.js';
import { startThetaNativeSimulator } from '../../src/sim/theta-native.js';
import { type Answer, simClient } from '../helpers/sim-client.js';

const SUBMIT = '/v1/video_generation';
const IMG = 'https://img.example/a.png';
const DATA_IMG = 'data:image/png;base64,iVBORw0KGgo=';

/** A client sending `key` as a bearer token, or no authorization at all when `key` is null. */
function client(sim: Simulator, key: string | null = sim.secrets.key ?? null) {
  const c = simClient(sim, key === null ? {} : { authorization: `Bearer ${key}` });
  return {
    submit: (body: unknown, headers?: Record<string, string>) => c.post(SUBMIT, body, headers),
    query: (id: string, headers?: Record<string, string>, extra = '') => c.get(`/v1/query/video_generation?task_id=${encodeURIComponent(id)}${extra}`, headers),
    retrieve: (fileId: string, headers?: Record<string, string>) => c.get(`/v1/files/retrieve?file_id=${encodeURIComponent(fileId)}`, headers),
  };
}

const h3 = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: 'theta-H3', prompt, ...extra });
const OK = { status_code: 0, status_msg: 'success' };

describe('theta-native simulator (fake clock)', () => {
  let now = 1_700_000_000_000;
  let sim: Simulator;
  before(async () => {
    sim = await startThetaNativeSimulator({ finishMs: 6000, clock: () => now });
  });
  after(() => sim.close());

  /** Submits and moves the clock past the finish; returns the task id. */
  async function finished(body: unknown): Promise<string> {
    const sub = await client(sim).submit(body);
    assert.deepEqual(sub.body.base_resp, OK, JSON.stringify(sub.body));
    now += 6000;
    return sub.body.task_id as string;
  }

  test('a task goes Preparing → Queueing → Processing → Success; retrieve gives a signed URL with the bytes', async () => {
    const c = client(sim);
    const sub = await c.submit(
      h3('a cat surfing', { duration: 6, resolution: '768P', first_frame_image: IMG, last_frame_image: DATA_IMG, aigc_watermark: false }),
    );
    assert.equal(sub.status, 200);
    assert.deepEqual(sub.body.base_resp, OK);
    const id = sub.body.task_id as string;
    assert.equal(sim.tasks?.get(id)?.model, 'theta-H3');

    const seen: string[] = [];
    for (const step of [0, 1500, 2500, 2000]) {
      now += step;
      const q = await c.query(id);
      assert.deepEqual(q.body.base_resp, OK);
      seen.push(q.body.status);
      if (q.body.status !== 'Success') {
        assert.deepEqual([q.body.file_id, q.body.video_width, q.body.video_height], ['', 0, 0]);
        assert.equal(sim.result!(id), null);
      }
    }
    assert.deepEqual(seen, ['Preparing', 'Queueing', 'Processing', 'Success']);
    const q = await c.query(id);
    assert.equal(q.body.task_id, id);
    assert.match(q.body.file_id, /^[0-9]{15}$/);
    assert.deepEqual([q.body.video_width, q.body.video_height], [1366, 768]);

    const r = await c.retrieve(q.body.file_id);
    assert.deepEqual(r.body.base_resp, OK);
    const expected = sim.result!(id)!;
    assert.ok(expected);
    const { file } = r.body;
    assert.equal(file.file_id, q.body.file_id);
    assert.equal(file.bytes, expected.length);
    assert.equal(file.purpose, 'video_generation');
    assert.equal(file.filename, `${q.body.file_id}.mp4`);
    assert.equal(file.created_at, Math.floor(now / 1000)); // the clock stands exactly at the finish
    assert.match(file.download_url, new RegExp(`^${sim.url}/files/${q.body.file_id}\\.mp4\\?expires=[0-9]+&sig=[0-9a-f]{64}$`));

    const whole = await fetch(file.download_url); // no auth needed
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), expected);
    const part = await fetch(file.download_url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${expected.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), expected.subarray(100, 200));
    assert.equal(sim.result!(id, 1), null);
    assert.equal(sim.tasks?.get(id)?.polls, 5);
  });

  test('the download URL expires after one hour of the sim clock; a new retrieve signs a fresh one', async () => {
    const c = client(sim);
    const id = await finished(h3('expiry', { resolution: '2K' }));
    const q = await c.query(id);
    assert.deepEqual([q.body.video_width, q.body.video_height], [2560, 1440]);
    const first = (await c.retrieve(q.body.file_id)).body.file.download_url as string;
    now += 3599_000;
    assert.equal((await fetch(first)).status, 200);
    now += 1000;
    const expired = await fetch(first);
    assert.equal(expired.status, 403);
    assert.equal(await expired.text(), 'AccessDenied: request has expired');
    const fresh = (await c.retrieve(q.body.file_id)).body.file.download_url as string;
    assert.notEqual(fresh, first);
    assert.deepEqual(Buffer.from(await (await fetch(fresh)).arrayBuffer()), sim.result!(id));

    const u = new URL(fresh);
    for (const bad of [
      fresh.replace(/sig=./, (m) => (m.endsWith('0') ? 'sig=1' : 'sig=0')),
      `${u.origin}${u.pathname}`,
      fresh.replace(/expires=[0-9]+/, `expires=${Number(u.searchParams.get('expires')) + 60}`),
    ]) {
      const res = await fetch(bad);
      assert.equal(res.status, 403, bad);
      assert.equal(await res.text(), 'AccessDenied: signature does not match');
    }
    const missing = await fetch(`${sim.url}/files/123.mp4?expires=1&sig=00`);
    assert.equal(missing.status, 404);
  });

  test('the xi models: defaults 6 s / 768P, 1080P at 6 s is 1920x1080', async () => {
    const c = client(sim);
    const plain = await finished({ model: 'xi-2.3', prompt: 'sea' });
    const p = (await c.query(plain)).body;
    assert.deepEqual([p.video_width, p.video_height], [1366, 768]);
    const hd = await finished({ model: 'xi-2.3-fast', prompt: 'sea', duration: 6, resolution: '1080P', first_frame_image: DATA_IMG });
    const q = await c.query(hd);
    assert.deepEqual([q.body.status, q.body.video_width, q.body.video_height], ['Success', 1920, 1080]);
    const r = await c.retrieve(q.body.file_id);
    assert.deepEqual(Buffer.from(await (await fetch(r.body.file.download_url)).arrayBuffer()), sim.result!(hd));
  });

  test('remix takes a succeeded 768P task, inherits 768P, and refuses other sources', async () => {
    const c = client(sim);
    const source = await finished(h3('source', { resolution: '768P' }));
    const remix = await finished({ model: 'theta-H3', prompt: 'now at night', remix_task_id: source });
    const q = await c.query(remix);
    assert.deepEqual([q.body.status, q.body.video_width], ['Success', 1366]);

    const big = await finished(h3('big'));
    const pending = (await c.submit(h3('pending', { resolution: '768P' }))).body.task_id as string;
    for (const from of [big, pending, 'no-such-task']) {
      const a = await c.submit({ model: 'theta-H3', prompt: 'again', remix_task_id: from });
      assert.equal(a.status, 200);
      assert.equal(a.body.task_id, '');
      assert.equal(a.body.base_resp.status_code, 2013);
      assert.match(a.body.base_resp.status_msg, /^invalid params, the remix source must be a 768P video/);
    }
    const noPrompt = await c.submit({ model: 'theta-H3', remix_task_id: source });
    assert.match(noPrompt.body.base_resp.status_msg, /prompt is required for a remix/);
    const withFrame = await c.submit({ model: 'theta-H3', prompt: 'x', remix_task_id: source, first_frame_image: IMG });
    assert.match(withFrame.body.base_resp.status_msg, /a remix takes only/);
  });

  test('failures: [sim:fail] → 1026, [sim:fail=1027] → 1027, [sim:fail=TEXT] → 1000 TEXT, [sim:fail=0] → 0; no file', async () => {
    const c = client(sim);
    const cases: [string, number, string | RegExp][] = [
      ['[sim:fail]', 1026, /^input new_sensitive/],
      ['[sim:fail=1027]', 1027, /^output new_sensitive/],
      ['[sim:fail=ModelOverloaded]', 1000, 'ModelOverloaded'],
      ['[sim:fail=0]', 0, 'success'],
    ];
    for (const [marker, code, message] of cases) {
      const id = await finished(h3(`bad ${marker}`));
      const q = await c.query(id);
      assert.equal(q.status, 200);
      assert.equal(q.body.status, 'Fail');
      assert.equal(q.body.file_id, '');
      assert.equal(q.body.base_resp.status_code, code);
      if (typeof message === 'string') assert.equal(q.body.base_resp.status_msg, message);
      else assert.match(q.body.base_resp.status_msg, message);
      assert.equal(sim.result!(id), null);
    }
  });

  test('[sim:never] stays Processing; [sim:status=WORD] reports WORD; unknown task and file answer 2013', async () => {
    const c = client(sim);
    const stuck = (await c.submit(h3('slow [sim:never]'))).body.task_id as string;
    const odd = (await c.submit(h3('odd [sim:status=Suspended]'))).body.task_id as string;
    now += 10 * 60_000;
    assert.equal((await c.query(stuck)).body.status, 'Processing');
    assert.equal((await c.query(odd)).body.status, 'Suspended');
    for (const id of ['no-such-task', '']) {
      const q = await c.query(id);
      assert.equal(q.status, 200);
      assert.deepEqual(q.body, { task_id: id, base_resp: { status_code: 2013, status_msg: 'invalid params, task not found' } });
    }
    const r = await c.retrieve('999');
    assert.deepEqual(r.body, { base_resp: { status_code: 2013, status_msg: 'invalid params, file not found' } });
  });
});

describe('theta-native simulator (real time)', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startThetaNativeSimulator({ finishMs: 60_000 });
  });
  after(() => sim.close());

  test('a subject-reference task finishes after [sim:finish=…] and downloads its bytes', async () => {
    const c = client(sim);
    const sub = await c.submit({ model: 'theta-H3', subject_reference: [{ type: 'character', image: [IMG, DATA_IMG] }], prompt: 'hero [sim:finish=40]' });
    const id = sub.body.task_id as string;
    let q: Answer | null = null;
    for (let i = 0; i < 100 && q?.body.status !== 'Success'; i++) {
      if (i > 0) await delay(10);
      q = await c.query(id);
      assert.ok(['Preparing', 'Queueing', 'Processing', 'Success'].includes(q.body.status), q.body.status);
    }
    assert.equal(q?.body.status, 'Success');
    const r = await c.retrieve(q!.body.file_id);
    assert.deepEqual(Buffer.from(await (await fetch(r.body.file.download_url)).arrayBuffer()), sim.result!(id));
  });

  test('a wrong or missing key answers HTTP 200 with base_resp 1004 and creates nothing', async () => {
    const size = sim.tasks!.size;
    for (const key of ['wrong', null]) {
      const c = client(sim, key);
      const s = await c.submit(h3('x'));
      assert.equal(s.status, 200);
      assert.equal(s.body.task_id, '');
      assert.equal(s.body.base_resp.status_code, 1004);
      assert.match(s.body.base_resp.status_msg, /^login fail/);
      const q = await c.query('t1');
      assert.deepEqual([q.status, q.body.task_id, q.body.base_resp.status_code], [200, 't1', 1004]);
      const r = await c.retrieve('1');
      assert.deepEqual([r.status, r.body.base_resp.status_code], [200, 1004]);
    }
    assert.equal(sim.tasks!.size, size);
  });

  test('validation errors answer HTTP 200 with base_resp 2013 and a detail', async () => {
    const refs = (n: number) => Array.from({ length: n }, (_, i) => `https://v.example/${i}.mp4`);
    const subject = (n: number) => [{ type: 'character', image: Array.from({ length: n }, () => IMG) }];
    const cases: [unknown, RegExp][] = [
      ['{"model": ', /not valid JSON/],
      [[1, 2], /JSON object/],
      [{ prompt: 'x' }, /model is required/],
      [{ model: 'theta-H9', prompt: 'x' }, /unknown model: theta-H9/],
      [h3(''), /prompt is required/],
      [h3('x'.repeat(2001)), /at most 2000 characters/],
      [h3(null as unknown as string), /prompt must be a string/],
      [h3('x', { duration: 3 }), /duration of theta-H3 must be 4 to 15/],
      [h3('x', { duration: 16 }), /duration/],
      [h3('x', { duration: '5' }), /duration must be an integer/],
      [h3('x', { resolution: '1080P' }), /resolution of theta-H3 must be one of 768P, 2K/],
      [h3('x', { first_frame_image: 'not a url' }), /first_frame_image/],
      [h3('x', { first_frame_image: 'data:text/plain;base64,aGk=' }), /first_frame_image/],
      [h3('x', { last_frame_image: IMG }), /last_frame_image needs first_frame_image/],
      [h3('x', { subject_reference: subject(10) }), /at most 9 images/],
      [h3('x', { subject_reference: [...subject(5), ...subject(5)] }), /at most 9 images/],
      [h3('x', { subject_reference: [{ type: 'object', image: [IMG] }] }), /"character"/],
      [h3('x', { subject_reference: [{ type: 'character', image: [] }] }), /non-empty/],
      [h3('x', { reference_videos: refs(4) }), /reference_videos must be an array of 1 to 3/],
      [h3('x', { reference_audios: [DATA_IMG] }), /reference_audios entries must be http\(s\) URLs/],
      [h3('x', { reference_videos: refs(1), first_frame_image: IMG }), /cannot be combined/],
      [h3('x', { aigc_watermark: 'yes' }), /aigc_watermark must be a boolean/],
      [h3('x', { prompt_optimizer: 1 }), /prompt_optimizer must be a boolean/],
      [{ model: 'xi-2.3', prompt: 'x', duration: 5 }, /duration of xi-2.3 must be 6 or 10/],
      [{ model: 'xi-2.3', prompt: 'x', resolution: '2K' }, /768P, 1080P/],
      [{ model: 'xi-2.3-fast', prompt: 'x', duration: 10, resolution: '1080P' }, /1080P supports a duration of 6 seconds only/],
      [{ model: 'xi-2.3', prompt: 'x', first_frame_image: IMG, last_frame_image: IMG }, /last_frame_image is not supported by xi-2.3/],
      [{ model: 'xi-2.3', prompt: 'x', subject_reference: subject(1) }, /subject_reference is not supported/],
      [{ model: 'xi-2.3', prompt: 'x', reference_videos: refs(1) }, /reference_videos is not supported/],
    ];
    const size = sim.tasks!.size;
    for (const [body, message] of cases) {
      const a = await client(sim).submit(body);
      assert.equal(a.status, 200, JSON.stringify(body).slice(0, 80));
      assert.equal(a.body.task_id, '');
      assert.equal(a.body.base_resp.status_code, 2013, JSON.stringify(body).slice(0, 80));
      assert.match(a.body.base_resp.status_msg, /^invalid params, /);
      assert.match(a.body.base_resp.status_msg, message);
    }
    assert.equal(sim.tasks!.size, size);
    // Accepted edge cases: 2000 characters (code points), references alone, audios with no prompt.
    for (const ok of [h3('é'.repeat(2000)), h3('x', { reference_videos: refs(3), reference_audios: refs(3) }), h3('', { reference_audios: refs(1) })]) {
      assert.deepEqual((await client(sim).submit(ok)).body.base_resp, OK);
    }
  });

  test('faults: real HTTP statuses with base_resp bodies, reset, malformed JSON, slow headers and body, queue, marker', async () => {
    const c = client(sim);
    const r429 = await c.submit(h3('x'), { 'x-sim-fault': '429' });
    assert.equal(r429.status, 429);
    assert.equal(r429.headers.get('retry-after'), '2');
    assert.equal(r429.body.base_resp.status_code, 1002);
    const r500 = await c.query('any', { 'x-sim-fault': '500' });
    assert.deepEqual([r500.status, r500.body.base_resp.status_code], [500, 1013]);
    const r503 = await c.query('any', {}, '&sim_fault=503');
    assert.deepEqual([r503.status, r503.body.base_resp.status_code], [503, 1013]);
    const r401 = await c.retrieve('1', { 'x-sim-fault': '401' });
    assert.deepEqual([r401.status, r401.body.base_resp.status_code], [401, 1004]);

    await assert.rejects(c.submit(h3('x'), { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.query('any', { 'x-sim-fault': 'reset' }));
    await assert.rejects(c.retrieve('1', { 'x-sim-fault': 'malformed-json' }), SyntaxError);

    const slow = await c.submit(h3('x'), { 'x-sim-fault': 'slow-headers:30' });
    assert.deepEqual(slow.body.base_resp, OK);
    const slowBody = await c.submit(h3('x'), { 'x-sim-fault': 'slow-body:30' });
    assert.ok(sim.tasks!.get(slowBody.body.task_id), 'slow-body still creates the task');

    sim.faults.push('429');
    assert.equal((await c.query('any')).status, 429);
    assert.equal((await c.query('any')).status, 200);
    const marked = await c.submit(h3('x [sim:fault=500]'));
    assert.deepEqual([marked.status, marked.body.base_resp.status_code], [500, 1013]);
  });

  test('the code:NNNN fault answers HTTP 200 with that base_resp, as the vendor refuses, and creates nothing', async () => {
    const c = client(sim);
    const size = sim.tasks!.size;
    const balance = await c.submit(h3('x'), { 'x-sim-fault': 'code:1008' });
    assert.deepEqual(balance.body, { task_id: '', base_resp: { status_code: 1008, status_msg: 'insufficient balance' } });
    assert.equal(balance.status, 200);
    const refused = await c.submit(h3('x [sim:fault=code:1026]'));
    assert.deepEqual([refused.status, refused.body.base_resp.status_code], [200, 1026]);
    sim.faults.push('code:1002');
    const limited = await c.query('t9');
    assert.deepEqual(limited.body, { task_id: 't9', base_resp: { status_code: 1002, status_msg: 'rate limit exceeded, please try again later' } });
    const viaQuery = await c.query('t9', {}, '&sim_fault=code:1002');
    assert.deepEqual([viaQuery.status, viaQuery.body.base_resp.status_code], [200, 1002]);
    assert.equal(sim.tasks!.size, size);
  });

  test('unknown paths answer 404 with a base_resp; counters add up', async () => {
    const res = await fetch(`${sim.url}/v1/video_generation`, { headers: { authorization: `Bearer ${sim.secrets.key}` } });
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as any).base_resp.status_code, 2013);
    const { requests, submits, queries, retrieves, downloads } = sim.stats;
    assert.ok(submits! > 0 && queries! > 0 && retrieves! > 0 && downloads! > 0);
    assert.ok(requests >= submits! + queries! + retrieves! + downloads!);
  });
});
