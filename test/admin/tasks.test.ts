/**
 * The task admin routes (docs/operating.md, "Operating: admin routes and metrics") over real HTTP: a gateway
 * on port 0 in front of every simulator, tasks of two tokens submitted through the public API and
 * followed by the poller to their end, then listed, filtered, paged and told as timelines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TaskRecord } from '../../src/store/store.js';
import { hashKey } from '../../src/tokens/keys.js';
import { readAnswer, type JsonAnswer } from '../helpers/harness.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

const ADMIN_KEY = 'admin-tasks-test-admin-key';
const LISTED = [
  'id',
  'token_id',
  'token_name',
  'kind',
  'route',
  'model',
  'channel',
  'status',
  'progress',
  'vendor_status',
  'price',
  'charged',
  'refunded',
  'created_at',
  'updated_at',
  'completed_at',
  'error',
];

describe('admin routes for tasks', () => {
  let h: TaskHarness;
  let tokenA: string;
  let tokenB: string;
  let tokenBName: string;
  /** Submitted in this order: a mu task that completes (running long enough to be seen running), an epsilon task of B that completes, a mu task of B that fails. */
  let slow: string;
  let epsilon: string;
  let failed: string;
  /** Every answer the routes gave, to look for anything of the vendor's in them. */
  const answers: JsonAnswer[] = [];

  const admin = async (path: string, key: string | null = ADMIN_KEY): Promise<JsonAnswer> => {
    const r = await readAnswer(await fetch(h.url + path, { headers: key === null ? {} : { authorization: `Bearer ${key}` } }));
    answers.push(r);
    return r;
  };
  const ids = async (query: string) => {
    const r = await admin(`/admin/tasks${query}`);
    assert.equal(r.status, 200, r.text);
    return (r.json.tasks as { id: string }[]).map((t) => t.id);
  };
  const refused = (r: JsonAnswer, status: number, code: string, param = '') => {
    assert.equal(r.status, status, r.text);
    assert.deepEqual([r.json.error.code, r.json.error.param], [code, param], r.text);
  };
  const submit = async (key: string, body: Record<string, unknown>) => {
    const r = await h.post('/v1/videos', body, { authorization: `Bearer ${key}` });
    assert.equal(r.status, 200, r.text);
    return r.json.id as string;
  };

  before(async () => {
    h = await startTaskHarness({ adminKey: ADMIN_KEY, finishMs: 300 });
    const keyB = await h.createKey(100);
    const tokens = await h.store.listTokens();
    tokenA = tokens.find((t) => t.keyHash === hashKey(h.key))!.id;
    tokenB = tokens.find((t) => t.keyHash === hashKey(keyB))!.id;
    tokenBName = tokens.find((t) => t.id === tokenB)!.name;
    // 1.5 s to finish, polled every 100 ms: RUNNING (from 0.5 s on) is seen many times over.
    slow = await submit(h.key, { model: 'mu2.6-t2v:1280*720', prompt: 'a river at night [sim:finish=1500]', seconds: '5' });
    epsilon = await submit(keyB, { model: 'epsilon-video-3', prompt: 'a paper boat' });
    failed = await submit(keyB, { model: 'mu2.6-t2v:1280*720', prompt: 'doomed [sim:fail=content_policy]' });
    for (const [id, key] of [
      [slow, h.key],
      [epsilon, keyB],
      [failed, keyB],
    ] as const) {
      await h.waitFor(id, (t) => t.status === 'completed' || t.status === 'failed', { key });
    }
  });
  after(() => h.close());

  test("list: every token's tasks, newest first, each as listed and nothing more", async () => {
    const r = await admin('/admin/tasks');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.json).sort(), ['next', 'tasks']);
    assert.equal(r.json.next, null, 'one page holds them all');
    const tasks = r.json.tasks as any[];
    assert.deepEqual(new Set(tasks.map((t) => t.id)), new Set([slow, epsilon, failed]));
    const order = [...tasks].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
    assert.deepEqual(
      tasks.map((t) => t.id),
      order.map((t) => t.id),
      'newest first, ties by id descending',
    );
    for (const t of tasks) assert.deepEqual(Object.keys(t), LISTED);
    const rec = (await h.record(failed))!;
    assert.deepEqual(
      tasks.find((t) => t.id === failed),
      {
        id: failed,
        token_id: tokenB,
        token_name: tokenBName,
        kind: 'video',
        route: rec.route,
        model: 'mu2.6-t2v:1280*720',
        channel: 'mu-dashscope',
        status: 'failed',
        progress: rec.progress,
        vendor_status: rec.vendorStatus,
        price: rec.price,
        charged: 0,
        refunded: true,
        created_at: rec.createdAt,
        updated_at: rec.updatedAt,
        completed_at: rec.completedAt,
        error: { code: rec.error!.code, message: 'content_policy' },
      },
    );
    assert.equal(typeof rec.completedAt, 'number');
  });

  test('list: filtered by status, model, channel and token, alone and together', async () => {
    assert.deepEqual(await ids('?status=failed'), [failed]);
    assert.deepEqual(new Set(await ids('?status=completed')), new Set([slow, epsilon]));
    assert.deepEqual(await ids('?status=queued'), []);
    assert.deepEqual(await ids('?model=epsilon-video-3'), [epsilon]);
    assert.deepEqual(new Set(await ids('?channel=mu-dashscope')), new Set([slow, failed]));
    assert.deepEqual(await ids('?channel=epsilon-video'), [epsilon]);
    assert.deepEqual(await ids(`?token=${tokenA}`), [slow]);
    assert.deepEqual(new Set(await ids(`?token=${tokenB}`)), new Set([epsilon, failed]));
    assert.deepEqual(await ids(`?token=${tokenB}&status=completed`), [epsilon]);
    assert.deepEqual(await ids(`?token=${tokenA}&channel=epsilon-video`), []);
    assert.deepEqual(await ids('?model=no-such-model'), []);
    assert.deepEqual((await ids('?status=&model=&channel=&token=')).length, 3, 'a blank field filters nothing');
  });

  test('list: pages follow `next` to the end, in the order of the whole list', async () => {
    const all = await ids('');
    const seen: string[] = [];
    let path = '/admin/tasks?limit=1';
    for (let i = 0; i < 10; i++) {
      const r = await admin(path);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.tasks.length, 1);
      seen.push(r.json.tasks[0].id);
      if (r.json.next === null) break;
      assert.match(r.json.next, /^[A-Za-z0-9_-]+$/);
      path = `/admin/tasks?limit=1&before=${r.json.next}`;
    }
    assert.deepEqual(seen, all, 'each task once, and the last page says so');
    const two = await admin('/admin/tasks?limit=2&channel=mu-dashscope');
    assert.deepEqual([two.json.tasks.length, two.json.next], [2, null], 'a full page that is the last has no next');
    const first = await admin('/admin/tasks?limit=2');
    const rest = await admin(`/admin/tasks?limit=2&before=${first.json.next}`);
    assert.deepEqual(
      [...first.json.tasks, ...rest.json.tasks].map((t: { id: string }) => t.id),
      all,
    );
    assert.equal(rest.json.next, null);
  });

  test('list: a bad parameter is 400 invalid_request naming it', async () => {
    const cursor = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const [query, param] of [
      ['status=done', 'status'],
      ['status=COMPLETED', 'status'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=-1', 'limit'],
      ['before=not%20a%20cursor', 'before'],
      ['before=' + cursor({ at: 1 }), 'before'],
      ['before=' + cursor([-1, 'task_x']), 'before'],
      ['before=' + cursor([1.5, 'task_x']), 'before'],
      ['before=' + Buffer.from('[1,').toString('base64url'), 'before'],
      ['model=' + 'm'.repeat(201), 'model'],
      ['token=' + 't'.repeat(201), 'token'],
    ]) {
      refused(await admin(`/admin/tasks?${query}`), 400, 'invalid_request', param);
    }
    assert.equal((await admin('/admin/tasks?limit=200')).status, 200, 'the largest page');
  });

  test('the key is required: none or a wrong one is 401, and says nothing of the tasks', async () => {
    for (const path of ['/admin/tasks', `/admin/tasks/${slow}`, '/admin/tasks/task_nope']) {
      for (const key of [null, 'wrong-key', h.key]) {
        const r = await admin(path, key);
        refused(r, 401, 'invalid_api_key');
        assert.ok(!r.text.includes(slow));
      }
    }
  });

  test('one task: submitted, its debit, the vendor states seen, completed with its charge', async () => {
    const rec = (await h.record(slow))!;
    const ledger = (await h.store.ledger(tokenA, null, 100)).filter((l) => l.ref === slow);
    const r = await admin(`/admin/tasks/${slow}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.json).sort(), ['archive', 'task', 'timeline']);
    assert.deepEqual(r.json.archive, { files: [], job: null }, 'no archive configured: nothing archived, nothing due');
    assert.deepEqual(Object.keys(r.json.task), [...LISTED, 'seconds', 'size', 'deadline_at', 'results']);
    assert.deepEqual(
      {
        seconds: r.json.task.seconds,
        size: r.json.task.size,
        deadline_at: r.json.task.deadline_at,
        results: r.json.task.results,
        status: r.json.task.status,
        charged: r.json.task.charged,
      },
      { seconds: rec.seconds, size: rec.size, deadline_at: rec.deadlineAt, results: 1, status: 'completed', charged: rec.charged },
    );
    const timeline = r.json.timeline as any[];
    const at = timeline.map((e) => e.at);
    assert.deepEqual(
      at,
      [...at].sort((a, b) => a - b),
      'oldest first',
    );
    assert.deepEqual(timeline[0], { at: rec.createdAt, event: 'submitted' });
    assert.deepEqual(
      timeline.slice(0, 3).map((e) => e.event),
      ['submitted', 'debit', 'vendor_state'],
      'held before the vendor took it',
    );
    const debit = ledger.find((l) => l.kind === 'debit')!;
    assert.deepEqual(
      timeline.find((e) => e.event === 'debit'),
      { at: debit.at, event: 'debit', amount: rec.price, ledger_id: debit.id },
    );
    const states = timeline.filter((e) => e.event === 'vendor_state');
    assert.deepEqual(Object.keys(states[0]), ['at', 'event', 'status', 'vendor_status', 'progress']);
    assert.deepEqual([states[0].status, states[0].vendor_status], ['queued', 'PENDING'], 'the state the vendor accepted it in');
    assert.ok(
      states.some((s) => s.status === 'in_progress' && s.vendor_status === 'RUNNING'),
      JSON.stringify(states),
    );
    const end = timeline.findIndex((e) => e.event === 'completed');
    assert.ok(end > timeline.indexOf(states.at(-1)), 'the end after every state');
    assert.deepEqual(timeline[end], { at: rec.completedAt, event: 'completed', vendor_status: 'SUCCEEDED', charged: rec.charged, error: null });
    // What settlement gave back, if it gave back anything: the ledger's rows of this task, all of them.
    assert.deepEqual(
      timeline.filter((e) => ['debit', 'settle', 'refund'].includes(e.event)).map((e) => [e.event, e.amount]),
      ledger.map((l) => [l.kind, l.amount]),
    );
    assert.equal(rec.price - (ledger.find((l) => l.kind === 'settle')?.amount ?? 0), rec.charged, 'the charge is the debit less what went back');
  });

  test('a failed task: its timeline ends failed with the reason, and its refund', async () => {
    const rec = (await h.record(failed))!;
    const r = await admin(`/admin/tasks/${failed}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.json.task.status, r.json.task.refunded, r.json.task.charged, r.json.task.results], ['failed', true, 0, 0]);
    const events = (r.json.timeline as any[]).map((e) => e.event);
    assert.equal(events[0], 'submitted');
    assert.deepEqual(events.slice(-2), ['failed', 'refund'], events.join(' '));
    const [end, refund] = (r.json.timeline as any[]).slice(-2);
    assert.deepEqual(end, {
      at: rec.completedAt,
      event: 'failed',
      vendor_status: rec.vendorStatus,
      charged: 0,
      error: { code: rec.error!.code, message: 'content_policy' },
    });
    assert.equal(refund.amount, rec.price, 'the whole hold went back');
    assert.deepEqual(
      events.filter((e) => e === 'debit'),
      ['debit'],
    );
  });

  test('an unknown task is 404 not_found', async () => {
    refused(await admin('/admin/tasks/task_AAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'not_found');
  });

  test('no answer carries a vendor id, a vendor URL or a result URL', async () => {
    for (const id of [slow, epsilon, failed]) await admin(`/admin/tasks/${id}`);
    const records = (await Promise.all([slow, epsilon, failed].map((id) => h.record(id)))) as TaskRecord[];
    const secrets = [
      ...records.map((t) => t.upstreamId!),
      ...records.flatMap((t) => t.results.map((x) => x.url).filter((u): u is string => u !== null)),
      ...Object.values(h.sims).map((s) => s.url),
      ...Object.values(h.sims).flatMap((s) => Object.values(s.secrets)),
    ];
    assert.ok(records.every((t) => t.upstreamId) && records.some((t) => t.results.length > 0), 'there is something to leak');
    assert.ok(answers.length > 20);
    for (const r of answers) {
      for (const s of secrets) assert.ok(!r.text.includes(s), `${s} in ${r.text.slice(0, 300)}`);
      assert.ok(!/https?:\/\//.test(r.text), r.text.slice(0, 300));
    }
  });
});
