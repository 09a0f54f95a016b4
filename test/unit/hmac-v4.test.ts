/**
 * The gamma-volc HMAC-SHA256 signer: a fixed vector recomputed here step by step with node:crypto (the
 * canonical request written out by hand), query encoding, and the round trip against the simulator's
 * own verifier, which must accept the signer's output and refuse any change to body, query, date or keys.
 * The signer signs what the official Volcengine SDK signs (the date header, and the body hash when there
 * is a body; never content-type): test/contract/volcengine-gamma.test.ts compares the two byte for byte.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { signHmacV4 } from '../../src/signers/hmac-v4.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-request.js';
import { refusalOf, verifyGammaSignature, type GammaKeys, type ReceivedRequest } from '../../src/sim/gamma-volc-auth.js';

const NOW = Date.UTC(2024, 0, 2, 3, 4, 5);
const KEYS: GammaKeys = { accessKey: 'AKTEST', secretKey: 'SKTEST', region: 'cn-north-1', service: 'cv' };
const OPTS = { ...KEYS, dateHeader: 'x-date', hashHeader: 'x-content-sha256', nowMs: NOW };
const BODY = '{"req_key":"gamma_t2i_v40","prompt":"a cat"}';

function request(over: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    method: 'POST',
    path: '/gamma/base/',
    query: { Action: 'CVSync2AsyncSubmitTask', Version: '2022-08-31' },
    headers: { 'content-type': 'application/json' },
    body: BODY,
    ...over,
  };
}

/** What the simulator receives for a signed request, serialised the way src/upstream/dispatch.ts does. */
function received(req: UpstreamRequest): ReceivedRequest {
  const q = new URLSearchParams(req.query).toString();
  return {
    method: req.method,
    target: q ? `${req.path}?${q}` : req.path,
    headers: { ...req.headers },
    body: typeof req.body === 'string' || req.body === null ? Buffer.from(req.body ?? '', 'utf8') : req.body,
  };
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const mac = (k: string | Buffer, s: string) => createHmac('sha256', k).update(s).digest();

test('a fixed vector, recomputed step by step', () => {
  const req = request();
  signHmacV4(req, OPTS);
  const bodyHash = sha(BODY);
  assert.equal(req.headers['x-date'], '20240102T030405Z');
  assert.equal(req.headers['x-content-sha256'], bodyHash);

  const canonical = [
    'POST',
    '/gamma/base/',
    'Action=CVSync2AsyncSubmitTask&Version=2022-08-31',
    `x-content-sha256:${bodyHash}`,
    'x-date:20240102T030405Z',
    '',
    'x-content-sha256;x-date',
    bodyHash,
  ].join('\n');
  const toSign = `HMAC-SHA256\n20240102T030405Z\n20240102/cn-north-1/cv/request\n${sha(canonical)}`;
  const kDate = mac('SKTEST', '20240102');
  const kRegion = mac(kDate, 'cn-north-1');
  const kService = mac(kRegion, 'cv');
  const kSigning = mac(kService, 'request');
  const signature = createHmac('sha256', kSigning).update(toSign).digest('hex');
  assert.equal(
    req.headers.authorization,
    `HMAC-SHA256 Credential=AKTEST/20240102/cn-north-1/cv/request, SignedHeaders=x-content-sha256;x-date, Signature=${signature}`,
  );
  assert.equal(Object.keys(req.headers).sort().join(','), 'authorization,content-type,x-content-sha256,x-date');
});

test('query keys and values are RFC 3986 encoded, sorted by the key as written; no body: no hash header, the empty string signed', () => {
  const req = request({ query: { 'b key': "x y*!'()", a: '1', Action: 'é', é: 'z' }, headers: {}, body: null, method: 'get' });
  signHmacV4(req, OPTS);
  const empty = sha('');
  assert.equal(req.headers['x-content-sha256'], undefined, 'as the SDK: the body hash is sent only with a body');
  // `é` sorts after `b key` as written, though its encoding `%C3%A9` would sort first.
  const canonical = `GET\n/gamma/base/\nAction=%C3%A9&a=1&b%20key=x%20y%2A%21%27%28%29&%C3%A9=z\nx-date:20240102T030405Z\n\nx-date\n${empty}`;
  const key = mac(mac(mac(mac('SKTEST', '20240102'), 'cn-north-1'), 'cv'), 'request');
  const signature = createHmac('sha256', key)
    .update(`HMAC-SHA256\n20240102T030405Z\n20240102/cn-north-1/cv/request\n${sha(canonical)}`)
    .digest('hex');
  assert.match(req.headers.authorization!, new RegExp(`SignedHeaders=x-date, Signature=${signature}$`));
  assert.deepEqual(verifyGammaSignature(received(req), KEYS, NOW), { ok: true });
});

test("content-type and the gateway's own headers are sent but not signed", () => {
  const req = request({
    headers: { 'content-type': 'application/json', 'x-request-id': 'r-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  });
  signHmacV4(req, OPTS);
  assert.match(req.headers.authorization!, /SignedHeaders=x-content-sha256;x-date, /);
  const seen = received(req);
  // Rewritten on the way (a proxy's own content type, a tracer's span): the signature still holds.
  const rewritten = {
    ...seen.headers,
    'content-type': 'application/json; charset=utf-8',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01',
  };
  assert.deepEqual(verifyGammaSignature({ ...seen, headers: rewritten }, KEYS, NOW), { ok: true });
});

test('the simulator verifier accepts the signer output (also re-signed, with a trimmed header, and with sim_fault added)', () => {
  const req = request({ headers: { 'Content-Type': ' application/json ', 'X-Date': 'stale' } });
  signHmacV4(req, { ...OPTS, nowMs: NOW - 60_000 });
  signHmacV4(req, OPTS);
  assert.equal(req.headers['x-date'], '20240102T030405Z');
  assert.equal(req.headers['X-Date'], undefined, 'a stale spelling is removed');
  const seen = received(req);
  const headers = Object.fromEntries(Object.entries(seen.headers).map(([k, v]) => [k.toLowerCase(), v]));
  assert.deepEqual(verifyGammaSignature({ ...seen, headers }, KEYS, NOW), { ok: true });
  assert.deepEqual(verifyGammaSignature({ ...seen, headers, target: `${seen.target}&sim_fault=500` }, KEYS, NOW), { ok: true });
  assert.deepEqual(verifyGammaSignature({ ...seen, headers }, KEYS, NOW + 14 * 60_000), { ok: true }, 'within 15 minutes');
});

test('an absolute URL path signs its path and its own query', () => {
  const req = request({ path: 'https://vendor.example/gamma/base/?Version=2022-08-31', query: { Action: 'CVSync2AsyncSubmitTask' } });
  signHmacV4(req, OPTS);
  const target = '/gamma/base/?Version=2022-08-31&Action=CVSync2AsyncSubmitTask';
  assert.deepEqual(verifyGammaSignature({ ...received(request()), headers: req.headers, target }, KEYS, NOW), { ok: true });
});

test('the verifier refuses a changed body, query, date, key or scope', () => {
  const req = request();
  signHmacV4(req, OPTS);
  const good = received(req);
  const reason = (r: ReceivedRequest, keys = KEYS, now = NOW) => {
    const c = verifyGammaSignature(r, keys, now);
    return c.ok ? 'ok' : c.reason;
  };
  assert.equal(reason(good), 'ok');
  assert.equal(reason({ ...good, body: Buffer.from(BODY.replace('cat', 'dog')) }), 'ContentSha256Mismatch');
  const forged = BODY.replace('cat', 'dog');
  assert.equal(reason({ ...good, body: Buffer.from(forged), headers: { ...good.headers, 'x-content-sha256': sha(forged) } }), 'SignatureDoesNotMatch');
  assert.equal(reason({ ...good, target: good.target.replace('2022-08-31', '2022-08-30') }), 'SignatureDoesNotMatch');
  assert.equal(reason({ ...good, target: `${good.target}&extra=1` }), 'SignatureDoesNotMatch');
  assert.equal(reason({ ...good, target: good.target.replace('/gamma/base/', '/other/') }), 'SignatureDoesNotMatch');
  assert.equal(reason({ ...good, headers: { ...good.headers, 'x-date': '20240102T030406Z' } }), 'SignatureDoesNotMatch');
  assert.equal(reason(good, { ...KEYS, secretKey: 'WRONG' }), 'SignatureDoesNotMatch');
  assert.equal(reason(good, { ...KEYS, accessKey: 'OTHER' }), 'InvalidAccessKey');
  assert.equal(reason(good, { ...KEYS, region: 'cn-east-2' }), 'InvalidCredentialScope');
  assert.equal(reason({ ...good, headers: { ...good.headers, 'x-date': '20240103T030405Z' } }, KEYS, Date.UTC(2024, 0, 3, 3, 4, 5)), 'InvalidCredentialScope');
  assert.equal(reason(good, KEYS, NOW + 16 * 60_000), 'RequestExpired');
  assert.equal(reason(good, KEYS, NOW - 16 * 60_000), 'RequestExpired');
  assert.equal(reason({ ...good, headers: { ...good.headers, 'x-date': '2024-01-02T03:04:05Z' } }), 'InvalidTimestamp');
  const { authorization, ...unsigned } = good.headers as Record<string, string>;
  assert.equal(reason({ ...good, headers: unsigned }), 'MissingAuthorization');
  assert.equal(reason({ ...good, headers: { ...unsigned, authorization: `Bearer ${authorization}` } }), 'InvalidAuthorization');
  const withCustom = authorization!.replace('SignedHeaders=x-content-sha256;x-date', 'SignedHeaders=x-content-sha256;x-custom;x-date');
  assert.equal(reason({ ...good, headers: { ...good.headers, authorization: withCustom } }), 'InvalidAuthorization', 'a signed header is missing');
  assert.equal(
    reason({ ...good, headers: { ...good.headers, authorization: withCustom, 'x-custom': 'v' } }),
    'SignatureDoesNotMatch',
    'a signed header counts',
  );
  const unsorted = authorization!.replace('x-content-sha256;x-date', 'x-date;x-content-sha256');
  assert.equal(reason({ ...good, headers: { ...good.headers, authorization: unsorted } }), 'InvalidAuthorization');
  const noDate = authorization!.replace('x-content-sha256;x-date', 'x-content-sha256');
  assert.equal(reason({ ...good, headers: { ...good.headers, authorization: noDate } }), 'InvalidAuthorization', 'x-date must be signed');
});

test("each refusal is answered with the real service's code, number and status (Volcengine's public error codes)", () => {
  const answer = (reason: string) => {
    const r = refusalOf({ ok: false, reason, detail: '', accessKey: 'AKX' });
    return [r.status, r.code, r.codeN ?? null];
  };
  assert.deepEqual(answer('SignatureDoesNotMatch'), [401, 'SignatureDoesNotMatch', 100010]);
  assert.deepEqual(answer('ContentSha256Mismatch'), [401, 'SignatureDoesNotMatch', 100010]);
  assert.deepEqual(answer('MissingAuthorization'), [401, 'MissingAuthenticationToken', 100003]);
  assert.deepEqual(answer('InvalidAccessKey'), [401, 'InvalidAccessKey', 100009]);
  assert.deepEqual(answer('RequestExpired'), [403, 'InvalidTimestamp', 100006]);
  assert.deepEqual(answer('InvalidTimestamp'), [403, 'InvalidTimestamp', 100006]);
  assert.deepEqual(answer('InvalidAuthorization'), [400, 'InvalidAuthorization', null]);
  assert.deepEqual(answer('InvalidCredentialScope'), [400, 'InvalidCredential', null]);
  assert.match(refusalOf({ ok: false, reason: 'InvalidAccessKey', detail: '', accessKey: 'AKX' }).message, /\[AKX\]/);
});
