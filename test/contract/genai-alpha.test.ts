/**
 * Contract: the official Google client (`@google/genai`, Gemini API mode) pointed STRAIGHT at the
 * alpha-native simulator, driving every call the alpha routes and profile make of the vendor, and
 * the streaming call the real API offers. What the client sends must be accepted, and what the
 * simulator answers must parse into the client's own objects (GenerateContentResponse, ApiError).
 * The SDK is the reference (DESIGN.md, "The vendors are the reference"): a failure here means the
 * simulator, and so the profile and golden cases written against it, misread the vendor.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ApiError,
  BlockedReason,
  FinishReason,
  GenerateContentResponse,
  GoogleGenAI,
  HarmBlockThreshold,
  HarmCategory,
  type GenerateContentParameters,
} from '@google/genai';
import { makePng, pngSize } from '../../src/sim/png.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import type { Simulator } from '../../src/sim/http.js';

const MODEL = 'alpha-3-pro-image-preview';

/** The PNG of an answer's image part, with its size; fails when there is none. */
function imageOf(parts: { inlineData?: { mimeType?: string; data?: string } }[]): { width: number; height: number } {
  const part = parts.find((p) => p.inlineData);
  assert.ok(part?.inlineData?.data, `no image part in ${JSON.stringify(parts).slice(0, 300)}`);
  assert.equal(part.inlineData.mimeType, 'image/png');
  const size = pngSize(Buffer.from(part.inlineData.data, 'base64'));
  assert.ok(size, 'the image part does not decode to a PNG');
  return size;
}

/** The fields the SDK's GenerateContentResponse type documents for a successful answer. */
function assertAnswer(res: GenerateContentResponse): void {
  assert.ok(res instanceof GenerateContentResponse, "not the SDK's GenerateContentResponse");
  const c = res.candidates?.[0];
  assert.ok(c?.content?.parts?.length, `no candidate content: ${JSON.stringify(res).slice(0, 300)}`);
  assert.equal(c.content.role, 'model');
  assert.equal(c.index, 0);
  assert.equal(res.modelVersion, MODEL);
  assert.match(res.responseId ?? '', /^\S+$/);
  const u = res.usageMetadata;
  assert.ok(u, 'no usageMetadata');
  assert.equal(u.totalTokenCount, (u.promptTokenCount ?? 0) + (u.candidatesTokenCount ?? 0));
  // The SDK's type has trafficType (a Vertex field); the Gemini API's UsageMetadata does not (gemini-spec.test.ts).
  assert.equal(u.trafficType, undefined);
}

describe('@google/genai straight at the alpha-native simulator', () => {
  let sim: Simulator;
  let ai: GoogleGenAI;

  before(async () => {
    sim = await SIMULATORS['alpha-native']!();
    ai = new GoogleGenAI({ apiKey: sim.secrets.key!, httpOptions: { baseUrl: sim.url } });
  });
  after(() => sim.close());

  describe('models.generateContent', () => {
    test('text-to-image: a GenerateContentResponse with text, a PNG of the asked ratio, STOP and usage', async () => {
      const res = await ai.models.generateContent({
        model: MODEL,
        contents: 'a lighthouse at dawn',
        config: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
      });
      assertAnswer(res);
      const size = imageOf(res.candidates![0]!.content!.parts!);
      assert.equal(size.width * 9, size.height * 16, `${size.width}x${size.height} is not 16:9`);
      assert.equal(res.candidates![0]!.finishReason, FinishReason.STOP);
      assert.match(res.candidates![0]!.content!.parts![0]!.text ?? '', /image/);
    });

    test('image-to-image: inlineData parts after the prompt are accepted and counted', async () => {
      const ref = makePng(24, 24, 3).toString('base64');
      const res = await ai.models.generateContent({
        model: MODEL,
        contents: [{ role: 'user', parts: [{ text: 'make it a watercolour' }, { inlineData: { mimeType: 'image/png', data: ref } }] }],
        config: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:4' } },
      });
      assertAnswer(res);
      const size = imageOf(res.candidates![0]!.content!.parts!);
      assert.equal(size.width * 4, size.height * 3, `${size.width}x${size.height} is not 3:4`);
      assert.ok((res.usageMetadata?.promptTokenCount ?? 0) >= 258, 'the reference image did not reach the simulator');
    });

    test('systemInstruction, safetySettings, labels and the sampling options are accepted', async () => {
      const res = await ai.models.generateContent({
        model: MODEL,
        contents: 'a cat',
        config: {
          systemInstruction: 'draw in ink',
          // The public route accepts labels and passes them on; the SDK sends them in Gemini API mode too.
          labels: { team: 'art' },
          safetySettings: [{ category: HarmCategory.HARM_CATEGORY_HARASSMENT, threshold: HarmBlockThreshold.BLOCK_ONLY_HIGH }],
          temperature: 1,
          topP: 0.9,
          seed: 5,
          responseModalities: ['IMAGE'],
          imageConfig: { aspectRatio: '1:1', imageSize: '1K' },
        },
      });
      assertAnswer(res);
      imageOf(res.candidates![0]!.content!.parts!);
    });

    // What makes "accepted" above mean something: the vendor refuses a request field it does not know.
    test('a request field the vendor does not know is refused (400 INVALID_ARGUMENT, "Unknown name")', async () => {
      const res = await fetch(`${sim.url}/v1beta/models/${MODEL}:generateContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': sim.secrets.key! },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a cat' }] }], systemInstructions: 'typo' }),
      });
      const body = (await res.json()) as { error?: { status?: string; message?: string } };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.error?.status, 'INVALID_ARGUMENT');
      assert.match(body.error?.message ?? '', /Unknown name "systemInstructions"/);
    });

    test('a blocked prompt is a 200 with promptFeedback.blockReason and no candidates', async () => {
      const res = await ai.models.generateContent({ model: MODEL, contents: 'something [sim:block]', config: { imageConfig: { aspectRatio: '1:1' } } });
      assert.ok(res instanceof GenerateContentResponse);
      assert.equal(res.candidates, undefined);
      assert.equal(res.promptFeedback?.blockReason, BlockedReason.PROHIBITED_CONTENT);
      assert.equal(res.text, undefined);
    });

    test("a wrong key is the SDK's ApiError, status 400, naming API_KEY_INVALID", async () => {
      const wrong = new GoogleGenAI({ apiKey: 'not-the-key', httpOptions: { baseUrl: sim.url } });
      const err = await wrong.models.generateContent({ model: MODEL, contents: 'a cat' }).then(
        () => assert.fail('a wrong key was accepted'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
      assert.equal(err.status, 400);
      assert.match(err.message, /API_KEY_INVALID/);
    });

    test('no key at all is 403 PERMISSION_DENIED (the API\'s "unregistered callers"), not a wrong key', async () => {
      const res = await fetch(`${sim.url}/v1beta/models/${MODEL}:generateContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a cat' }] }] }),
      });
      const body = (await res.json()) as { error?: { status?: string; message?: string } };
      assert.equal(res.status, 403, JSON.stringify(body));
      assert.equal(body.error?.status, 'PERMISSION_DENIED');
      assert.match(body.error?.message ?? '', /unregistered callers/);
    });
  });

  describe('models.generateContentStream (:streamGenerateContent?alt=sse)', () => {
    const params = (contents: string, imageConfig = { aspectRatio: '9:16', imageSize: '1K' }): GenerateContentParameters => ({
      model: MODEL,
      contents,
      config: { responseModalities: ['TEXT', 'IMAGE'], imageConfig },
    });

    async function chunksOf(client: GoogleGenAI, p: GenerateContentParameters): Promise<GenerateContentResponse[]> {
      const out: GenerateContentResponse[] = [];
      for await (const chunk of await client.models.generateContentStream(p)) out.push(chunk);
      return out;
    }

    test('the answer comes as several GenerateContentResponse chunks: text, then the image with STOP and the full usage', async () => {
      const chunks = await chunksOf(ai, params('a lighthouse at dawn'));
      assert.ok(chunks.length >= 2, `the real API streams parts as they come; got ${chunks.length} chunk(s)`);
      for (const c of chunks) {
        assert.ok(c instanceof GenerateContentResponse);
        assert.equal(c.modelVersion, MODEL);
        assert.equal(c.responseId, chunks[0]!.responseId, 'every chunk of one answer carries its responseId');
      }
      const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
      assert.match(parts.map((p) => p.text ?? '').join(''), /Here is the image you asked for/);
      const size = imageOf(parts);
      assert.equal(size.width * 16, size.height * 9, `${size.width}x${size.height} is not 9:16`);
      // Only the last chunk ends the candidate; it carries the whole usage.
      assert.deepEqual(
        chunks.slice(0, -1).map((c) => c.candidates?.[0]?.finishReason),
        chunks.slice(0, -1).map(() => undefined),
      );
      const last = chunks.at(-1)!;
      assertAnswer(last);
      assert.equal(last.candidates![0]!.finishReason, FinishReason.STOP);
      assert.ok((last.usageMetadata?.candidatesTokenCount ?? 0) > 0);
    });

    test('a blocked prompt streams one chunk with promptFeedback', async () => {
      const chunks = await chunksOf(ai, params('something [sim:block]'));
      assert.equal(chunks.length, 1);
      assert.equal(chunks[0]!.promptFeedback?.blockReason, BlockedReason.PROHIBITED_CONTENT);
      assert.equal(chunks[0]!.candidates, undefined);
    });

    test("errors come before the stream as the SDK's ApiError: a wrong key (400), a quota fault (429)", async () => {
      const wrong = new GoogleGenAI({ apiKey: 'not-the-key', httpOptions: { baseUrl: sim.url } });
      const bad = await chunksOf(wrong, params('a cat')).then(
        () => assert.fail('a wrong key was accepted'),
        (e: unknown) => e,
      );
      assert.ok(bad instanceof ApiError, `not an ApiError: ${String(bad)}`);
      assert.equal(bad.status, 400);
      assert.match(bad.message, /API_KEY_INVALID/);
      const busy = await chunksOf(ai, params('a cat [sim:fault=429]')).then(
        () => assert.fail('the fault was not answered'),
        (e: unknown) => e,
      );
      assert.ok(busy instanceof ApiError, `not an ApiError: ${String(busy)}`);
      assert.equal(busy.status, 429);
      assert.match(busy.message, /RESOURCE_EXHAUSTED/);
    });

    /** The chunks a stream gave before it failed, and the error it failed with; fails the test when it does not fail. */
    async function failsMidStream(p: GenerateContentParameters): Promise<{ chunks: GenerateContentResponse[]; err: unknown }> {
      const chunks: GenerateContentResponse[] = [];
      const err = await (async () => {
        for await (const chunk of await ai.models.generateContentStream(p)) chunks.push(chunk);
      })().then(
        () => assert.fail(`the stream ended normally after ${chunks.length} chunk(s)`),
        (e: unknown) => e,
      );
      return { chunks, err };
    }

    test("a vendor error chunk mid-stream (stream-error) is the SDK's ApiError, status 500, after the first chunk", async () => {
      const { chunks, err } = await failsMidStream(params('a lighthouse [sim:fault=stream-error]'));
      assert.equal(chunks.length, 1, 'the chunk before the error reached the client');
      assert.ok(chunks[0] instanceof GenerateContentResponse);
      assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
      assert.equal(err.status, 500);
      assert.match(err.message, /INTERNAL/);
    });

    test('a stream cut after its first chunk (stream-cut) fails the iteration, after that chunk', async () => {
      const { chunks, err } = await failsMidStream(params('a lighthouse [sim:fault=stream-cut]'));
      assert.equal(chunks.length, 1);
      assert.ok(err instanceof Error, String(err));
      assert.ok(!(err instanceof ApiError), 'a cut is no answer of the vendor');
    });

    test('on the wire: text/event-stream, `data: <json>` frames ended by CRLF CRLF; without alt the same chunks as one JSON array', async () => {
      const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a cat' }] }], generationConfig: { imageConfig: { aspectRatio: '1:1' } } });
      const headers = { 'content-type': 'application/json', 'x-goog-api-key': sim.secrets.key! };
      const sse = await fetch(`${sim.url}/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, { method: 'POST', headers, body });
      assert.equal(sse.status, 200);
      assert.equal(sse.headers.get('content-type'), 'text/event-stream');
      const text = await sse.text();
      const frames = text.split('\r\n\r\n');
      assert.equal(frames.pop(), '', 'the stream ends with a complete frame');
      assert.ok(frames.length >= 2);
      for (const f of frames) assert.match(f, /^data: \{.*\}$/s);
      const plain = await fetch(`${sim.url}/v1beta/models/${MODEL}:streamGenerateContent`, { method: 'POST', headers, body });
      assert.equal(plain.status, 200);
      assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
      const array = (await plain.json()) as unknown[];
      assert.ok(Array.isArray(array) && array.length === frames.length, 'the JSON form holds the same chunks');
    });
  });
});
