/**
 * Which request-mapping failures are the client's (docs/client-api.md, "Errors"): a mapping that fails on the
 * values of a body the schema admitted is invalid_request with jsonata's words; a time-out, a
 * runaway recursion or a call of what is not a function stays internal_error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMapping } from '../../src/mapping/mapping.js';
import type { CompiledChannel } from '../../src/config/snapshot.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { clientInputError, mapRequest } from '../../src/pipeline/map-request.js';

const channel = { name: 'c', settings: {}, basePath: '' } as unknown as CompiledChannel;

/** The error a request mapping with this body expression gives for `body`, as the client would get it. */
async function failure(expr: string, body: unknown): Promise<GatewayError> {
  const m = { method: 'POST', path: compileMapping('"/x"', 't:1'), body: compileMapping(expr, 't:2') };
  const input = { body, params: {}, query: {}, model: 'm', public_model: 'm', channel: { name: 'c', settings: {} }, now: '' };
  try {
    await mapRequest(m as never, channel, input);
  } catch (err) {
    const e = clientInputError(err);
    assert.ok(e instanceof GatewayError);
    return e;
  }
  assert.fail(`${expr} did not fail`);
}

test('a value of a type or form the mapping cannot use is the client’s: invalid_request with jsonata’s words', async () => {
  const typed = await failure('{ "head": $substring(body.image, 0, 4) }', { image: true });
  assert.equal(typed.code, 'invalid_request');
  assert.match(
    typed.message,
    /^the request cannot be translated for the vendor: a value of the request has a type or form this model cannot take \(Argument 1 of function "substring"/,
  );
  assert.equal((await failure('{ "n": $number(body.seconds) }', { seconds: 'five' })).code, 'invalid_request', 'D3030');
  assert.equal((await failure('{ "n": body.a + 1 }', { a: 'x' })).code, 'invalid_request', 'T2001');
  assert.equal((await failure('{ "n": body.a < body.b }', { a: 'x', b: 1 })).code, 'invalid_request', 'T2009');
});

test('$error in a mapping is a refusal in the profile’s own words', async () => {
  const e = await failure('body.n > 4 ? $error("n: at most 4 images for this model") : {}', { n: 9 });
  assert.equal(e.code, 'invalid_request');
  assert.equal(e.message, 'the request cannot be translated for the vendor: n: at most 4 images for this model');
});

test('a time-out, runaway recursion or a call of what is not a function stays internal_error', async () => {
  assert.equal((await failure('($f := function($n) { $f($n + 1) + 1 }; $f(0))', {})).code, 'internal_error');
  assert.equal((await failure('{ "x": $nope(body) }', {})).code, 'internal_error');
  assert.equal((await failure('($loop := function($n) { $n > 1e9 ? $n : $loop($n + 1) }; $loop(0))', {})).code, 'internal_error');
});
