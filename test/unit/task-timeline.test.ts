import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeline } from '../../src/admin/task-timeline.js';
import { newTaskRecord, type TaskRecord } from '../../src/store/store.js';

const task = (over: Partial<TaskRecord>): TaskRecord => ({
  ...newTaskRecord({
    id: 'task_t',
    tokenId: 'tok',
    kind: 'video',
    route: 'videos',
    model: 'm',
    upstreamModel: 'um',
    channel: 'c',
    price: 4,
    createdAt: 1000,
    deadlineAt: 9000,
  }),
  ...over,
});
const ledgerRow = (id: number, kind: 'debit' | 'settle' | 'refund', amount: number, at: number) => ({
  id,
  tokenId: 'tok',
  kind,
  ref: 'task_t',
  model: 'm',
  amount,
  at,
  budgetPeriod: null,
  budgetStart: null,
});

test('timeline: a task stored before states were kept is told from its timestamps and ledger rows alone', () => {
  const t = task({ status: 'completed', vendorStatus: 'done', charged: 3, completedAt: 5000, updatedAt: 5000, upstreamId: 'vendor-id' });
  assert.deepEqual(timeline({ task: t, states: [], ledger: [ledgerRow(7, 'debit', 4, 1000), ledgerRow(9, 'settle', 1, 5001)] }), [
    { at: 1000, event: 'submitted' },
    { at: 1000, event: 'debit', amount: 4, ledger_id: 7 },
    { at: 5000, event: 'completed', vendor_status: 'done', charged: 3, error: null },
    { at: 5001, event: 'settle', amount: 1, ledger_id: 9 },
  ]);
});

test('timeline: states before the end, the end once, and events of one millisecond in the order they happen', () => {
  const t = task({ status: 'failed', error: { code: 'x', message: 'y' }, refunded: true, charged: 0, completedAt: 3000, updatedAt: 3000 });
  const states = [
    { at: 1000, status: 'queued' as const, vendorStatus: 'PENDING', progress: 0 },
    { at: 2000, status: 'in_progress' as const, vendorStatus: 'RUNNING', progress: 10 },
    { at: 3000, status: 'failed' as const, vendorStatus: 'FAILED', progress: 10 },
  ];
  const events = timeline({ task: t, states, ledger: [ledgerRow(1, 'refund', 4, 3000), ledgerRow(0, 'debit', 4, 1000)] });
  assert.deepEqual(
    events.map((e) => e.event),
    ['submitted', 'debit', 'vendor_state', 'vendor_state', 'failed', 'refund'],
  );
  assert.deepEqual(events[4], { at: 3000, event: 'failed', vendor_status: null, charged: 0, error: { code: 'x', message: 'y' } });
  assert.equal(
    timeline({ task: task({ status: 'in_progress' }), states: states.slice(0, 2), ledger: [] }).at(-1)!.event,
    'vendor_state',
    'an unfinished task has no end yet',
  );
});
