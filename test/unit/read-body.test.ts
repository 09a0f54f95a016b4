/**
 * readBody with a stand-in request whose chunks we choose: a declared body is read into one
 * Buffer of its declared size, and a body that ends short of its Content-Length or runs past it
 * comes out exactly as the chunk-collecting reader gave it (all the bytes sent, refused only past
 * the route's limit or the budget). Node's own parser never lets either happen on a real socket;
 * the reader must stay honest if it ever did.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { Admission } from '../../src/http/body-budget.js';
import { readBody } from '../../src/http/read-body.js';

const KB = 1024;

/** A request that sends `chunks` then ends (or aborts), with the given headers. */
function fakeRequest(headers: Record<string, string>, chunks: Buffer[], ending: 'end' | 'aborted' = 'end'): IncomingMessage {
  const req = Object.assign(new PassThrough(), { headers }) as unknown as IncomingMessage & PassThrough;
  setImmediate(() => {
    for (const c of chunks) req.write(c);
    if (ending === 'end') req.end();
    else req.emit('aborted');
  });
  return req;
}

/** `n` bytes, a different pattern per `seed` so misplaced bytes show. */
const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));

const split = (buf: Buffer, size: number) => Array.from({ length: Math.ceil(buf.length / size) }, (_, i) => buf.subarray(i * size, (i + 1) * size));

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err instanceof GatewayError ? err.code : String(err);
  }
}

test('a declared body, small or large, in any chunking, comes back byte for byte', async () => {
  for (const size of [0, 10, 64 * KB - 1, 64 * KB, 300 * KB + 7]) {
    for (const chunk of [1000, 16 * KB, 64 * KB]) {
      const body = bytes(size, size);
      const got = await readBody(fakeRequest({ 'content-length': String(size) }, split(body, chunk)), 1024 * KB);
      assert.ok(got.equals(body), `${size} bytes in chunks of ${chunk}`);
    }
  }
});

test('a body shorter than its Content-Length gives the bytes that came, as before', async () => {
  const body = bytes(100 * KB, 5);
  const got = await readBody(fakeRequest({ 'content-length': String(200 * KB) }, split(body, 16 * KB)), 1024 * KB);
  assert.ok(got.equals(body));
  assert.equal(got.length, 100 * KB);
});

test('a body longer than its Content-Length gives every byte that came, within the route limit, as before', async () => {
  const body = bytes(150 * KB + 3, 9);
  const got = await readBody(fakeRequest({ 'content-length': String(100 * KB) }, split(body, 7 * KB)), 1024 * KB);
  assert.ok(got.equals(body));
  // Past the route's limit it is refused while streaming, whatever was declared.
  assert.equal(await codeOf(readBody(fakeRequest({ 'content-length': String(100 * KB) }, split(bytes(300 * KB, 1), 16 * KB)), 200 * KB)), 'payload_too_large');
});

test('a declared length over the limit is refused before a byte is read; an undeclared body past it while streaming', async () => {
  assert.equal(await codeOf(readBody(fakeRequest({ 'content-length': String(200 * KB + 1) }, []), 200 * KB)), 'payload_too_large');
  assert.equal(await codeOf(readBody(fakeRequest({}, split(bytes(200 * KB + 1, 2), 16 * KB)), 200 * KB)), 'payload_too_large');
  const undeclared = bytes(200 * KB, 4);
  assert.ok((await readBody(fakeRequest({}, split(undeclared, 16 * KB)), 200 * KB)).equals(undeclared));
});

test('the budget sees every byte as it arrives, and its refusal stops the read; an abort is invalid_request', async () => {
  const seen: number[] = [];
  const admission: Admission = { cover: (total) => (seen.push(total), total > 100 * KB ? new GatewayError('server_busy', 'full') : null) };
  const body = bytes(160 * KB, 6);
  assert.equal(await codeOf(readBody(fakeRequest({ 'content-length': String(body.length) }, split(body, 32 * KB)), 1024 * KB, admission)), 'server_busy');
  assert.deepEqual(seen, [32 * KB, 64 * KB, 96 * KB, 128 * KB]);
  assert.equal(
    await codeOf(readBody(fakeRequest({ 'content-length': String(body.length) }, split(body, 32 * KB).slice(0, 2), 'aborted'), 1024 * KB)),
    'invalid_request',
  );
});
