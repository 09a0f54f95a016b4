/**
 * The multipart reader under broken bodies: every named case of test/fuzz/multipart-cases.ts and
 * random damage to a valid body either parses or is refused with a GatewayError invalid_request;
 * nothing escapes as an uncaught exception (a body that ends inside a file part used to raise an
 * unhandled 'error' on busboy's file stream, which killed the process).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { parseMultipart } from '../../src/http/read-multipart.js';
import { brokenMultipartArb, multipartCases, validMultipart } from '../fuzz/multipart-cases.js';

/** Parses, and also waits a turn of the event loop so a late stream error would surface here. */
async function outcome(body: Buffer, contentType: string): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; err: unknown }> {
  try {
    const value = await parseMultipart(body, contentType, 8);
    await new Promise((r) => setImmediate(r));
    return { ok: true, value };
  } catch (err) {
    await new Promise((r) => setImmediate(r));
    return { ok: false, err };
  }
}

test('a valid body parses into fields and a data URI', async () => {
  const r = await outcome(Buffer.from(validMultipart('zeta-image-1')), 'multipart/form-data; boundary=XB');
  assert.ok(r.ok);
  assert.deepEqual(r.value, { model: 'zeta-image-1', prompt: 'a lighthouse', image: `data:image/png;base64,${Buffer.from('PNGDATA').toString('base64')}` });
});

test('a body that ends inside a file part is refused invalid_request, not thrown from a stream', async () => {
  const body = Buffer.from('--XB\r\ncontent-disposition: form-data; name="image"; filename="a.png"\r\ncontent-type: image/png\r\n\r\nPNGDATA');
  const r = await outcome(body, 'multipart/form-data; boundary=XB');
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.err instanceof GatewayError && r.err.code === 'invalid_request', String(!r.ok && r.err));
  assert.match((r as { err: GatewayError }).err.message, /malformed|unexpected end/i);
});

for (const c of multipartCases('zeta-image-1')) {
  test(`broken multipart, ${c.name}: parsed or refused invalid_request`, async () => {
    const r = await outcome(c.body, c.contentType);
    if (!r.ok) {
      assert.ok(r.err instanceof GatewayError, `${c.name}: ${String(r.err)}`);
      assert.equal(r.err.code, 'invalid_request', c.name);
    } else {
      // What parses is a plain object with no prototype pollution.
      assert.equal(Object.getPrototypeOf(r.value), Object.prototype, c.name);
      assert.equal(({} as Record<string, unknown>).polluted, undefined, c.name);
    }
  });
}

test('random damage to a valid body: parsed or refused invalid_request, never thrown', async () => {
  await fc.assert(
    fc.asyncProperty(brokenMultipartArb('zeta-image-1'), async (c) => {
      const r = await outcome(c.body, c.contentType);
      if (!r.ok) assert.ok(r.err instanceof GatewayError && r.err.code === 'invalid_request', `${c.name}: ${String(r.err)}`);
    }),
    { numRuns: 400 },
  );
});

test('more parts than the limit are refused, not silently dropped', async () => {
  const body = Buffer.from(Array.from({ length: 200 }, (_, i) => `--XB\r\ncontent-disposition: form-data; name="f${i}"\r\n\r\nv\r\n`).join('') + '--XB--\r\n');
  const r = await outcome(body, 'multipart/form-data; boundary=XB');
  assert.equal(r.ok, false);
  assert.match((r as { err: GatewayError }).err.message, /at most \d+ (parts|fields)/);
});
