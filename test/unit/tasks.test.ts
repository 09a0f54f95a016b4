import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseMultipart } from '../../src/http/read-multipart.js';
import type { TaskRecord } from '../../src/store/store.js';
import { DueQueue } from '../../src/tasks/due-queue.js';
import { isTaskId, newTaskId, sequentialTaskIds } from '../../src/tasks/task-id.js';
import { patchFor, readTaskUpdate } from '../../src/tasks/task-update.js';
import { signJwtHs256 } from '../../src/signers/jwt-hs256.js';
import { verifyHs256Jwt } from '../../src/sim/lambda-native.js';

test('due queue: pops ids in due order, a rescheduled id only at its new time, deleted ids never', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 1000 }), fc.boolean()), { maxLength: 300 }), (ops) => {
      const q = new DueQueue();
      const model = new Map<string, number>();
      for (const [id, at, del] of ops) {
        const key = `t${id}`;
        if (del) {
          q.delete(key);
          model.delete(key);
        } else {
          q.set(key, at);
          model.set(key, at);
        }
      }
      assert.equal(q.size, model.size);
      const popped = q.popDue(500);
      const expected = [...model].filter(([, at]) => at <= 500);
      assert.deepEqual(new Set(popped), new Set(expected.map(([k]) => k)));
      const times = popped.map((k) => model.get(k)!);
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
      );
      const rest = q.popDue(Infinity);
      assert.equal(rest.length, model.size - popped.length);
    }),
  );
});

test('task ids: random ones are unique and well-formed; golden ones too', () => {
  const ids = new Set(Array.from({ length: 1000 }, newTaskId));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.ok(isTaskId(id), id);
  const seq = sequentialTaskIds();
  assert.equal(seq(), 'task_golden100000000000000000');
  assert.ok(isTaskId(seq()));
  assert.ok(!isTaskId('task_../../etc/passwd'));
  assert.ok(!isTaskId('video_abc'));
});

const base: TaskRecord = {
  id: 'task_x',
  tokenId: 't',
  kind: 'video',
  route: 'r',
  model: 'm',
  upstreamModel: 'm',
  channel: 'c',
  upstreamId: 'u',
  status: 'queued',
  progress: 0,
  vendorStatus: null,
  results: [],
  error: null,
  context: null,
  seconds: null,
  size: null,
  price: 1,
  pricing: null,
  charged: null,
  refunded: false,
  createdAt: 0,
  updatedAt: 0,
  completedAt: null,
  deadlineAt: 1e12,
  version: 1,
};

test('task updates: an unknown status keeps the task pending and records the vendor word', () => {
  const u = readTaskUpdate({ status: 'REVIEWING', progress: 10 }, 'video')!;
  assert.equal(u.status, null);
  assert.equal(u.vendorStatus, 'REVIEWING');
  const p = patchFor(base, u, 5)!;
  assert.equal(p.status, undefined);
  assert.equal(p.vendorStatus, 'REVIEWING');
  assert.equal(p.progress, 10);
});

test('task updates: "lost" is the vendor\'s "no such task", a verdict for the poller, never a status or a change by itself', () => {
  const u = readTaskUpdate({ status: 'lost', vendor_status: 'not_found', progress: 30, error: { message: 'gone' } }, 'video')!;
  assert.equal(u.lost, true);
  assert.equal(u.status, null);
  assert.equal(u.vendorStatus, 'not_found', "the vendor's word when the mapping gives one");
  assert.equal(u.error?.message, 'gone');
  assert.equal(patchFor(base, u, 5), null, 'not even the progress or the vendor word is written');
  const bare = readTaskUpdate({ status: 'lost' }, 'video')!;
  assert.equal(bare.vendorStatus, null, '"lost" is the profile\'s word, not the vendor\'s');
  assert.equal(readTaskUpdate({ status: 'failed' }, 'video')!.lost, false);
});

test('task updates: failure refunds and completes; completion keeps only fetchable results or data', () => {
  const failed = patchFor(base, readTaskUpdate({ status: 'failed', error: { code: 'nsfw', message: 'refused' } }, 'video')!, 9)!;
  assert.deepEqual([failed.status, failed.refund, failed.completedAt, failed.error], ['failed', true, 9, { code: 'nsfw', message: 'refused' }]);
  const done = readTaskUpdate(
    {
      status: 'completed',
      results: ['https://cdn/x.mp4', { url: '/v1/videos/1/content', type: 'video' }, { url: 'javascript:alert(1)' }, { type: 'text', meta: { text: 'la' } }],
    },
    'audio',
  )!;
  assert.deepEqual(done.results, [
    { url: 'https://cdn/x.mp4', type: 'audio' },
    { url: '/v1/videos/1/content', type: 'video' },
    { url: null, type: 'text', meta: { text: 'la' } },
  ]);
  assert.equal(patchFor(base, done, 9)!.progress, 100);
});

test('task updates: terminal records never change, progress never goes back, nor in_progress to queued', () => {
  assert.equal(patchFor({ ...base, status: 'completed' }, readTaskUpdate({ status: 'failed' }, 'video')!, 1), null);
  assert.equal(patchFor({ ...base, status: 'failed' }, readTaskUpdate({ status: 'completed' }, 'video')!, 1), null);
  const running = { ...base, status: 'in_progress' as const, progress: 50 };
  assert.equal(patchFor(running, readTaskUpdate({ status: 'queued', progress: 20 }, 'video')!, 1), null);
  assert.equal(patchFor(running, readTaskUpdate({ status: 'in_progress', progress: 100 }, 'video')!, 1)!.progress, 99, 'only completion says 100');
  assert.equal(readTaskUpdate(null, 'video'), null);
  assert.equal(readTaskUpdate([1], 'video'), null);
});

test('multipart: fields, files as data URIs, arrays, bracketed keys, JSON metadata', async () => {
  const form = new FormData();
  form.append('model', 'm');
  form.append('metadata', '{"style":"noir"}');
  form.append('input_reference', new Blob([Buffer.from('png1')], { type: 'image/png' }), 'a.png');
  form.append('input_reference', new Blob([Buffer.from('png2')], { type: 'image/png' }), 'b.png');
  form.append('images[]', 'https://x/1.png');
  form.append('ref[image_url]', 'https://x/2.png');
  const req = new Request('http://x', { method: 'POST', body: form });
  const raw = Buffer.from(await req.arrayBuffer());
  const out = await parseMultipart(raw, req.headers.get('content-type')!, 10);
  assert.deepEqual(out, {
    model: 'm',
    metadata: { style: 'noir' },
    input_reference: [`data:image/png;base64,${Buffer.from('png1').toString('base64')}`, `data:image/png;base64,${Buffer.from('png2').toString('base64')}`],
    images: ['https://x/1.png'],
    ref: { image_url: 'https://x/2.png' },
  });
  await assert.rejects(parseMultipart(raw, req.headers.get('content-type')!, 1), /at most 1 files/);
  await assert.rejects(
    parseMultipart(Buffer.from('garbage'), 'multipart/form-data; boundary=zz', 5),
    (e: Error) => e.name === 'GatewayError' || /multipart/.test(e.message),
  );
});

test('jwt-hs256: the signer makes tokens the vendor simulator accepts, and no other secret verifies them', () => {
  const now = 1_767_225_600;
  const jwt = signJwtHs256({ iss: 'ak', exp: now + 1800, nbf: now - 5 }, 'sk');
  assert.equal(verifyHs256Jwt(jwt, 'ak', 'sk', now).ok, true);
  assert.equal(verifyHs256Jwt(jwt, 'ak', 'other', now).ok, false);
  assert.equal(verifyHs256Jwt(jwt, 'ak', 'sk', now + 1801).ok, false);
});
