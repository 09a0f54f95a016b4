import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import type { JsonAnswer } from '../helpers/harness.js';

/** The omni family (channel omni, profile unified-passthrough) end to end against its simulator. */
describe('omni on the unified-passthrough profile, end to end', () => {
  let h: TaskHarness;
  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
  });
  after(() => h.close());
  const sim = () => h.sims['unified-passthrough']!;

  test("first and last frames: submit → in progress → completed → the downloaded MP4 is the upstream's video_url", async () => {
    const sub = await h.post('/v1/videos', {
      model: 'omni-fast',
      prompt: 'dawn to dusk',
      first_image_url: 'https://img.example/dawn.png',
      last_image_url: 'https://img.example/dusk.png',
      seconds: '5',
    });
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    const rec = await h.record(id);
    assert.equal(rec!.channel, 'omni');
    assert.match(rec!.upstreamId!, /^upt_/);
    assert.ok(!sub.text.includes(rec!.upstreamId!), 'the upstream id never reaches the client');
    const seen = new Set<string>();
    const done = await h.waitFor(id, (t) => (seen.add(t.status), t.status === 'completed'));
    assert.ok(seen.has('queued') || seen.has('in_progress'));
    assert.equal(done.video_url, `${h.url}/v1/videos/${id}/content`);
    const file = await h.get(`/v1/videos/${id}/content`);
    assert.equal(file.status, 200);
    assert.ok(file.bytes.equals(sim().result!(rec!.upstreamId!)!), "the downloaded bytes are the upstream's");
  });

  test('omni-fast-v2v: a reference video of exactly 15 MB decoded passes, one byte more is refused naming the field, none is refused', async () => {
    const MB15 = 15 * 1024 * 1024; // 15mb as the config says it: binary, as the image keyword's 50mb
    const video = (bytes: number) => Buffer.alloc(bytes, 0x5a).toString('base64');
    const dataUri = (bytes: number) => `data:video/mp4;base64,${video(bytes)}`;
    const submit = (body: Record<string, unknown>) => h.post('/v1/video/generations', { model: 'omni-fast-v2v', prompt: 'restyle', ...body });
    const refused = (r: JsonAnswer, field: string, what: RegExp) => {
      assert.equal(r.status, 400, r.text.slice(0, 300));
      assert.equal(r.json.error.code, 'invalid_request');
      assert.equal(r.json.error.param, field);
      assert.match(r.json.error.message, what);
    };
    const before = sim().stats.submits!;
    const edge = dataUri(MB15);
    const ok = await submit({ input_video: edge });
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    assert.equal(sim().stats.submits, before + 1);
    const okBare = await submit({ video: video(MB15) });
    assert.equal(okBare.status, 200, okBare.text.slice(0, 300));
    assert.equal(sim().stats.submits, before + 2);

    const over = /decodes to 15,728,641 bytes; at most 15,728,640 bytes \(15 MB\) are allowed \(a limit of the omni family, model omni-fast-v2v\)/;
    refused(await submit({ video: dataUri(MB15 + 1) }), 'video', over);
    refused(await submit({ input_video: video(MB15 + 1) }), 'input_video', over);
    // Issue 26: 15 MB + 60 bytes as bare base64 (20,971,600 characters) fitted the old bound in characters.
    refused(await submit({ video_url: video(MB15 + 60) }), 'video_url', /decodes to 15,728,700 bytes/);
    // Text that is not base64 cannot be counted, so it is refused as what it is (a line break of MIME base64).
    refused(
      await submit({ video: `data:video/mp4;base64,${video(300).replace(/(.{76})/g, '$1\n')}` }),
      'video',
      /is a data URI whose data is not base64 \(a line break at character 77\)/,
    );
    const none = await h.post('/v1/videos', { model: 'omni-fast-v2v', prompt: 'restyle' });
    assert.equal(none.status, 400, none.text);
    assert.match(none.json.error.message, /omni-fast-v2v/);
    assert.equal(sim().stats.submits, before + 2, 'refusals made no upstream call');
  });

  test("omni-fast: six images are refused; a failed task ends failed with the upstream's code; an odd word keeps it pending", async () => {
    const six = await h.post('/v1/videos', { model: 'omni-fast', prompt: 'x', images: Array.from({ length: 6 }, (_, i) => `https://img.example/${i}.png`) });
    assert.equal(six.status, 400, six.text);
    assert.equal(six.json.error.param, 'images');
    const sub = await h.post('/v1/videos', { model: 'omni-fast', prompt: 'doomed [sim:fail=content_policy]', images: ['https://img.example/a.png'] });
    assert.equal(sub.status, 200, sub.text);
    const last = await h.waitFor(sub.json.id, (t) => t.status === 'failed' || t.status === 'completed');
    assert.equal(last.status, 'failed');
    assert.equal(last.error.code, 'content_policy');
    const odd = await h.post('/v1/videos', { model: 'omni-fast', prompt: 'odd [sim:status=rendering]' });
    assert.equal(odd.status, 200, odd.text);
    const { sim: vendorTask } = await h.vendorTask(odd.json.id, 'unified-passthrough');
    for (let i = 0; i < 200 && vendorTask.polls < 3; i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(vendorTask.polls >= 3, 'the gateway kept asking');
    const now = await h.get(`/v1/videos/${odd.json.id}`);
    assert.ok(['queued', 'in_progress'].includes(now.json.status), now.text);
    assert.equal((await h.record(odd.json.id))!.vendorStatus, 'rendering');
  });
});
