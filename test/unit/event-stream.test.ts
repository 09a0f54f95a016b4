/**
 * The vendor event parser (src/upstream/event-stream.ts): Server-Sent Events as the WHATWG standard
 * parses them and newline-delimited JSON, whatever the chunks the bytes arrive in, and bounded per
 * event.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { EventReader, type EventFraming, type VendorEvent } from '../../src/upstream/event-stream.js';

async function* chunked(bytes: Buffer, cuts: readonly number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    yield bytes.subarray(at, c);
    at = c;
  }
}

async function parse(text: string, framing: EventFraming = 'sse', cuts: readonly number[] = [], maxBytes = 1 << 20): Promise<VendorEvent[]> {
  const out: VendorEvent[] = [];
  const reader = new EventReader(chunked(Buffer.from(text, 'utf8'), cuts), framing, maxBytes);
  for (let e = await reader.next(); e !== null; e = await reader.next()) out.push(e);
  return out;
}

describe('EventReader', () => {
  const text =
    ': a comment\r\n' +
    'event: image_generation.partial_image\r\ndata: {"a":1}\r\n\r\n' +
    'data: {"b":\ndata: 2}\n\n' +
    'id: 7\rretry: 10\revent: done\rdata:{"c":"é"}\r\r' +
    'event: lonely\n\n' +
    'data: {"cut":';
  const expected: VendorEvent[] = [
    { event: 'image_generation.partial_image', data: '{"a":1}' },
    { event: null, data: '{"b":\n2}' },
    { event: 'done', data: '{"c":"é"}' },
  ];

  test('SSE: named and unnamed events, several data lines joined, CRLF, LF and CR line ends, comments and other fields ignored, an event without data and an unfinished one dropped', async () => {
    assert.deepEqual(await parse(text), expected);
  });

  test('the same events whatever the chunks: every cut of the bytes in two, and every byte alone', async () => {
    const bytes = Buffer.from(text, 'utf8');
    for (let cut = 1; cut < bytes.length; cut++) assert.deepEqual(await parse(text, 'sse', [cut]), expected, `cut at ${cut}`);
    assert.deepEqual(
      await parse(
        text,
        'sse',
        Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      ),
      expected,
    );
  });

  test('NDJSON: one event per non-blank line, the last without its line end', async () => {
    assert.deepEqual(await parse('{"a":1}\r\n\n{"b":2}\n{"c":3}', 'ndjson', [3, 9]), [
      { event: null, data: '{"a":1}' },
      { event: null, data: '{"b":2}' },
      { event: null, data: '{"c":3}' },
    ]);
  });

  test('an event larger than the limit is bad_response, in one line or in many', async () => {
    const big = `data: ${'x'.repeat(100)}\n\n`;
    await assert.rejects(
      parse(big, 'sse', [10, 50], 64),
      (e: unknown) => e instanceof GatewayError && e.code === 'bad_response' && /larger than 64/.test(e.message),
    );
    const many = `${'data: xxxxxxxxxx\n'.repeat(10)}\n`;
    await assert.rejects(parse(many, 'sse', [], 64), (e: unknown) => e instanceof GatewayError && /larger than 64/.test(e.message));
    // Within the limit, the same event passes.
    assert.equal((await parse(many, 'sse', [], 1024)).length, 1);
  });
});
