/**
 * The lambda-native simulator against the vendor's public text-to-video and image-to-video
 * references (issue 26): audio is `sound` ("on" | "off"), there is no `output_config`, and
 * image-to-video has no `aspect_ratio` (the video follows the image). The simulator refuses a field
 * the documents do not list for the endpoint, on purpose, so that a profile sending one is caught.
 * Real HTTP, one simulator, a JWT signed as the gateway signs it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { Simulator } from '../../src/sim/http.js';
import { startLambdaSimulator } from '../../src/sim/lambda-native.js';
import { simClient } from '../helpers/sim-client.js';

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe("lambda-native simulator: the fields of the vendor's documents", () => {
  let sim: Simulator;
  /** A JWT signed now, as the gateway signs it. */
  const bearer = () => {
    const now = Math.floor(Date.now() / 1000);
    const signing = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ iss: sim.secrets.access_key, exp: now + 1800, nbf: now - 5 })}`;
    return { authorization: `Bearer ${signing}.${createHmac('sha256', sim.secrets.secret_key!).update(signing).digest('base64url')}` };
  };
  const submit = (kind: string, body: unknown) => simClient(sim, bearer).post(`/v1/videos/${kind}`, body);
  before(async () => {
    sim = await startLambdaSimulator({ finishMs: 60_000 });
  });
  after(() => sim.close());

  test('sound "on" and "off" are taken on both kinds, and aspect_ratio on text2video', async () => {
    for (const sound of ['on', 'off']) {
      const t = await submit('text2video', { model_name: 'lambda-3.0', prompt: 'rain on a tin roof', sound, aspect_ratio: '9:16' });
      assert.equal(t.status, 200, JSON.stringify(t.body));
      const i = await submit('image2video', { model_name: 'lambda-3.0', image: 'https://example.com/a.png', sound });
      assert.equal(i.status, 200, JSON.stringify(i.body));
    }
  });

  test('refused: a sound that is not "on" or "off", output_config (not in the documents), aspect_ratio on image2video', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['text2video', { prompt: 'x', sound: true }, /sound must be "on" or "off"/],
      ['text2video', { prompt: 'x', sound: 'yes' }, /sound must be "on" or "off"/],
      ['text2video', { prompt: 'x', output_config: { audio_generation: true } }, /unknown field output_config/],
      ['image2video', { image: 'https://example.com/a.png', aspect_ratio: '16:9' }, /unknown field aspect_ratio/],
    ];
    for (const [kind, body, message] of cases) {
      const r = await submit(kind, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.code, 1201);
      assert.match(r.body.message, message);
    }
  });
});
