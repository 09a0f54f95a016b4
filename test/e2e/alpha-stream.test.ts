/**
 * The streaming alpha route, `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, on the
 * wire (test/clients/google-client.test.ts drives it with the official client): the exact bytes of the
 * answer, the vendor's chunks relayed as Server-Sent Events framed as the Google API frames them; the
 * JSON errors it answers before any frame; and its requests in the metrics under their own route.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { pngSize } from '../../src/sim/png.js';
import { postJson, startHarness, type Harness } from '../helpers/harness.js';

const MODEL = 'alpha-3-pro-image-preview';
const STREAM = `/v1beta/models/${MODEL}:streamGenerateContent`;
const ADMIN_KEY = `stream-admin-${process.pid}`;

/** An answer as it came off the wire: the body's bytes untouched (chunked framing removed by node:http). */
interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function post(base: string, path: string, body: unknown, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const requestBody = (imageConfig: Record<string, string> = { aspectRatio: '3:4', imageSize: '1K' }) => ({
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig },
});

/** Asserts a JSON error answer of the route: status, catalogue code, content type, request id. */
function assertJsonError(a: RawAnswer, status: number, code: string): any {
  const text = a.body.toString('utf8');
  assert.equal(a.status, status, text.slice(0, 300));
  assert.match(String(a.headers['content-type']), /^application\/json/, 'an error before the first frame is JSON, not an event stream');
  assert.ok(a.headers['x-request-id'], 'x-request-id on the error');
  const json = JSON.parse(text);
  assert.equal(json.error?.code ?? json.code, code, text.slice(0, 300));
  return json;
}

describe('POST /v1beta/models/{model}:streamGenerateContent?alt=sse on the wire', () => {
  let h: Harness;
  let auth: Record<string, string>;

  before(async () => {
    h = await startHarness({ adminKey: ADMIN_KEY });
    auth = { authorization: `Bearer ${h.key}` };
  });
  after(() => h.close());

  test("the vendor's chunks, each `data: <json>\\r\\n\\r\\n`, as text/event-stream of undeclared length; joined, they are what generateContent answers", async () => {
    const streams = h.sim.stats.requests;
    const a = await post(h.url, `${STREAM}?alt=sse`, requestBody(), { ...auth, 'x-request-id': 'stream-bytes-1' });
    const text = a.body.toString('utf8');
    assert.equal(a.status, 200, text.slice(0, 300));
    assert.equal(h.sim.stats.requests, streams + 1, 'one vendor call');
    assert.equal(a.headers['content-type'], 'text/event-stream');
    // A stream: its length is not declared up front, the end of the stream ends it (no `[DONE]`).
    assert.equal(a.headers['content-length'], undefined);
    assert.equal(a.headers['transfer-encoding'], 'chunked');
    assert.equal(a.headers['x-request-id'], 'stream-bytes-1');
    assert.match(text, /^(data: \{[^\r\n]*\}\r\n\r\n)+$/, `not data frames: ${JSON.stringify(text.slice(0, 100))} … ${JSON.stringify(text.slice(-20))}`);
    const frames = text
      .split('\r\n\r\n')
      .slice(0, -1)
      .map((f) => JSON.parse(f.slice('data: '.length)));
    // The simulator streams the text in two pieces, then the image: relayed as they are, not joined.
    assert.equal(frames.length, 3, `${frames.length} frames`);
    const last = frames.at(-1);
    for (const f of frames.slice(0, -1)) assert.equal(f.candidates[0].finishReason, undefined, 'only the last chunk finishes');
    assert.equal(last.candidates[0].finishReason, 'STOP');

    const plain = await postJson(h.url, `/v1beta/models/${MODEL}:generateContent`, requestBody(), auth);
    assert.equal(plain.status, 200, plain.text.slice(0, 300));
    // The same normalisation: the last chunk has the fields and the whole usage of generateContent's answer.
    assert.deepEqual(Object.keys(last).sort(), Object.keys(plain.json).sort());
    assert.deepEqual(last.usageMetadata, plain.json.usageMetadata);
    for (const f of frames) assert.equal(f.modelVersion, MODEL);
    const parts = frames.flatMap((f) => f.candidates[0].content.parts);
    const joined = parts
      .filter((p) => typeof p.text === 'string')
      .map((p) => p.text)
      .join('');
    assert.equal(joined, plain.json.candidates[0].content.parts[0].text);
    const imagePart = parts.find((p) => p.inlineData);
    assert.equal(imagePart.inlineData.mimeType, 'image/png');
    const size = pngSize(Buffer.from(imagePart.inlineData.data, 'base64'));
    assert.ok(size, 'the stream carries no PNG');
    assert.equal(size.width * 4, size.height * 3, `${size.width}x${size.height} is not 3:4`);
  });

  test('a blocked prompt is one frame (a 200 with promptFeedback, as generateContent answers it)', async () => {
    const body = requestBody();
    body.contents[0]!.parts[0]!.text = 'a lighthouse [sim:block]';
    const a = await post(h.url, `${STREAM}?alt=sse`, body, auth);
    assert.equal(a.status, 200);
    const text = a.body.toString('utf8');
    assert.match(text, /^data: [^\r\n]+\r\n\r\n$/);
    const frame = JSON.parse(text.slice(6, -4));
    assert.equal(frame.promptFeedback.blockReason, 'PROHIBITED_CONTENT');
    assert.equal(frame.candidates, undefined);
  });

  test('alt=sse picks the route: without it, or with another value, 400 invalid_request naming alt', async () => {
    for (const query of ['', '?alt=json']) {
      const calls = h.sim.stats.requests;
      const json = assertJsonError(await post(h.url, `${STREAM}${query}`, requestBody(), auth), 400, 'invalid_request');
      assert.equal(json.error.param, 'alt');
      assert.match(json.error.message, /"sse"/);
      assert.equal(h.sim.stats.requests, calls, 'no vendor call');
    }
  });

  test('errors before the first frame are the route’s JSON errors with their status', async () => {
    const path = `${STREAM}?alt=sse`;
    assertJsonError(await post(h.url, path, requestBody(), {}), 401, 'invalid_api_key');
    assertJsonError(await post(h.url, path, requestBody(), { authorization: 'Bearer gw-not-a-real-key' }), 401, 'invalid_api_key');
    const bad = assertJsonError(await post(h.url, path, requestBody({ aspectRatio: '5:4' }), auth), 400, 'invalid_request');
    assert.match(bad.error.param, /aspectRatio/);
    assertJsonError(await post(h.url, '/v1beta/models/alpha-9:streamGenerateContent?alt=sse', requestBody(), auth), 404, 'model_not_found');
    h.sim.faults.length = 0;
    h.sim.faults.push('503');
    assertJsonError(await post(h.url, path, requestBody(), auth), 503, 'upstream_unavailable');
    assert.equal(h.sim.faults.length, 0, 'the fault did not reach the upstream');
    // The client's key as ?key= (the route's other key source) is taken, as on generateContent.
    const byQuery = await post(h.url, `${path}&key=${encodeURIComponent(h.key)}`, requestBody(), {});
    assert.equal(byQuery.status, 200, byQuery.body.toString('utf8').slice(0, 300));
  });

  test('its requests are counted in the metrics under the route’s own id and status', async () => {
    const count = async (status: string) => {
      const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      assert.equal(res.status, 200);
      const line = (await res.text())
        .split('\n')
        .find((l) => l.startsWith('gateway_requests_total{') && l.includes('route="alpha-stream-generate-content"') && l.includes(`status="${status}"`));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const [ok, refused] = [await count('200'), await count('400')];
    assert.equal((await post(h.url, `${STREAM}?alt=sse`, requestBody(), auth)).status, 200);
    assert.equal((await post(h.url, `${STREAM}?alt=sse`, requestBody({ aspectRatio: '5:4' }), auth)).status, 400);
    assert.equal(await count('200'), ok + 1);
    assert.equal(await count('400'), refused + 1);
  });
});
