/**
 * One webhook attempt (src/webhooks/send.ts) against local receivers: attempts to one receiver are
 * never queued behind each other.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { Sender } from '../../src/webhooks/send.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

const HEADERS = { 'webhook-id': 'msg_test', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' };

test('webhook attempts to one receiver are all sent at once, none waiting for a connection behind the others', async () => {
  // A receiver that reads every request and never answers.
  const seen: string[] = [];
  const server = createServer((req) => {
    req.resume();
    req.on('end', () => seen.push(String(req.headers['webhook-id'])));
  });
  const base = await listenLocal(server);
  const sender = new Sender(800, true);
  try {
    const n = 20;
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: n }, (_, i) => sender.post(`${base}/h`, { ...HEADERS, 'webhook-id': `msg_${i}` }, '{}')));
    const took = Date.now() - started;
    assert.equal(seen.length, n, `every attempt reached the receiver (${seen.length} of ${n}): none timed out in a queue`);
    for (const r of results) assert.deepEqual(r, { status: null, error: 'no answer within 800 ms' });
    assert.ok(took < 800 * 2, `all timed out together, not one after another (${took} ms)`);
  } finally {
    await closeLocal(server);
    await sender.close();
  }
});
