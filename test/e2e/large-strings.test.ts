/**
 * A long base64 string through a real gateway, both ways (src/json/): the client's inline image
 * (well over the 64 KB at which a literal is decoded on its own and spliced into the vendor body)
 * reaches the vendor as exactly the bytes JSON.stringify would have written, and a vendor answer
 * carrying a long inline image reaches the client unchanged. The vendor here is a plain HTTP
 * server that records the bytes it gets and answers in the alpha protocol.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { makePng } from '../../src/sim/png.js';
import { listenLocal } from '../helpers/local-server.js';
import { postJson, startHarness, type Harness } from '../helpers/harness.js';

const MODEL = 'alpha-3-pro-image-preview';
// A real PNG header (the image rules read it) followed by bytes that do not compress: ~400 KB of base64.
const SENT = Buffer.concat([makePng(640, 480, 7), randomBytes(300_000)]).toString('base64');
const ANSWERED = Buffer.concat([makePng(1024, 1024, 9), randomBytes(200_000)]).toString('base64');

const received: Buffer[] = [];
let vendor: Server;
let h: Harness;

before(async () => {
  vendor = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(chunks));
      const answer = {
        candidates: [
          { content: { role: 'model', parts: [{ text: 'here' }, { inlineData: { mimeType: 'image/png', data: ANSWERED } }] }, finishReason: 'STOP', index: 0 },
        ],
        usageMetadata: { promptTokenCount: 300, candidatesTokenCount: 1290, totalTokenCount: 1590 },
        modelVersion: MODEL,
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  h = await startHarness({ upstreamUrl: await listenLocal(vendor) });
});
after(async () => {
  await h?.close();
  await new Promise((r) => vendor.close(r));
});

test('a long inline image goes to the vendor byte for byte as JSON.stringify writes it, and a long one comes back unchanged', async () => {
  const body = {
    contents: [{ role: 'user', parts: [{ text: 'make it blue' }, { inlineData: { mimeType: 'image/png', data: SENT } }] }],
    generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '4:3' } },
  };
  const r = await postJson(h.url, `/v1beta/models/${MODEL}:generateContent`, body, { authorization: `Bearer ${h.key}` });
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.equal(received.length, 1);
  const raw = received[0]!;
  const sent = JSON.parse(raw.toString('utf8')) as { contents: { parts: { inlineData?: { data: string } }[] }[] };
  assert.equal(sent.contents[0]!.parts[1]!.inlineData!.data, SENT, 'the image arrived whole');
  assert.ok(raw.equals(Buffer.from(JSON.stringify(sent), 'utf8')), 'the vendor body is exactly the JSON.stringify bytes of what it holds');
  const parts = (r.json as { candidates: { content: { parts: { inlineData?: { data: string } }[] } }[] }).candidates[0]!.content.parts;
  assert.equal(parts.find((p) => p.inlineData)?.inlineData?.data, ANSWERED, "the vendor's image reached the client unchanged");
});
