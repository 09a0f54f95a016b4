/**
 * The frames a relayed stream writes (src/operations/sse-answer.ts): an event carrying a long
 * string (a base64 image) is written as bytes straight from the value, byte for byte the frame the
 * text form gives; an event name cannot start a second line.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sseFrame, sseFrameBytes } from '../../src/operations/sse-answer.js';

test('a long-string event is one Buffer equal to the text frame; a short one is the text itself', () => {
  const big = { type: 'image_generation.completed', b64_json: 'A'.repeat(200_000), note: 'é "quoted"\n' };
  const bytes = sseFrameBytes(big, 'image_generation.completed');
  assert.ok(Buffer.isBuffer(bytes));
  assert.deepEqual(bytes, Buffer.from(sseFrame(big, 'image_generation.completed'), 'utf8'));
  assert.equal(sseFrameBytes({ a: 1 }), 'data: {"a":1}\r\n\r\n');
  assert.equal(sseFrameBytes({ a: 1 }, 'x'), 'event: x\r\ndata: {"a":1}\r\n\r\n');
});

test('an event name with a line break stays one line', () => {
  assert.equal(sseFrame({}, 'a\r\ndata: injected'), 'event: a  data: injected\r\ndata: {}\r\n\r\n');
});
