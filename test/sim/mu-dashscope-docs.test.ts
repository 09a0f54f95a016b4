/**
 * The mu-dashscope simulator against the vendor's public text-to-video and image-to-video (first
 * frame) references (issue 26): text-to-video takes `parameters.size` from the documented list, in
 * portrait as well as landscape (720*1280 among them) and no `resolution`; image-to-video takes
 * `parameters.resolution` (720P or 1080P; the video keeps the image's aspect ratio) and no `size`.
 * Real HTTP, one simulator.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Simulator } from '../../src/sim/http.js';
import { startMuSimulator } from '../../src/sim/mu-dashscope.js';
import { simClient } from '../helpers/sim-client.js';

const SUBMIT = '/api/v1/services/aigc/video-generation/video-synthesis';
const T2V_SIZES = ['1280*720', '720*1280', '960*960', '1088*832', '832*1088', '1920*1080', '1080*1920', '1440*1440', '1632*1248', '1248*1632'];

describe('mu-dashscope simulator: size and resolution as the vendor documents them', () => {
  let sim: Simulator;
  const client = () => simClient(sim, { authorization: `Bearer ${sim.secrets.key}` });
  const submit = (body: unknown) => client().post(SUBMIT, body, { 'x-dashscope-async': 'enable' });
  const query = async (id: string) => (await client().get(`/api/v1/tasks/${id}`)).body;
  before(async () => {
    sim = await startMuSimulator({ finishMs: 60_000 });
  });
  after(() => sim.close());

  test('text-to-video takes every documented size, portrait 720*1280 included, and reports it as the video ratio', async () => {
    for (const size of T2V_SIZES) {
      const r = await submit({ model: 'mu2.6-t2v', input: { prompt: 'a tall lighthouse' }, parameters: { size } });
      assert.equal(r.status, 200, `${size}: ${JSON.stringify(r.body)}`);
      assert.equal((await query(r.body.output.task_id)).usage.video_ratio, size);
    }
  });

  test('image-to-video takes resolution 720P or 1080P; its video ratio follows the tier', async () => {
    for (const [resolution, ratio] of [
      ['720P', '1280*720'],
      ['1080P', '1920*1080'],
    ]) {
      const r = await submit({ model: 'mu2.6-i2v', input: { img_url: 'https://example.com/cat.png' }, parameters: { resolution } });
      assert.equal(r.status, 200, `${resolution}: ${JSON.stringify(r.body)}`);
      assert.equal((await query(r.body.output.task_id)).usage.video_ratio, ratio);
    }
  });

  test("each model refuses the other one's field and values outside its list", async () => {
    const img = { img_url: 'https://example.com/cat.png' };
    const cases: [unknown, RegExp][] = [
      [{ model: 'mu2.6-i2v', input: img, parameters: { size: '1280*720', resolution: '720P' } }, /parameters\.size is not taken by mu2\.6-i2v/],
      [
        { model: 'mu2.6-t2v', input: { prompt: 'x' }, parameters: { size: '1280*720', resolution: '720P' } },
        /parameters\.resolution is not taken by mu2\.6-t2v/,
      ],
      [{ model: 'mu2.6-i2v', input: img, parameters: { resolution: '480P' } }, /Invalid resolution: 480P/],
      [{ model: 'mu2.6-t2v', input: { prompt: 'x' }, parameters: { size: '1280x720' } }, /Invalid size: 1280x720/],
      [{ model: 'mu2.6-t2v', input: { prompt: 'x' }, parameters: { size: '832*480' } }, /Invalid size: 832\*480/],
    ];
    for (const [body, message] of cases) {
      const r = await submit(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.code, 'InvalidParameter');
      assert.match(r.body.message, message);
    }
  });
});
