/**
 * Contract: the official Google client (`@google/genai`, Gemini API mode) pointed STRAIGHT at the
 * eta-operations simulator (Veo-style predictLongRunning), driving every call the eta profile makes
 * of the vendor: generateVideos (text, first/last frame, reference images), operations polling to
 * done, failed and filtered, and the download of the video with the key. What the client sends must
 * be accepted and what the simulator answers must parse into the client's own objects
 * (GenerateVideosOperation, GenerateVideosResponse, ApiError). The SDK is the reference (DESIGN.md,
 * "The vendors are the reference"); where it refuses a field in Gemini API mode, the simulator
 * refuses it too, so the profile cannot come to rely on it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, GenerateVideosOperation, GoogleGenAI, VideoGenerationReferenceType, type GenerateVideosParameters } from '@google/genai';
import { makePng } from '../../src/sim/png.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import type { Simulator } from '../../src/sim/http.js';
import { until } from '../helpers/until.js';

const MODEL = 'eta_3_1';
const png = (seed: number) => ({ imageBytes: makePng(16, 9, seed).toString('base64'), mimeType: 'image/png' });

describe('@google/genai straight at the eta-operations simulator', () => {
  let sim: Simulator;
  let ai: GoogleGenAI;
  let dir: string;

  before(async () => {
    sim = await SIMULATORS['eta-operations']!({ finishMs: 200 });
    ai = new GoogleGenAI({ apiKey: sim.secrets.key!, httpOptions: { baseUrl: sim.url } });
    dir = await mkdtemp(join(tmpdir(), 'genai-eta-'));
  });
  after(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Submits with the SDK; a refusal names the simulator's message. */
  async function submit(params: Omit<GenerateVideosParameters, 'model'>): Promise<GenerateVideosOperation> {
    const op = await ai.models.generateVideos({ model: MODEL, ...params });
    assert.ok(op instanceof GenerateVideosOperation, "not the SDK's GenerateVideosOperation");
    assert.match(op.name ?? '', new RegExp(`^models/${MODEL}/operations/[0-9a-f]{24}$`));
    return op;
  }

  /** Polls with operations.getVideosOperation, as the SDK's samples do, until the operation is done. */
  async function finish(op: GenerateVideosOperation): Promise<GenerateVideosOperation> {
    let current = op;
    return until(`operation ${op.name} done`, async () => {
      current = await ai.operations.getVideosOperation({ operation: current });
      assert.ok(current instanceof GenerateVideosOperation);
      assert.equal(current.name, op.name);
      return current.done === true ? current : null;
    });
  }

  /** A finished operation's videos, each with the uri the SDK reads. */
  function videosOf(op: GenerateVideosOperation): string[] {
    assert.equal(op.error, undefined, `the operation failed: ${JSON.stringify(op.error)}`);
    const videos = op.response?.generatedVideos ?? [];
    assert.ok(videos.length > 0, `no generatedVideos in ${JSON.stringify(op.response)}`);
    return videos.map((v) => {
      assert.match(v.video?.uri ?? '', /\/v1beta\/files\/[a-z0-9]+:download\?alt=media$/);
      return v.video!.uri!;
    });
  }

  test('text-to-video with numberOfVideos, ratio, resolution, duration, negativePrompt, personGeneration: polled to done', async () => {
    const op = await submit({
      prompt: 'a lighthouse at dawn',
      config: { numberOfVideos: 1, aspectRatio: '9:16', resolution: '720p', durationSeconds: 6, negativePrompt: 'fog', personGeneration: 'allow_all' },
    });
    const done = await finish(op);
    assert.equal(videosOf(done).length, 1);
  });

  test('numberOfVideos 2 gives two videos, each its own file', async () => {
    const done = await finish(await submit({ prompt: 'two takes', config: { numberOfVideos: 2 } }));
    const uris = videosOf(done);
    assert.equal(uris.length, 2);
    assert.notEqual(uris[0], uris[1]);
  });

  test('first frame (image) and last frame (config.lastFrame), as the SDK sends them', async () => {
    const done = await finish(
      await submit({ prompt: 'the boat sails off', image: png(1), config: { lastFrame: png(2), durationSeconds: 8, resolution: '1080p' } }),
    );
    videosOf(done);
  });

  test('the source form ({prompt, image}) is the same request', async () => {
    videosOf(await finish(await submit({ source: { prompt: 'the cat wakes', image: png(4) } })));
  });

  test("reference images with the SDK's enum value (ASSET), 16:9 and 8 s", async () => {
    const referenceImages = [1, 2, 3].map((s) => ({ image: png(s), referenceType: VideoGenerationReferenceType.ASSET }));
    const done = await finish(await submit({ prompt: 'the cat walks', config: { referenceImages, aspectRatio: '16:9', durationSeconds: 8 } }));
    videosOf(done);
  });

  test('a failed operation: done, with error {code, message}, and no response', async () => {
    const done = await finish(await submit({ prompt: 'doomed [sim:fail=render_farm_on_fire]' }));
    assert.equal(done.response, undefined);
    assert.equal(done.error?.message, 'render_farm_on_fire');
    assert.equal(typeof done.error?.code, 'number');
  });

  test('a filtered operation: done, raiMediaFilteredCount and its reasons, no videos', async () => {
    const done = await finish(await submit({ prompt: 'dubious [sim:filtered]' }));
    assert.equal(done.error, undefined);
    assert.equal(done.response?.generatedVideos, undefined);
    assert.equal(done.response?.raiMediaFilteredCount, 1);
    assert.match(done.response?.raiMediaFilteredReasons?.[0] ?? '', /usage guidelines/);
  });

  test('download: files.download by the file name the SDK reads from the uri, and the uri itself with the key', async () => {
    const op = await finish(await submit({ prompt: 'a short film', config: { numberOfVideos: 2 } }));
    const uris = videosOf(op);
    for (const [i, uri] of uris.entries()) {
      const expected = sim.result!(op.name!, i);
      assert.ok(expected, `the simulator has no bytes for video ${i}`);
      // The SDK reads the name out of an https uri (`files/` then [a-z0-9]+); the simulator's uri is
      // http, which the SDK would not parse, so the test reads it the same way.
      const name = /\/files\/([a-z0-9]+)/.exec(uri)![1]!;
      assert.equal(uri.split('files/')[1]!.match(/[a-z0-9]+/)![0], name, 'the file id is wholly [a-z0-9]+, as the SDK reads it');
      const path = join(dir, `video${i}.mp4`);
      await ai.files.download({ file: `files/${name}`, downloadPath: path });
      assert.ok((await readFile(path)).equals(expected), `files.download bytes of video ${i}`);
      const direct = await fetch(uri, { headers: { 'x-goog-api-key': sim.secrets.key! } });
      assert.equal(direct.status, 200);
      assert.equal(direct.headers.get('content-type'), 'video/mp4');
      assert.ok(Buffer.from(await direct.arrayBuffer()).equals(expected), `bytes of the uri of video ${i}`);
    }
    const keyless = await fetch(uris[0]!);
    assert.equal(keyless.status, 403, 'the uri needs the key');
  });

  test("a wrong key is the SDK's ApiError, status 400, naming API_KEY_INVALID", async () => {
    const wrong = new GoogleGenAI({ apiKey: 'not-the-key', httpOptions: { baseUrl: sim.url } });
    const err = await wrong.models.generateVideos({ model: MODEL, prompt: 'x' }).then(
      () => assert.fail('a wrong key was accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    assert.equal(err.status, 400);
    assert.match(err.message, /API_KEY_INVALID/);
  });

  test("an unknown operation is the SDK's ApiError, status 404", async () => {
    const op = Object.assign(new GenerateVideosOperation(), { name: `models/${MODEL}/operations/${'0'.repeat(24)}` });
    const err = await ai.operations.getVideosOperation({ operation: op }).then(
      () => assert.fail('an unknown operation was found'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    assert.equal(err.status, 404);
  });

  describe('what the SDK refuses in Gemini API mode, the simulator refuses too', () => {
    for (const [field, value] of [
      ['seed', 7],
      ['generateAudio', true],
    ] as const) {
      test(`config.${field}: the SDK throws before sending; a raw parameters.${field} is a 400 INVALID_ARGUMENT`, async () => {
        const before = sim.stats.submits;
        await assert.rejects(
          ai.models.generateVideos({ model: MODEL, prompt: 'x', config: { [field]: value } }),
          /only supported in .*Vertex|not in Gemini Developer API mode/,
        );
        assert.equal(sim.stats.submits, before, 'the SDK sent nothing');
        const res = await fetch(`${sim.url}/v1beta/models/${MODEL}:predictLongRunning`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-goog-api-key': sim.secrets.key! },
          body: JSON.stringify({ instances: [{ prompt: 'x' }], parameters: { [field]: value } }),
        });
        const body = (await res.json()) as { error?: { status?: string; message?: string } };
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(body.error?.status, 'INVALID_ARGUMENT');
        assert.ok(body.error?.message?.includes(field), body.error?.message);
      });
    }
  });
});
