import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

describe('video tasks on zeta-openai (epsilon video line), end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  test("submit → in progress → completed → downloaded bytes equal the vendor's", async () => {
    const sub = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'a paper boat', seconds: '8', size: '1280x720' });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    assert.equal(sub.json.task_id, id);
    assert.equal(sub.json.object, 'video');
    assert.ok(['queued', 'in_progress'].includes(sub.json.status));
    assert.equal(sub.json.progress, 0);
    assert.equal(typeof sub.json.created_at, 'number');
    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => {
      seen.add(t.status);
      return t.status === 'completed';
    });
    assert.ok(seen.has('in_progress') || seen.has('queued'));
    assert.equal(done.progress, 100);
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const rec = await h.record(id);
    const expected = h.sims['zeta-openai']!.result!(rec!.upstreamId!)!;
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(file.bytes.equals(expected), "the downloaded bytes are the vendor's");
    assert.ok(!file.text.includes(rec!.upstreamId!));
    const part = await h.get(`/v1/videos/${id}/content`, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(expected.subarray(10, 20)));
  });

  test('a task the vendor fails ends failed with its reason, and the price is refunded', async () => {
    const key = await h.createKey(5);
    const sub = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'doomed [sim:fail=content_policy]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id;
    const last = await h.waitFor(id, (t) => t.status === 'failed', { key });
    assert.equal(last.error.code, 'content_policy');
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the failed task was refunded');
    const dl = await h.get(`/v1/videos/${id}/content`, { authorization: `Bearer ${key}` });
    assert.equal(dl.status, 409);
    assert.equal(dl.json.error.code, 'task_not_ready');
  });

  test("another key's task answers 404 task_not_found, like a missing one", async () => {
    const sub = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'mine' });
    const other = await h.createKey();
    for (const path of [
      `/v1/videos/${sub.json.id}`,
      `/v1/video/generations/${sub.json.id}`,
      `/v1/videos/${sub.json.id}/content`,
      '/v1/videos/task_AAAAAAAAAAAAAAAAAAAAAAAA',
      '/v1/videos/nope',
    ]) {
      const r = await h.get(path, { authorization: `Bearer ${other}` });
      assert.equal(r.status, 404, path);
      assert.equal(r.json.error.code, 'task_not_found');
    }
  });

  test('a vendor refusal of the submission is mapped, and nothing is charged or kept', async () => {
    // 99 seconds hold 10 units (docs/tokens-and-quota.md, "Quota, prices and the ledger").
    const key = await h.createKey(10);
    const r = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'x', seconds: '99' }, { authorization: `Bearer ${key}` });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'invalid_request');
    const ok = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'x' }, { authorization: `Bearer ${key}` });
    assert.equal(ok.status, 200, 'the refused submission did not use the quota');
    assert.equal((await h.store.listTokens()).find((t) => t.quota === 10)!.used, 1, 'only the accepted submission is charged');
  });

  test('a prompt is required when no image is given', async () => {
    const r = await h.post('/v1/video/generations', { model: 'epsilon-video-3' });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'invalid_request');
    assert.equal(r.json.error.param, 'prompt');
  });
});

describe('zeta-openai: a status query that answers 404 once never loses a task', () => {
  let h: TaskHarness;
  before(async () => {
    // Its own simulators: the fault queue below must reach this test's task and no other.
    h = await startTaskHarness({ finishMs: 600 });
  });
  after(() => h.close());

  /** Refund rows of the ledger for one task of a token. */
  async function refundsOf(tokenQuota: number, taskId: string): Promise<number> {
    const token = (await h.store.listTokens()).find((t) => t.quota === tokenQuota)!;
    return (await h.store.ledger(token.id, null, 1000)).filter((e) => e.kind === 'refund' && e.ref === taskId).length;
  }

  test("a proxy's 404 page, then a vendor 404 of another code: retried, the task completes, downloads and stays charged", async () => {
    const key = await h.createKey(5);
    const auth = { authorization: `Bearer ${key}` };
    const sim = h.sims['zeta-openai']!;
    const sub = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'a paper boat' }, auth);
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    // The next two vendor calls are this task's status queries (nothing else talks to this
    // simulator now): an nginx 404 page, then the vendor's own 404 body without video_not_found.
    sim.faults.push('proxy:404', '404');
    const end = await h.waitFor(id, (t) => t.status === 'completed' || t.status === 'failed', { key });
    assert.equal(end.status, 'completed', `ended ${end.status}: ${JSON.stringify(end.error)}`);
    assert.equal(sim.faults.length, 0, "both 404s were answered to the task's queries");
    const rec = (await h.record(id))!;
    const file = await h.get(`/v1/videos/${id}/content`, auth);
    assert.equal(file.status, 200);
    assert.ok(file.bytes.equals(sim.result!(rec.upstreamId!)!), "the vendor's video");
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 1, 'charged for the video');
    assert.equal(rec.refunded, false);
    assert.equal(await refundsOf(5, id), 0, 'never refunded');
  });

  test("the vendor's own video_not_found fails the task as task_lost only after lost_after_ms (300 ms here), refunded once", async () => {
    h.sims['zeta-openai']!.faults.splice(0); // whatever a failed test before left queued
    const key = await h.createKey(7);
    const sub = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'forgotten [sim:never]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    // A vendor id the vendor never issued: from now on every query answers 404 video_not_found.
    let moved = null;
    for (let i = 0; i < 20 && !moved; i++) {
      const rec = (await h.record(id))!;
      moved = await h.store.updateTask(id, rec.version, { upstreamId: 'video_nosuchvideo' });
    }
    assert.ok(moved, 'the vendor id was rewritten');
    const since = Date.now();
    const end = await h.waitFor(id, (t) => t.status === 'failed', { key });
    assert.equal(end.error.code, 'task_lost');
    const rec = (await h.record(id))!;
    assert.ok(rec.completedAt! - since >= 300, `failed ${rec.completedAt! - since} ms after the first possible lost answer`);
    assert.equal((await h.store.listTokens()).find((t) => t.quota === 7)!.used, 0, 'refunded');
    assert.equal(await refundsOf(7, id), 1);
  });
});
