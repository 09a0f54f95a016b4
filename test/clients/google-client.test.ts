/**
 * The official Google client (`@google/genai`) pointed at the gateway's base URL: what it sends must
 * be accepted, and what the gateway answers must be understood by it. Every request the client
 * makes is recorded (global fetch is wrapped while these tests run), so a refusal names the exact
 * body the client sent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI, HarmBlockThreshold, HarmCategory, type GenerateContentResponse } from '@google/genai';
import { makePng, pngSize } from '../../src/sim/png.js';
import { hashKey } from '../../src/tokens/keys.js';
import { startHarness, type Harness } from '../helpers/harness.js';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

const MODEL = 'alpha-3-pro-image-preview';

describe('official @google/genai client against the gateway', () => {
  let h: Harness;
  const sent: Sent[] = [];
  const realFetch = globalThis.fetch;

  before(async () => {
    h = await startHarness();
    // Record what the client puts on the wire to the gateway; other fetches pass untouched.
    globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (url.startsWith(h.url)) {
        sent.push({
          url,
          method: init?.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init?.headers)),
          body: typeof init?.body === 'string' ? init.body : String(init?.body ?? ''),
        });
      }
      return realFetch(input, init);
    };
  });
  after(async () => {
    globalThis.fetch = realFetch;
    await h.close();
  });

  const client = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: h.url } });

  /** Calls the client, and on failure says exactly what it had sent. */
  async function generate(ai: GoogleGenAI, params: Parameters<GoogleGenAI['models']['generateContent']>[0]): Promise<GenerateContentResponse> {
    const from = sent.length;
    try {
      return await ai.models.generateContent(params);
    } catch (err) {
      const last = sent
        .slice(from)
        .map((s) => `${s.method} ${s.url}\n${s.body.slice(0, 2000)}`)
        .join('\n');
      throw new Error(`the gateway refused the official client: ${(err as Error).message}\nclient sent:\n${last}`, { cause: err });
    }
  }

  function pngOf(res: GenerateContentResponse): { width: number; height: number } {
    const part = res.candidates?.[0]?.content?.parts?.find((p) => p.inlineData);
    assert.ok(part?.inlineData?.data, `no image part in ${JSON.stringify(res).slice(0, 300)}`);
    assert.equal(part.inlineData.mimeType, 'image/png');
    const size = pngSize(Buffer.from(part.inlineData.data, 'base64'));
    assert.ok(size, 'the image part does not decode to a PNG');
    return size;
  }

  test('text-to-image 16:9 2K: the client gets a 16:9 PNG', async () => {
    const from = sent.length;
    const res = await generate(client(h.key), {
      model: MODEL,
      contents: 'a cat',
      config: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
    });
    const size = pngOf(res);
    assert.equal(size.width * 9, size.height * 16, `${size.width}x${size.height} is not 16:9`);
    assert.equal(res.modelVersion, MODEL);
    assert.equal(res.candidates?.[0]?.finishReason, 'STOP');
    const u = res.usageMetadata;
    assert.ok(u?.totalTokenCount !== undefined && u.totalTokenCount === (u.promptTokenCount ?? 0) + (u.candidatesTokenCount ?? 0));

    // What the client sent: the v1beta path, the key in x-goog-api-key, and the public body shape.
    const [req, ...more] = sent.slice(from);
    assert.equal(more.length, 0, 'the client made more than one request');
    assert.ok(req);
    assert.equal(req.method, 'POST');
    assert.equal(new URL(req.url).pathname, `/v1beta/models/${MODEL}:generateContent`);
    assert.equal(req.headers['x-goog-api-key'], h.key);
    assert.equal(req.headers.authorization, undefined);
    assert.match(req.headers['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(req.body), {
      contents: [{ parts: [{ text: 'a cat' }], role: 'user' }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
    });
  });

  test('image-to-image with an inlineData part after the prompt', async () => {
    const ref = makePng(24, 24, 7).toString('base64');
    const res = await generate(client(h.key), {
      model: MODEL,
      contents: [{ role: 'user', parts: [{ text: 'make it look like a watercolour' }, { inlineData: { mimeType: 'image/png', data: ref } }] }],
      config: { responseModalities: ['IMAGE', 'TEXT'], imageConfig: { aspectRatio: '3:4' } },
    });
    const size = pngOf(res);
    assert.equal(size.width * 4, size.height * 3, `${size.width}x${size.height} is not 3:4`);
    // The simulator counts 258 prompt tokens per reference image: the image reached it.
    assert.ok((res.usageMetadata?.promptTokenCount ?? 0) >= 258);
  });

  test('the sampling and safety options of the client and a multi-turn history are accepted', async () => {
    const res = await generate(client(h.key), {
      model: MODEL,
      contents: [
        { role: 'user', parts: [{ text: 'a cat' }] },
        { role: 'model', parts: [{ text: 'Here it is.' }] },
        { role: 'user', parts: [{ text: 'now make it blue' }] },
      ],
      config: {
        imageConfig: { aspectRatio: '1:1' },
        temperature: 1,
        topP: 0.9,
        topK: 40,
        maxOutputTokens: 8192,
        candidateCount: 1,
        seed: 5,
        safetySettings: [{ category: HarmCategory.HARM_CATEGORY_HARASSMENT, threshold: HarmBlockThreshold.BLOCK_NONE }],
      },
    });
    pngOf(res);
  });

  // Interface 2.1 marks generationConfig.imageConfig as required, so the gateway refuses the client's
  // plainest call (`contents` only, or without imageConfig); the refusal must at least be readable.
  test('a call without imageConfig is refused with a 400 ApiError naming the field', async () => {
    const err = await client(h.key)
      .models.generateContent({ model: MODEL, contents: 'a cat', config: { responseModalities: ['IMAGE'] } })
      .then(
        () => assert.fail('the gateway accepted a body without generationConfig.imageConfig'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    assert.equal(err.status, 400);
    assert.match(err.message, /invalid_request/);
    assert.match(err.message, /generationConfig\.imageConfig/);
  });

  // The official client sends these fields when a caller sets them. Interface 2.1 does not list
  // them, but refusing what the official client sends would break its users; the schema accepts
  // them (still refusing unknown fields) and they pass through to the vendor.
  test('systemInstruction, as the client sends it, is accepted', async () => {
    const res = await generate(client(h.key), {
      model: MODEL,
      contents: 'a cat',
      config: { imageConfig: { aspectRatio: '1:1' }, systemInstruction: 'be nice' },
    });
    pngOf(res);
  });

  test('generationConfig.thinkingConfig, as the client sends it, is accepted', async () => {
    const res = await generate(client(h.key), {
      model: MODEL,
      contents: 'a cat',
      config: { imageConfig: { aspectRatio: '1:1' }, thinkingConfig: { includeThoughts: false } },
    });
    pngOf(res);
  });

  test('an upstream 429 reaches the client as an ApiError with status 429', async () => {
    h.sim.faults.length = 0;
    h.sim.faults.push('429');
    const err = await client(h.key)
      .models.generateContent({ model: MODEL, contents: 'a cat', config: { imageConfig: { aspectRatio: '1:1' } } })
      .then(
        () => assert.fail('the client did not throw'),
        (e: unknown) => e,
      );
    assert.equal(h.sim.faults.length, 0, 'the fault did not reach the upstream');
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    assert.equal(err.status, 429);
    assert.match(err.message, /too_many_requests/);
  });

  test('a wrong key makes the client throw an ApiError with status 401', async () => {
    const from = sent.length;
    const err = await client('gw-not-a-real-key')
      .models.generateContent({ model: MODEL, contents: 'a cat', config: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1' } } })
      .then(
        () => assert.fail('the client did not throw'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    assert.equal(err.status, 401);
    assert.match(err.message, /invalid_api_key/);
    assert.equal(sent.length - from, 1, 'the client retried a 401');
  });

  describe('generateContentStream (:streamGenerateContent?alt=sse)', () => {
    type StreamParams = Parameters<GoogleGenAI['models']['generateContentStream']>[0];
    const params = (config: StreamParams['config'] = {}): StreamParams => ({
      model: MODEL,
      contents: 'a cat',
      config: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' }, ...config },
    });

    /** Every chunk the client yields, and the requests it made; on failure says what it had sent. */
    async function stream(ai: GoogleGenAI, p: StreamParams): Promise<{ chunks: GenerateContentResponse[]; requests: Sent[] }> {
      const from = sent.length;
      const chunks: GenerateContentResponse[] = [];
      try {
        for await (const chunk of await ai.models.generateContentStream(p)) chunks.push(chunk);
      } catch (err) {
        const last = sent
          .slice(from)
          .map((s) => `${s.method} ${s.url}\n${s.body.slice(0, 2000)}`)
          .join('\n');
        throw new Error(`the gateway refused the official client's stream: ${(err as Error).message}\nclient sent:\n${last}`, { cause: err });
      }
      return { chunks, requests: sent.slice(from) };
    }

    /** What generateContentStream throws (it must throw before yielding anything). */
    async function refusal(ai: GoogleGenAI, p: StreamParams): Promise<ApiError> {
      const err = await ai.models.generateContentStream(p).then(
        () => assert.fail('the client got a stream'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
      return err;
    }

    /** The token of an API key, for its ledger. */
    async function tokenOf(key: string): Promise<string> {
      const token = await h.store.findTokenByHash(hashKey(key));
      assert.ok(token);
      return token.id;
    }

    test('the chunks carry the text and a PNG of the asked shape; one request, to the streaming path with alt=sse', async () => {
      const { chunks, requests } = await stream(client(h.key), params({ imageConfig: { aspectRatio: '16:9', imageSize: '2K' } }));
      assert.ok(chunks.length >= 1, 'no chunk');
      const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
      assert.match(parts.map((p) => p.text ?? '').join(''), /Here is the image you asked for/);
      const images = parts.filter((p) => p.inlineData);
      assert.equal(images.length, 1, `image parts: ${JSON.stringify(parts).slice(0, 300)}`);
      assert.equal(images[0]!.inlineData!.mimeType, 'image/png');
      const size = pngSize(Buffer.from(images[0]!.inlineData!.data ?? '', 'base64'));
      assert.ok(size, 'the image part does not decode to a PNG');
      assert.equal(size.width * 9, size.height * 16, `${size.width}x${size.height} is not 16:9`);
      const last = chunks.at(-1)!;
      assert.equal(last.candidates?.[0]?.finishReason, 'STOP');
      assert.equal(last.modelVersion, MODEL);
      const u = last.usageMetadata;
      assert.ok(u?.totalTokenCount !== undefined && u.totalTokenCount === (u.promptTokenCount ?? 0) + (u.candidatesTokenCount ?? 0));

      assert.equal(requests.length, 1, 'the client made more than one request');
      const url = new URL(requests[0]!.url);
      assert.equal(url.pathname, `/v1beta/models/${MODEL}:streamGenerateContent`);
      assert.equal(url.searchParams.get('alt'), 'sse');
      assert.equal(requests[0]!.headers['x-goog-api-key'], h.key);
    });

    test('a streamed call is charged once, at the price of generateContent; a refused one is refunded', async () => {
      const key = await h.createKey({ quota: 10 });
      const token = await tokenOf(key);
      await stream(client(key), params({ imageConfig: { aspectRatio: '1:1', imageSize: '2K' } }));
      // 2K is 2 units (channels.yaml prices, alpha-*).
      assert.deepEqual(
        (await h.store.ledger(token, null, 10)).map((e) => [e.kind, e.amount]),
        [['debit', 2]],
      );

      h.sim.faults.length = 0;
      h.sim.faults.push('429');
      const err = await refusal(client(key), params());
      assert.equal(h.sim.faults.length, 0, 'the fault did not reach the upstream');
      assert.equal(err.status, 429);
      assert.match(err.message, /too_many_requests/);
      // The refund is written after the answer (src/quota/hold-endings.ts): written now.
      await h.gateway.holdEndings.flush();
      assert.deepEqual(await h.store.ledgerBalance(token), { used: 2, debit: 3, refund: 1, settle: 0 });
    });

    test("the vendor's chunks are relayed as they come: the first reaches the client while the vendor stalls; a mid-stream error chunk throws ApiError after it", async () => {
      // Stalled after its first chunk for a minute: only a relay gives the client that chunk now.
      const stalled = await client(h.key).models.generateContentStream({ ...params(), contents: 'a cat [sim:fault=stream-stall:60000]' });
      const it = stalled[Symbol.asyncIterator]();
      const first = await it.next();
      assert.equal(first.done, false);
      assert.equal(first.value?.candidates?.[0]?.finishReason, undefined, 'the first chunk is not the last');
      assert.ok((first.value?.candidates?.[0]?.content?.parts ?? []).some((p) => typeof p.text === 'string'));
      await it.return?.(undefined);

      const seen: GenerateContentResponse[] = [];
      const err = await (async () => {
        for await (const c of await client(h.key).models.generateContentStream({ ...params(), contents: 'a cat [sim:fault=stream-error]' })) seen.push(c);
      })().then(
        () => assert.fail('the stream ended without an error'),
        (e: unknown) => e,
      );
      assert.equal(seen.length, 1, 'the chunk before the error reached the client');
      assert.ok(err instanceof ApiError, String(err));
      assert.equal(err.status, 502);
    });

    test('a wrong key makes generateContentStream throw an ApiError with status 401, as generateContent does', async () => {
      const from = sent.length;
      const err = await refusal(client('gw-not-a-real-key'), params());
      assert.equal(err.status, 401);
      assert.match(err.message, /invalid_api_key/);
      assert.equal(sent.length - from, 1, 'the client retried a 401');
    });

    test('a body without imageConfig makes it throw an ApiError with status 400 naming the field', async () => {
      const err = await refusal(client(h.key), { model: MODEL, contents: 'a cat', config: { responseModalities: ['IMAGE'] } });
      assert.equal(err.status, 400);
      assert.match(err.message, /invalid_request/);
      assert.match(err.message, /generationConfig\.imageConfig/);
    });
  });
});
