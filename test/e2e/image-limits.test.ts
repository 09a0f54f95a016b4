/**
 * Section 8's image rows (at least 128x128, aspect ratio within 1:4 to 4:1, PNG/JPEG/WebP, at most
 * 50 MB) over real HTTP, as the `image` keyword in the families' limits enforces them: on the beta
 * reference-to-video route (2.5 points at section 8) and on the beta-prefixed family of the unified
 * video routes (the same vendor, which applies section 8 to every image). Each refusal is
 * invalid_request naming the field and the image's index, before the vendor is called; a URL is
 * passed on unread, and never fetched.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { makePng } from '../../src/sim/png.js';
import { dataUri, makeJpeg, makeWebpLossy } from '../helpers/images.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { closedPortUrl, listenLocal } from '../helpers/local-server.js';

const BETA = '/beta/ent/v2/reference2video';
const png = (w: number, h: number) => dataUri('image/png', makePng(w, h));

describe('inline images against section 8, end to end', () => {
  let h: TaskHarness;
  /** Counts every request made to it: an image URL pointing here must never be fetched. */
  let watcher: Server;
  let watcherHits = 0;
  let watcherUrl = '';
  /** The URL of a port nothing listens on. */
  let closedUrl = '';

  before(async () => {
    h = await startTaskHarness({ finishMs: 200 });
    watcher = createServer((_req, res) => {
      watcherHits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end(makePng(4, 4));
    });
    watcherUrl = `${await listenLocal(watcher)}/tiny-64x64.png`;
    closedUrl = `${await closedPortUrl()}/x.png`;
  });
  after(async () => {
    await new Promise<void>((resolve) => watcher.close(() => resolve()));
    await h.close();
  });

  const vendorSubmits = () => h.sims['beta-native']!.stats.submits!;

  /** Posts `body` to `path` and checks it is refused with `message`, naming `param`, and that the vendor was not asked. */
  async function refused(path: string, body: unknown, param: string, message: string): Promise<void> {
    const before = vendorSubmits();
    const r = await h.post(path, body);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'invalid_request');
    assert.equal(r.json.error.param, param);
    assert.equal(r.json.error.message, message);
    assert.equal(vendorSubmits(), before, 'the vendor is not called');
  }

  const subjects = (...images: string[]) => ({ model: 'betaq2-pro', prompt: '@s waves', subjects: [{ id: 's', images }] });
  const ofBeta = '(a limit of the beta reference family)';

  test('beta route: a 64x64 PNG is refused naming the subject, the field and the index', async () => {
    await refused(
      BETA,
      subjects(png(128, 128), png(64, 64)),
      'subjects[0].images[1]',
      `subjects[0].images[1]: the image is 64x64; at least 128x128 is required ${ofBeta}`,
    );
  });

  test('beta route: a 640x128 PNG (5:1) is refused for its aspect ratio', async () => {
    const body = {
      model: 'betaq1',
      subjects: [
        { id: 'a', images: [png(128, 128)] },
        { id: 'b', images: [png(640, 128)] },
      ],
    };
    await refused(
      BETA,
      body,
      'subjects[1].images[0]',
      `subjects[1].images[0]: the image is 640x128, an aspect ratio of 5:1; it must be between 1:4 and 4:1 ${ofBeta}`,
    );
  });

  test('beta route: a JPEG and a WebP of the wrong size are refused too', async () => {
    await refused(
      BETA,
      subjects(dataUri('image/jpeg', makeJpeg(100, 120))),
      'subjects[0].images[0]',
      `subjects[0].images[0]: the image is 100x120; at least 128x128 is required ${ofBeta}`,
    );
    await refused(
      BETA,
      subjects(png(200, 200), dataUri('image/webp', makeWebpLossy(2000, 300))),
      'subjects[0].images[1]',
      `subjects[0].images[1]: the image is 2000x300, an aspect ratio of 20:3; it must be between 1:4 and 4:1 ${ofBeta}`,
    );
    await refused(
      BETA,
      subjects('data:image/png;base64,R0lGODlhAQABAAAAACw='),
      'subjects[0].images[0]',
      `subjects[0].images[0]: the image is not a PNG, JPEG or WebP (its header could not be read) ${ofBeta}`,
    );
  });

  test('beta route: images of 128x128, at the 4:1 and 1:4 edges, and as JPEG and WebP are accepted and passed on', async () => {
    const images = [png(128, 128), png(512, 128), dataUri('image/jpeg', makeJpeg(128, 512))];
    const before = vendorSubmits();
    const r = await h.post(BETA, {
      model: 'betaq2-pro',
      subjects: [
        { id: 'a', images },
        { id: 'b', images: [dataUri('image/webp', makeWebpLossy(1280, 720))] },
      ],
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(vendorSubmits(), before + 1);
    const rec = await h.record(r.json.task_id as string);
    const sent = h.sims['beta-native']!.tasks!.get(rec!.upstreamId!)!.body as { subjects: { images: string[] }[] };
    assert.deepEqual(sent.subjects[0]!.images, images, 'the images reach the vendor as they came');
  });

  test('an image URL is not fetched to be checked: one the gateway could reach, and one nobody answers', async () => {
    const r = await h.post(BETA, subjects(watcherUrl, closedUrl));
    assert.equal(r.status, 200, r.text);
    await h.waitFor(r.json.task_id as string, (t) => t.status === 'completed', { path: (id) => `/beta/ent/v2/tasks/${id}/creations` });
    assert.equal(watcherHits, 0, 'no request was made to the image URL');
  });

  test('beta-prefixed on the unified routes: image, images, input_reference and the last frame are each checked', async () => {
    const ofFamily = '(a limit of the beta-prefixed family)';
    const small = png(64, 64);
    await refused(
      '/v1/videos',
      { model: 'beta-q3-pro', prompt: 'x', image: small },
      'image',
      `image: the image is 64x64; at least 128x128 is required ${ofFamily}`,
    );
    await refused(
      '/v1/video/generations',
      { model: 'beta-q3-turbo', prompt: 'x', images: [png(128, 128), png(128, 128), png(100, 600)] },
      'images[2]',
      `images[2]: the image is 100x600; at least 128x128 is required ${ofFamily}`,
    );
    await refused(
      '/v1/videos',
      { model: 'beta-q3-pro', prompt: 'x', input_reference: [png(128, 128), png(600, 100)] },
      'input_reference[1]',
      `input_reference[1]: the image is 600x100; at least 128x128 is required ${ofFamily}`,
    );
    await refused(
      '/v1/videos',
      { model: 'beta-q3-pro', prompt: 'x', input_reference: png(1000, 128) },
      'input_reference',
      `input_reference: the image is 1000x128, an aspect ratio of 125:16; it must be between 1:4 and 4:1 ${ofFamily}`,
    );
    await refused(
      '/v1/videos',
      { model: 'beta-q3-pro', prompt: 'x', input_reference: { image_url: small } },
      'input_reference.image_url',
      `input_reference.image_url: the image is 64x64; at least 128x128 is required ${ofFamily}`,
    );
    await refused(
      '/v1/videos',
      { model: 'beta-q3-pro', prompt: 'x', image: png(200, 200), metadata: { last_frame_url: makePng(64, 64).toString('base64') } },
      'metadata.last_frame_url',
      `metadata.last_frame_url: the image is 64x64; at least 128x128 is required ${ofFamily}`,
    );
    await refused(
      '/v1/videos',
      { model: 'beta-q3-pro', prompt: 'x', image: 'a picture of a cat' },
      'image',
      `image: the image must be an http(s) URL, a data:image/<type>;base64,… URI or bare base64; this is not base64 ${ofFamily}`,
    );
    const ok = await h.post('/v1/videos', {
      model: 'beta-q3-pro',
      prompt: 'x',
      image: makePng(128, 128).toString('base64'),
      metadata: { last_frame_url: watcherUrl },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(watcherHits, 0, 'the last frame URL is not fetched');
  });

  test('families without section 8 image limits are not checked: a 64x64 first frame still goes to the lambda line', async () => {
    const r = await h.post('/v1/videos', { model: 'lambda-3.0', prompt: 'x', image: png(64, 64) });
    assert.equal(r.status, 200, r.text);
  });
});
