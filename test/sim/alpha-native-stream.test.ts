/**
 * The alpha-native simulator's `:streamGenerateContent?alt=sse` over real HTTP, read raw: the
 * mid-stream faults (stall, cut, the vendor's error chunk, a malformed frame), each after the first
 * chunk; slow-body still stalling a stream before its second half; stream faults ignored where
 * nothing is streamed (generateContent, the JSON-array form); a client that leaves stops the
 * stream. @google/genai reads the same streams in test/contract/genai-alpha.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAlphaSimulator } from '../../src/sim/alpha-native.js';
import type { Simulator } from '../../src/sim/http.js';
import { until } from '../helpers/until.js';

const MODEL = 'alpha-3-pro-image-preview';
const BODY = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:1' } },
});

/** One frame's data as it came, and when. */
interface Chunk {
  data: string;
  at: number;
}

/** Reads `data:` frames (CRLF CRLF ended) as they come into `out`; throws when the body fails or ends inside a frame. */
async function readChunks(res: Response, out: Chunk[] = [], onChunk?: () => void): Promise<Chunk[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    for (let i = buf.indexOf('\r\n\r\n'); i >= 0; i = buf.indexOf('\r\n\r\n')) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 4);
      assert.match(frame, /^data: /);
      out.push({ data: frame.slice(6), at: performance.now() });
      onChunk?.();
    }
  }
  if (buf !== '') throw new Error(`the stream ended inside a frame: ${buf.slice(0, 80)}`);
  return out;
}

describe('alpha-native simulator: streamGenerateContent faults', () => {
  let sim: Simulator;
  const call = (method: string, fault: string, query = '?alt=sse', signal?: AbortSignal, on = sim) =>
    fetch(`${on.url}/v1beta/models/${MODEL}:${method}${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': on.secrets.key!, ...(fault ? { 'x-sim-fault': fault } : {}) },
      body: BODY,
      signal,
    });
  let whole: number;

  before(async () => {
    sim = await startAlphaSimulator();
    whole = (await readChunks(await call('streamGenerateContent', ''))).length;
    assert.ok(whole >= 3, `a stream of ${whole} chunks`);
  });
  after(() => sim.close());

  test("stream-error: the first chunk, then the vendor's error chunk (a google.rpc.Status of 500), then the end", async () => {
    const res = await call('streamGenerateContent', 'stream-error');
    assert.equal(res.status, 200);
    const chunks = await readChunks(res);
    assert.equal(chunks.length, 2);
    assert.ok(JSON.parse(chunks[0]!.data).candidates, 'the first chunk is an answer chunk');
    assert.deepEqual(JSON.parse(chunks[1]!.data), { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } });
  });

  test('stream-malformed: the first chunk, then one frame whose data is not JSON, then the end', async () => {
    const chunks = await readChunks(await call('streamGenerateContent', 'stream-malformed'));
    assert.equal(chunks.length, 2);
    JSON.parse(chunks[0]!.data);
    assert.throws(() => JSON.parse(chunks[1]!.data), SyntaxError);
  });

  test('stream-cut: the connection is destroyed after the first chunk', async () => {
    const got: Chunk[] = [];
    await assert.rejects(readChunks(await call('streamGenerateContent', 'stream-cut'), got));
    assert.equal(got.length, 1);
  });

  test('stream-stall:MS: the first chunk at once, the rest MS later', async () => {
    const chunks = await readChunks(await call('streamGenerateContent', 'stream-stall:300'));
    assert.equal(chunks.length, whole, 'then the whole stream');
    const stalled = chunks[1]!.at - chunks[0]!.at;
    assert.ok(stalled >= 250, `the second chunk came ${Math.round(stalled)} ms after the first`);
  });

  test('slow-body:MS still stalls a stream before its second half', async () => {
    const chunks = await readChunks(await call('streamGenerateContent', 'slow-body:300'));
    assert.equal(chunks.length, whole);
    const half = Math.ceil(whole / 2);
    const stalled = chunks[half]!.at - chunks[half - 1]!.at;
    assert.ok(stalled >= 250, `chunk ${half} came ${Math.round(stalled)} ms after the one before`);
  });

  test('stream faults are ignored where nothing is streamed: generateContent, and the JSON-array form', async () => {
    for (const fault of ['stream-error', 'stream-cut', 'stream-malformed', 'stream-stall:60000']) {
      const plain = await call('generateContent', fault, '');
      assert.equal(plain.status, 200, fault);
      assert.ok(((await plain.json()) as { candidates?: unknown[] }).candidates?.length, fault);
      const array = await call('streamGenerateContent', fault, '');
      assert.equal(array.status, 200, fault);
      assert.equal(((await array.json()) as unknown[]).length, whole, fault);
    }
  });

  test('a status fault comes before the stream, as JSON with its status', async () => {
    const res = await call('streamGenerateContent', '503');
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { error: { status: string } }).error.status, 'UNAVAILABLE');
  });

  test('a client that goes away stops the stream, in the wait between chunks and in a stall', async () => {
    const paced = await startAlphaSimulator({ streamGapMs: 60_000 });
    try {
      for (const fault of ['', 'stream-stall:60000']) {
        const before = { events: paced.stats.events ?? 0, abandoned: paced.stats.abandoned ?? 0 };
        const abort = new AbortController();
        const got: Chunk[] = [];
        await assert.rejects(
          readChunks(await call('streamGenerateContent', fault, '?alt=sse', abort.signal, paced), got, () => abort.abort()),
          (e: Error) => e.name === 'AbortError',
        );
        assert.equal(got.length, 1);
        // Well under the 60 s wait: the simulator stops when the client leaves.
        await until('the simulator to notice the client left', () => paced.stats.abandoned === before.abandoned + 1, 5_000);
        assert.equal((paced.stats.events ?? 0) - before.events, 1, 'nothing more was written');
      }
    } finally {
      await paced.close();
    }
  });
});
