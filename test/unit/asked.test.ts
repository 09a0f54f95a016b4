/**
 * What the client asked (the video object's prompt and remixed_from_video_id) is kept in the task
 * record's context beside what the profile's mappings keep, which never see it (src/tasks/asked.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskRecord } from '../../src/store/store.js';
import { askedIn, mappingContext, withAsked } from '../../src/tasks/asked.js';
import { patchFor, readTaskUpdate } from '../../src/tasks/task-update.js';
import { vendorView } from '../../src/tasks/vendor-query.js';

const asked = { prompt: 'a paper boat', remixOf: 'task_source' };

test('kept beside a mapping context, which reads back as the mapping wrote it', () => {
  for (const kept of [null, { kind: 'text2video' }]) {
    const context = withAsked(kept, asked);
    assert.deepEqual(askedIn(context), asked);
    assert.deepEqual(mappingContext(context), kept);
  }
  assert.equal(withAsked(null, { prompt: null, remixOf: null }), null, 'nothing asked: nothing kept');
  assert.equal(withAsked('a string', asked), 'a string', 'a context that is no object has no room for it');
  assert.deepEqual(askedIn('a string'), { prompt: null, remixOf: null });
});

test('a mapping that writes its context keeps what was asked; the mappings see only their own', () => {
  const task = { id: 'task_x', upstreamId: 'v1', upstreamModel: 'm', model: 'm', createdAt: 0, kind: 'video', status: 'queued' } as const;
  const record = {
    ...task,
    context: withAsked({ kind: 'image2video' }, asked),
    vendorStatus: null,
    progress: 0,
    seconds: null,
    size: null,
  } as unknown as TaskRecord;
  assert.deepEqual(vendorView(record).context, { kind: 'image2video' });
  const same = patchFor(record, readTaskUpdate({ status: 'queued', context: { kind: 'image2video' } }, 'video')!, 1);
  assert.equal(same?.context, undefined, 'the same mapping context is no change');
  const patch = patchFor(record, readTaskUpdate({ status: 'in_progress', context: { file_id: 'f1' } }, 'video')!, 1)!;
  assert.deepEqual(mappingContext(patch.context), { file_id: 'f1' });
  assert.deepEqual(askedIn(patch.context), asked);
});
