import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TaskRecord } from '../../src/store/store.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** The public single fetch of the audio group. */
const fetchPath = (id: string) => `/iota/fetch/${id}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('audio tasks on iota-native, end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());

  /** Reads the store (not the query routes, which would ask the vendor themselves) until `done` holds. */
  async function storedUntil(id: string, done: (t: TaskRecord) => boolean): Promise<TaskRecord> {
    let last: TaskRecord | null = null;
    for (let i = 0; i < 400; i++) {
      last = await h.record(id);
      if (last && done(last)) return last;
      await sleep(25);
    }
    throw new Error(`task ${id} never reached the expected state; last record ${JSON.stringify(last)}`);
  }

  test("music: submit → in progress → completed; every file downloads with the vendor's bytes", async () => {
    const sub = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'a slow piano piece', title: 'Rain', tags: 'piano' });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.json.code, 'success');
    const id = sub.json.data as string;
    assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
    const seen = new Set<string>();
    const done = await h.waitFor(
      id,
      (t) => {
        seen.add(t.data.status);
        return t.data.status === 'SUCCESS';
      },
      { path: fetchPath },
    );
    assert.ok(seen.has('QUEUED') || seen.has('IN_PROGRESS'), `seen ${[...seen]}`);
    const rec = (await h.record(id))!;
    const up = rec.upstreamId!;
    assert.equal(rec.status, 'completed');
    assert.equal(rec.vendorStatus, 'SUCCESS');
    assert.equal(rec.results.length, 6, 'two clips, three files each');

    const task = done.data;
    assert.equal(task.task_id, id);
    assert.equal(task.action, 'MUSIC');
    assert.equal(task.progress, '100%');
    assert.equal(task.fail_reason, '');
    assert.equal(task.data.length, 2);
    const sim = h.sims['iota-native']!;
    const base = `${h.url}/iota/fetch/${id}/content`;
    for (const [k, clip] of (task.data as any[]).entries()) {
      assert.equal(clip.title, 'Rain');
      assert.equal(clip.status, 'complete');
      assert.deepEqual(Object.keys(clip.metadata).sort(), ['duration', 'prompt', 'tags']);
      assert.equal(clip.metadata.tags, 'piano');
      assert.equal(clip.metadata.prompt, 'a slow piano piece');
      assert.equal(typeof clip.metadata.duration, 'number');
      assert.equal(clip.audio_url, k === 0 ? base : `${base}?index=${3 * k}`);
      assert.equal(clip.image_url, `${base}?index=${3 * k + 1}`);
      assert.equal(clip.video_url, `${base}?index=${3 * k + 2}`);
      // The answer never points at the vendor.
      for (const u of [clip.audio_url, clip.image_url, clip.video_url]) assert.ok(!u.includes(up) && u.startsWith(h.url));
    }
    const types = ['audio/mpeg', 'image/png', 'video/mp4'];
    for (let index = 0; index < 6; index++) {
      const file = await h.get(`/iota/fetch/${id}/content${index ? `?index=${index}` : ''}`);
      assert.equal(file.status, 200, `index ${index}: ${file.text.slice(0, 200)}`);
      assert.equal(file.headers.get('content-type'), types[index % 3]);
      assert.ok(file.bytes.equals(sim.result!(up, index)!), `index ${index}: the downloaded bytes are the vendor's`);
    }
    const part = await h.get(`/iota/fetch/${id}/content?index=3`, { range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.ok(part.bytes.equals(sim.result!(up, 3)!.subarray(10, 20)));
    const none = await h.get(`/iota/fetch/${id}/content?index=6`);
    assert.equal(none.status, 409);
    assert.equal(none.json.error.code, 'task_not_ready');
  });

  test('lyrics: completed with text data and no file', async () => {
    const sub = await h.post('/iota/submit/lyrics', { mv: 'iota-v4.5', prompt: 'a lighthouse keeper', title: 'Keeper' });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.data as string;
    const done = await h.waitFor(id, (t) => t.data.status === 'SUCCESS', { path: fetchPath });
    assert.equal(done.data.action, 'LYRICS');
    assert.equal(done.data.data.length, 1);
    assert.equal(done.data.data[0].title, 'Keeper');
    assert.match(done.data.data[0].text, /a lighthouse keeper/);
    assert.deepEqual(Object.keys(done.data.data[0]).sort(), ['text', 'title']);
    const dl = await h.get(`/iota/fetch/${id}/content`);
    assert.equal(dl.status, 409);
    assert.equal(dl.json.error.code, 'task_not_ready');
  });

  test("the batch fetch answers the asker's tasks in the order asked, unknown and foreign ids left out", async () => {
    const a = (await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'first' })).json.data as string;
    const b = (await h.post('/iota/submit/lyrics', { mv: 'iota-v4.5', prompt: 'second' })).json.data as string;
    const other = await h.createKey();
    const foreign = (await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'not yours' }, { authorization: `Bearer ${other}` })).json.data as string;
    await storedUntil(a, (t) => t.status === 'completed');
    await storedUntil(b, (t) => t.status === 'completed');
    const r = await h.post('/iota/fetch', { ids: [b, 'task_AAAAAAAAAAAAAAAAAAAAAAAA', foreign, a, b] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.code, 'success');
    assert.deepEqual(
      r.json.data.map((t: any) => [t.task_id, t.action, t.status]),
      [
        [b, 'LYRICS', 'SUCCESS'],
        [a, 'MUSIC', 'SUCCESS'],
      ],
    );
    assert.equal(r.json.data[1].data.length, 2);
    const bad = await h.post('/iota/fetch', { ids: [] });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'invalid_request');
  });

  test("a batch of ids none of which is the asker's answers an empty list", async () => {
    const r = await h.post('/iota/fetch', { ids: ['task_AAAAAAAAAAAAAAAAAAAAAAAA'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { code: 'success', message: '', data: [] });
  });

  test('many tasks are followed with batch queries, not one query per task', async () => {
    const sim = h.sims['iota-native']!;
    const before = { ...sim.stats };
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: `batch ${i} [sim:finish=600]` });
      assert.equal(r.status, 200, r.text);
      ids.push(r.json.data);
    }
    // Only the poller looks at them: the store is read directly, the query routes are not used.
    const records = await Promise.all(ids.map((id) => storedUntil(id, (t) => t.status === 'completed')));
    const polls = records.reduce((n, t) => n + sim.tasks!.get(t.upstreamId!)!.polls, 0);
    const batches = sim.stats.batch_queries! - before.batch_queries!;
    const singles = sim.stats.queries! - before.queries!;
    assert.ok(batches > 0, 'the poller used the batch query');
    assert.ok(polls >= ids.length, `every task was looked at (${polls} looks)`);
    assert.ok(singles < polls, `fewer single queries (${singles}) than task looks (${polls})`);
  });

  test('a task the vendor fails ends failed with its reason, and the price is refunded', async () => {
    const key = await h.createKey(5);
    const sub = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'doomed [sim:fail=lyrics_moderation]' }, { authorization: `Bearer ${key}` });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.data as string;
    const done = await h.waitFor(id, (t) => t.data.status === 'FAILURE', { path: fetchPath, key });
    assert.equal(done.data.status, 'FAILURE');
    assert.equal(done.data.fail_reason, 'lyrics_moderation');
    assert.deepEqual(done.data.data, []);
    const rec = (await h.record(id))!;
    assert.equal(rec.status, 'failed');
    assert.deepEqual(rec.error, { code: 'generation_failed', message: 'lyrics_moderation' });
    const token = (await h.store.listTokens()).find((t) => t.quota === 5)!;
    assert.equal(token.used, 0, 'the failed task was refunded');
    const dl = await h.get(`/iota/fetch/${id}/content`, { authorization: `Bearer ${key}` });
    assert.equal(dl.status, 409);
  });

  test('an unknown vendor status (UNKNOWN or any odd word) keeps the task pending, never failed', async () => {
    const sim = h.sims['iota-native']!;
    const ids: string[] = [];
    for (const word of ['UNKNOWN', 'PAUSED']) {
      const r = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: `odd [sim:status=${word}] [sim:finish=100]` });
      assert.equal(r.status, 200, r.text);
      ids.push(r.json.data);
    }
    for (const [i, word] of ['UNKNOWN', 'PAUSED'].entries()) {
      const rec = await storedUntil(ids[i]!, (t) => t.vendorStatus === word && sim.tasks!.get(t.upstreamId!)!.polls >= 3);
      assert.ok(rec.status === 'queued' || rec.status === 'in_progress', `still pending: ${rec.status}`);
      assert.equal(rec.error, null);
      const q = await h.get(fetchPath(ids[i]!));
      assert.equal(q.status, 200);
      assert.ok(['QUEUED', 'IN_PROGRESS'].includes(q.json.data.status), q.text);
    }
  });

  test('vendor refusals of a submission are mapped, and nothing is charged or kept', async () => {
    const key = await h.createKey(1);
    const auth = { authorization: `Bearer ${key}` };
    const blank = await h.post('/iota/submit/lyrics', { mv: 'iota-v4.5', prompt: '   ' }, auth);
    assert.equal(blank.status, 400, blank.text);
    assert.equal(blank.json.error.code, 'invalid_request');
    assert.equal(blank.json.error.param, 'prompt');
    assert.equal(blank.json.error.message, 'prompt or gpt_description_prompt is required');
    const busy = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'x [sim:fault=429]' }, auth);
    assert.equal(busy.status, 429, busy.text);
    assert.deepEqual(busy.json, { code: 'too_many_requests', message: 'the upstream is rate limiting this channel; retry later', data: null });
    const down = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'x [sim:fault=503]' }, auth);
    assert.equal(down.status, 503, down.text);
    assert.equal(down.json.error.code, 'upstream_unavailable');
    const broken = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'x [sim:fault=500]' }, auth);
    assert.equal(broken.status, 502, broken.text);
    assert.equal(broken.json.error.code, 'bad_response');
    const garbled = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'x [sim:fault=malformed-json]' }, auth);
    assert.equal(garbled.status, 502, garbled.text);
    assert.equal(garbled.json.error.code, 'bad_response');
    for (const r of [blank, busy, down, broken, garbled]) assert.ok(!r.text.includes('sim-iota'), 'no vendor detail leaks');
    const ok = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'x' }, auth);
    assert.equal(ok.status, 200, 'the refused submissions did not use the quota of 1');
  });

  test('the public schema refuses what the vendor would not understand before any call', async () => {
    const sim = h.sims['iota-native']!;
    const before = sim.stats.submits;
    const extra = await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'x', style: 'jazz' });
    assert.equal(extra.status, 400);
    const noPrompt = await h.post('/iota/submit/music', { mv: 'iota-v4.5', title: 'x' });
    assert.equal(noPrompt.status, 400);
    assert.equal(sim.stats.submits, before, 'the vendor was not called');
  });
});
