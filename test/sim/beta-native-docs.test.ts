/**
 * The beta-native simulator against the vendor's public reference-to-video document (issue 26): the
 * documented non-subject form (`images`, no `subjects`) is taken, the image counts the document gives
 * are enforced for both forms, and any integer seed is taken (the document states no range: omitted
 * or 0 means random, any other value is used). Real HTTP, one simulator.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Simulator } from '../../src/sim/http.js';
import { startBetaSimulator } from '../../src/sim/beta-native.js';
import { simClient } from '../helpers/sim-client.js';

const IMG = 'https://example.com/a.png';

describe('beta-native simulator: reference2video as the vendor documents it', () => {
  let sim: Simulator;
  const submit = (body: unknown) => simClient(sim, { authorization: `Token ${sim.secrets.key}` }).post('/ent/v2/reference2video', body);
  before(async () => {
    sim = await startBetaSimulator({ finishMs: 60_000 });
  });
  after(() => sim.close());

  test('the non-subject form: images (1 to 7) without subjects is a task, and the images are echoed', async () => {
    const images = [IMG, 'data:image/png;base64,iVBORw0KGgo='];
    const r = await submit({ model: 'betaq2-pro', images, prompt: 'the two of them dance' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.state, 'created');
    assert.deepEqual(r.body.images, images);
    assert.deepEqual(sim.tasks!.get(r.body.task_id)!.body, { model: 'betaq2-pro', images, prompt: 'the two of them dance' });
    const seven = await submit({ model: 'betaq1', images: Array(7).fill(IMG), prompt: 'x' });
    assert.equal(seven.status, 200, JSON.stringify(seven.body));
  });

  test('what the document refuses: 8 images, 4 on beta2.0 (1 to 3 there), both forms at once, more than 7 images over all subjects', async () => {
    const cases: [unknown, RegExp][] = [
      [{ model: 'betaq2-pro', images: Array(8).fill(IMG), prompt: 'x' }, /images must contain 1 to 7 images/],
      [{ model: 'beta2.0', images: Array(4).fill(IMG), prompt: 'x' }, /images must contain 1 to 3 images/],
      [{ model: 'betaq2-pro', images: [], prompt: 'x' }, /images must contain 1 to 7 images/],
      [{ model: 'betaq2-pro', images: ['iVBORw0KGgo='], prompt: 'x' }, /images\[0\] must be an http\(s\) URL or data:image/],
      [{ model: 'betaq2-pro', images: [IMG], subjects: [{ id: 'a', images: [IMG] }], prompt: 'x' }, /either subjects or images, not both/],
      [{ model: 'betaq2-pro', subjects: ['a', 'b', 'c'].map((id) => ({ id, images: [IMG, IMG, IMG] })), prompt: 'x' }, /at most 7 images over all subjects/],
    ];
    for (const [body, message] of cases) {
      const r = await submit(body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 200));
      assert.equal(r.body.reason, 'BadRequest');
      assert.match(r.body.message, message);
    }
  });

  test('a negative seed is that seed (only 0 or none means random); a seed that is not an integer is refused', async () => {
    const neg = await submit({ model: 'betaq2-pro', images: [IMG], prompt: 'x', seed: -7 });
    assert.equal(neg.status, 200, JSON.stringify(neg.body));
    assert.equal(neg.body.seed, -7, 'the seed used is the one given');
    const random = await submit({ model: 'betaq2-pro', images: [IMG], prompt: 'x', seed: 0 });
    assert.equal(random.status, 200);
    assert.ok(Number.isInteger(random.body.seed) && random.body.seed !== 0, 'seed 0 is replaced by a random one');
    for (const seed of [1.5, '7']) {
      const bad = await submit({ model: 'betaq2-pro', images: [IMG], prompt: 'x', seed });
      assert.equal(bad.status, 400, String(seed));
      assert.match(bad.body.message, /seed must be an integer/);
    }
  });
});
