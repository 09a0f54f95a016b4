import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** The submit body the mu simulator received for one of our tasks. */
async function vendorBody(h: TaskHarness, id: string): Promise<any> {
  const rec = await h.record(id);
  return h.sims['mu-dashscope']!.tasks!.get(rec!.upstreamId!)!.body;
}

/** Polls our task until its status is a final one (bounded), with the given key. */
function waitFinal(h: TaskHarness, id: string, key: string): Promise<any> {
  return h.waitFor(id, (t) => t?.status === 'failed' || t?.status === 'completed', { key });
}

describe('video tasks on mu-dashscope, end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  test("text-to-video: submit → in progress → completed → downloaded bytes equal the vendor's", async () => {
    const sub = await h.post('/v1/video/generations', {
      model: 'mu2.6-t2v:1920*1080',
      prompt: 'a paper boat',
      seconds: '8',
      metadata: { negative_prompt: 'blurry', seed: 7, watermark: false },
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(sub.json.model, 'mu2.6-t2v:1920*1080');
    assert.ok(['queued', 'in_progress'].includes(sub.json.status));
    assert.equal(sub.json.size, '1920x1080');
    assert.equal(sub.json.seconds, '8');
    // What reached the vendor: the model split, the async submission accepted, metadata mapped.
    assert.deepEqual(await vendorBody(h, id), {
      model: 'mu2.6-t2v',
      input: { prompt: 'a paper boat', negative_prompt: 'blurry' },
      // Text-to-video takes a size and no resolution (the vendor's text-to-video document).
      parameters: { size: '1920*1080', duration: 8, watermark: false, seed: 7 },
    });
    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => {
      seen.add(t.status);
      return t.status === 'completed';
    });
    assert.ok(seen.has('in_progress') || seen.has('queued'));
    assert.equal(done.progress, 100);
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const rec = await h.record(id);
    assert.equal(rec!.vendorStatus, 'SUCCEEDED');
    const expected = h.sims['mu-dashscope']!.result!(rec!.upstreamId!)!;
    assert.ok(expected);
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(expected), "the downloaded bytes are the vendor's");
    const part = await h.get(`/v1/videos/${id}/content`, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(expected.subarray(10, 20)));
  });

  test('image-to-video: the image becomes img_url and the task completes; the vendor filled in its default duration', async () => {
    const image = 'https://example.com/cat.png';
    // One picture: the i2v family takes exactly one (several would be reference mode, which it refuses).
    const sub = await h.post('/v1/videos', { model: 'mu2.6-i2v:1280*720', images: [image] });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.deepEqual(await vendorBody(h, id), {
      model: 'mu2.6-i2v',
      input: { img_url: image },
      // Image-to-video takes a resolution tier and no size: the video keeps the image's aspect ratio.
      parameters: { resolution: '720P' },
    });
    const done = await h.waitFor(id, (t) => t.status === 'completed');
    assert.equal(done.seconds, '5', 'the duration the vendor reports in usage');
    const rec = await h.record(id);
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.ok(file.bytes.equals(h.sims['mu-dashscope']!.result!(rec!.upstreamId!)!));
  });

  test('a task the vendor fails ends failed with its code and reason, and the price is refunded', async () => {
    const key = await h.createKey(5);
    const sub = await h.post('/v1/videos', { model: 'mu2.6-t2v:1280*720', prompt: 'doomed [sim:fail=content_policy]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const last = await waitFinal(h, sub.json.id, key);
    assert.equal(last.status, 'failed');
    assert.deepEqual(last.error, { code: 'GenerationFailed', message: 'content_policy' });
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the failed task was refunded');
    const dl = await h.get(`/v1/videos/${sub.json.id}/content`, { authorization: `Bearer ${key}` });
    assert.equal(dl.status, 409);
    assert.equal(dl.json.error.code, 'task_not_ready');
  });

  for (const word of ['WAITING', 'UNKNOWN']) {
    test(`an odd vendor status (${word}) keeps the task pending instead of failing it`, async () => {
      const sub = await h.post('/v1/video/generations', { model: 'mu2.6-t2v:1280*720', prompt: `strange [sim:status=${word}]` });
      assert.equal(sub.status, 200, sub.text);
      const id = sub.json.id as string;
      const rec = await h.record(id);
      const simTask = h.sims['mu-dashscope']!.tasks!.get(rec!.upstreamId!)!;
      // Several looks at the vendor, each answered with the odd word (polls are counted by the simulator).
      for (let i = 0; i < 200 && simTask.polls < 4; i++) await new Promise((r) => setTimeout(r, 25));
      assert.ok(simTask.polls >= 4, 'the gateway kept asking');
      const now = await h.get(`/v1/videos/${id}`);
      assert.equal(now.status, 200);
      assert.ok(['queued', 'in_progress'].includes(now.json.status), now.text);
      assert.equal(now.json.error, null);
      assert.equal((await h.record(id))!.vendorStatus, word);
    });
  }

  test('vendor refusals of the submission are mapped, and nothing is charged or kept', async () => {
    // Enough for the dearest refused submission (30 s hold 3 units, docs/tokens-and-quota.md, "Quota, prices and the ledger").
    const key = await h.createKey(3);
    const auth = { authorization: `Bearer ${key}` };
    const cases: [unknown, number, string, RegExp | null][] = [
      // The mapping sends what it was given; the vendor's 400 explains, and its message is passed on.
      // Refused by the family before the vendor is asked (its own refusal would name img_url).
      [{ model: 'mu2.6-i2v:1280*720', prompt: 'no image' }, 400, 'invalid_request', /mode text is not supported by the mu video i2v family/],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'with image', image: 'https://example.com/x.png' }, 400, 'invalid_request', /not supported/],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'too long', duration: 30 }, 400, 'invalid_request', /duration/],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'x [sim:fault=401]' }, 502, 'bad_response', /credentials/],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'x [sim:fault=403]' }, 502, 'bad_response', /credentials/],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'x [sim:fault=429]' }, 429, 'too_many_requests', null],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'x [sim:fault=500]' }, 502, 'bad_response', /HTTP 500/],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'x [sim:fault=503]' }, 503, 'upstream_unavailable', null],
      [{ model: 'mu2.6-t2v:1280*720', prompt: 'x [sim:fault=malformed-json]' }, 502, 'bad_response', null],
    ];
    for (const [body, status, code, message] of cases) {
      const r = await h.post('/v1/video/generations', body, auth);
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
      const error = r.json.error ?? r.json; // 429 answers shape B
      assert.equal(error.code, code, r.text);
      if (message) assert.match(error.message, message);
      assert.ok(!r.text.includes('request_id'), 'no vendor details leak');
    }
    const ok = await h.post('/v1/videos', { model: 'mu2.6-t2v:1280*720', prompt: 'x' }, auth);
    assert.equal(ok.status, 200, 'the refused submissions did not use the quota');
    assert.equal((await h.store.listTokens()).find((t) => t.quota === 3)!.used, 1, 'only the accepted submission is charged');
  });

  test('query failures do not end a task: it completes once the vendor answers again', async () => {
    const sim = h.sims['mu-dashscope']!;
    const sub = await h.post('/v1/video/generations', { model: 'mu2.6-t2v:1280*720', prompt: 'bumpy [sim:finish=200]' });
    assert.equal(sub.status, 200, sub.text);
    sim.faults.push('500', 'malformed-json');
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed' || t.status === 'failed');
    assert.equal(done.status, 'completed');
  });
});

describe('mu-dashscope: UNKNOWN for ever ends at the deadline', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300, deadlineMs: 1000 });
  });
  after(() => h.close());

  test('a task the vendor only calls UNKNOWN fails as task_timeout at the channel deadline, refunded', async () => {
    const key = await h.createKey(5);
    const sub = await h.post('/v1/video/generations', { model: 'mu2.6-t2v:1280*720', prompt: 'lost [sim:status=UNKNOWN]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const last = await waitFinal(h, sub.json.id, key);
    assert.equal(last.status, 'failed');
    assert.equal(last.error.code, 'task_timeout');
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0);
  });
});
