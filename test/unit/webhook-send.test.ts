/**
 * One webhook attempt (src/webhooks/send.ts) against local receivers: attempts to one receiver are
 * never queued behind each other, and once a status and headers arrived in time that status is the
 * answer, whatever the body does afterwards.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { ANSWER_BODY_MS, Sender } from '../../src/webhooks/send.js';
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

test('a 2xx whose headers came in time is the answer: a body that drips past the timeout, or breaks, changes nothing and holds the attempt briefly', async () => {
  const dripping = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/breaks') {
        res.writeHead(202, { 'content-length': '1000' });
        res.write('partial');
        setTimeout(() => res.destroy(), 50);
        return;
      }
      // Headers at once, then a byte every 100 ms, for far longer than the timeout.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      dripping.add(res);
      const drip = setInterval(() => res.write('.'), 100);
      res.on('close', () => clearInterval(drip));
    });
  });
  const base = await listenLocal(server);
  const timeoutMs = 3000;
  const sender = new Sender(timeoutMs, true);
  try {
    let started = Date.now();
    assert.deepEqual(await sender.post(`${base}/drips`, HEADERS, '{}'), { status: 200, error: null });
    const took = Date.now() - started;
    assert.ok(took >= ANSWER_BODY_MS - 50 && took < ANSWER_BODY_MS + 1000, `the body read for about ${ANSWER_BODY_MS} ms, not the timeout (${took} ms)`);
    started = Date.now();
    assert.deepEqual(await sender.post(`${base}/breaks`, HEADERS, '{}'), { status: 202, error: null });
    assert.ok(Date.now() - started < ANSWER_BODY_MS, 'a broken body ends the read at once');
  } finally {
    for (const res of dripping) res.destroy();
    await closeLocal(server);
    await sender.close();
  }
});
