/**
 * Contract: the official Volcengine SDK (`@volcengine/openapi` 1.36.2, its `Signer` and its `Service`
 * request path) as the reference for gamma-volc (DESIGN.md, "The vendors are the reference").
 *
 * 1. The gateway's hmac-v4 signer, configured by the gamma-volc profile's own `auth` block, signs
 *    fixed requests (fixed times; several methods, paths, queries and bodies) exactly as the SDK's
 *    Signer does: the same X-Date, X-Content-Sha256, SignedHeaders and Authorization, byte for byte.
 * 2. The SDK pointed straight at the gamma-volc simulator: what it signs is accepted (also with a
 *    header of its own, which it signs); a bad signature gets the real service's answer, HTTP 401 and
 *    `ResponseMetadata.Error {Code: "SignatureDoesNotMatch", CodeN: 100010}` (the SDK's
 *    OpenApiResponse type; Volcengine's public error-code table gives the code, number and status).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Service, Signer } from '@volcengine/openapi';
import type { OpenApiResponse } from '@volcengine/openapi/lib/base/types.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { compileAuth, signRequest } from '../../src/signers/registry.js';
import type { SignableRequest } from '../../src/signers/signer.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import type { Simulator } from '../../src/sim/http.js';

const REGION = 'cn-north-1';
const SERVICE = 'cv';
const VERSION = '2022-08-31';
const SUBMIT = 'CVSync2AsyncSubmitTask';
const RESULT = 'CVSync2AsyncGetResult';

/** The gamma-volc profile's `auth` block as shipped, so the comparison covers its header names too. */
function profileAuth(): { type: string } {
  const file = parse(readFileSync(join(PROJECT_ROOT, 'channels.d/gamma-volc.yaml'), 'utf8')) as { profiles: Record<string, { auth: { type: string } }> };
  return file.profiles['gamma-volc']!.auth;
}

/** A request as both signers are given it: what the gateway's mapping builds for the vendor. */
interface Case {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly contentType?: string;
  readonly body: string | null;
}

const CASES: readonly Case[] = [
  {
    name: 'submit: POST / with Action and Version, a JSON body',
    method: 'POST',
    path: '/',
    query: { Action: SUBMIT, Version: VERSION },
    contentType: 'application/json',
    body: JSON.stringify({ req_key: 'gamma_t2i_v45', prompt: 'a red kite', width: 2048, height: 2048 }),
  },
  {
    name: "GetResult under a channel base path, the SDK's own JSON content type",
    method: 'POST',
    path: '/gamma/base/',
    query: { Version: VERSION, Action: RESULT },
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify({ req_key: 'gamma_t2i_v45', task_id: '7392616336519610409', req_json: '{"return_url":true}' }),
  },
  {
    name: "GET without a body: no body-hash header, the empty string's hash signed; reserved and non-ASCII query text",
    method: 'GET',
    path: '/files/a',
    query: { Action: 'ListThings', Version: VERSION, 'b key': "x y*!'()", é: 'ü ✓', z: '', Limit: '10' },
    body: null,
  },
  {
    name: 'PUT with a UTF-8 text body on an unreserved-character path',
    method: 'PUT',
    path: '/v2/things/abc-_.~',
    query: {},
    contentType: 'text/plain; charset=utf-8',
    body: 'héllo wörld ✓\n',
  },
  {
    name: 'lower-case method; keys sorted as written (upper before lower, space and - before letters)',
    method: 'post',
    path: '/',
    query: { a: '1', B: '2', 'a-': '3', 'a b': '4', _x: '5' },
    contentType: 'application/json',
    body: '{}',
  },
];

// A moment with milliseconds (dropped by both) just before a day boundary, and a leap day.
const TIMES = [Date.UTC(2026, 10, 28, 23, 59, 59, 999), Date.UTC(2024, 1, 29, 0, 0, 0)];
const AK = 'AKLTcontract0123';
const SK = 'c2VjcmV0LWtleS1mb3ItdGVzdHM=';

const lowerKeys = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), String(v)]));
const signedHeadersOf = (authorization: string | undefined) => /SignedHeaders=([^,]+),/.exec(authorization ?? '')?.[1];

/** The headers the official Signer adds to `c` at `nowMs` (names in lower case), content-type included as given. */
function officialHeaders(c: Case, nowMs: number): Record<string, string> {
  const req = {
    method: c.method,
    region: REGION,
    pathname: c.path,
    params: { ...c.query },
    headers: c.contentType ? { 'content-type': c.contentType } : {},
    body: c.body ?? undefined,
  };
  const signer = new Signer(req, SERVICE);
  signer.addAuthorization({ accessKeyId: AK, secretKey: SK }, new Date(nowMs));
  return lowerKeys(signer.request.headers as Record<string, unknown>);
}

/** The headers the gateway sends for `c` at `nowMs`, signed by the gamma-volc profile's auth block; `extra` are headers already on the request. */
function gatewayHeaders(c: Case, nowMs: number, extra: Record<string, string> = {}): Record<string, string> {
  const req: SignableRequest = {
    method: c.method,
    path: c.path,
    query: { ...c.query },
    headers: { ...(c.contentType ? { 'content-type': c.contentType } : {}), ...extra },
    body: c.body,
  };
  const secrets: Record<string, string> = { access_key: AK, secret_key: SK };
  signRequest(compileAuth(profileAuth()), req, { secret: (n) => secrets[n] ?? '', cacheKey: {}, nowMs });
  return lowerKeys(req.headers);
}

describe("the gateway's hmac-v4 signer against the official Volcengine Signer", () => {
  for (const c of CASES) {
    test(c.name, () => {
      for (const at of TIMES) {
        const official = officialHeaders(c, at);
        const ours = gatewayHeaders(c, at);
        const when = new Date(at).toISOString();
        assert.equal(ours['x-date'], official['x-date'], `X-Date at ${when}`);
        assert.equal(ours['x-content-sha256'], official['x-content-sha256'], `X-Content-Sha256 at ${when}`);
        assert.equal(signedHeadersOf(ours.authorization), signedHeadersOf(official.authorization), `SignedHeaders at ${when}`);
        assert.equal(ours.authorization, official.authorization, `Authorization at ${when}`);
        assert.deepEqual(Object.keys(ours).sort(), Object.keys(official).sort(), `the same headers are sent at ${when}`);
      }
    });
  }

  test("the gateway's own request id and trace headers are not signed: the signature stays the SDK's for the vendor call", () => {
    // A proxy or tracer may rewrite traceparent on the way; signing it would break the signature there.
    const c = CASES[0]!;
    const official = officialHeaders(c, TIMES[0]!);
    const ours = gatewayHeaders(c, TIMES[0]!, { 'x-request-id': 'req-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    assert.equal(signedHeadersOf(ours.authorization), 'x-content-sha256;x-date');
    assert.equal(ours.authorization, official.authorization);
  });
});

/** A call made the way the SDK's Service makes it, but read raw, so the HTTP status shows too (the SDK's fetch returns the body only). */
async function rawSdkCall(
  sim: Simulator,
  opts: { action?: string; body?: object; secretKey?: string; accessKey?: string; at?: Date; headers?: Record<string, string>; unsigned?: boolean },
) {
  const req = {
    method: 'POST',
    region: REGION,
    pathname: '/',
    params: { Action: opts.action ?? SUBMIT, Version: VERSION },
    headers: { 'content-type': 'application/json; charset=utf-8', ...opts.headers } as Record<string, string>,
    body: JSON.stringify(opts.body ?? { req_key: 'gamma_t2i_v45', prompt: 'a red kite', width: 1024, height: 1024 }),
  };
  const signer = new Signer(req, SERVICE);
  if (!opts.unsigned)
    signer.addAuthorization({ accessKeyId: opts.accessKey ?? sim.secrets.access_key!, secretKey: opts.secretKey ?? sim.secrets.secret_key! }, opts.at);
  const res = await fetch(`${sim.url}/?${new URLSearchParams(signer.request.params as Record<string, string>)}`, {
    method: 'POST',
    headers: signer.request.headers as Record<string, string>,
    body: req.body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Asserts the real service's gateway-level refusal: only `ResponseMetadata`, with the call's Action, Version, Service and Region. */
function assertRefusal(body: any, code: string, codeN: number | undefined, message: RegExp): void {
  const r = body as OpenApiResponse<unknown>;
  assert.deepEqual(Object.keys(body), ['ResponseMetadata'], `the vendor's CV envelope is not used for a refused signature: ${JSON.stringify(body)}`);
  const m = r.ResponseMetadata;
  assert.match(m.RequestId, /^\S+$/);
  assert.deepEqual([m.Action, m.Version, m.Service, m.Region], [SUBMIT, VERSION, SERVICE, REGION]);
  assert.equal(m.Error?.Code, code);
  assert.equal(m.Error?.CodeN, codeN);
  assert.match(m.Error?.Message ?? '', message);
}

describe('the official Volcengine client straight at the gamma-volc simulator', () => {
  let sim: Simulator;
  let service: (secretKey?: string) => Service;

  before(async () => {
    sim = await SIMULATORS['gamma-volc']!({ finishMs: 0 });
    service = (secretKey = sim.secrets.secret_key!) =>
      new Service({ host: new URL(sim.url).host, protocol: 'http:', region: REGION, serviceName: SERVICE, accessKeyId: sim.secrets.access_key!, secretKey });
  });
  after(() => sim.close());

  test("a submission and its GetResult made by the SDK's Service are accepted", async () => {
    const submit = service().createJSONAPI(SUBMIT, { Version: VERSION });
    const sub = (await submit({ req_key: 'gamma_t2i_v45', prompt: 'a red kite', width: 1024, height: 1024 })) as any;
    assert.equal(sub.code, 10000, JSON.stringify(sub));
    assert.match(sub.data.task_id, /^\S+$/);
    const result = service().createJSONAPI(RESULT, { Version: VERSION });
    const got = (await result({ req_key: 'gamma_t2i_v45', task_id: sub.data.task_id, req_json: '{"return_url":true}' })) as any;
    assert.equal(got.code, 10000, JSON.stringify(got));
    assert.equal(got.data.status, 'done');
    assert.equal(got.data.image_urls.length, 1);
    assert.equal(sim.tasks!.get(sub.data.task_id)!.model, 'gamma_t2i_v45');
  });

  test("a header of the caller's own, which the SDK signs (whitespace folded), is accepted", async () => {
    const r = await rawSdkCall(sim, { headers: { 'X-Custom-Trace': 'a   b' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.code, 10000);
  });

  test('a bad signature: HTTP 401 and ResponseMetadata.Error SignatureDoesNotMatch (100010), raw and through the SDK', async () => {
    const raw = await rawSdkCall(sim, { secretKey: 'not-the-secret' });
    assert.equal(raw.status, 401);
    assertRefusal(raw.body, 'SignatureDoesNotMatch', 100010, /^The request signature we calculated does not match the signature you provided/);
    const submit = service('not-the-secret').createJSONAPI(SUBMIT, { Version: VERSION });
    assertRefusal(await submit({ req_key: 'gamma_t2i_v45', prompt: 'x' }), 'SignatureDoesNotMatch', 100010, /does not match/);
  });

  test('the other refusals of the real service: unknown access key, a stale date, no Authorization', async () => {
    const ak = await rawSdkCall(sim, { accessKey: 'AKLTnobody' });
    assert.equal(ak.status, 401);
    assertRefusal(ak.body, 'InvalidAccessKey', 100009, /AKLTnobody/);
    const stale = await rawSdkCall(sim, { at: new Date(Date.now() - 16 * 60_000) });
    assert.equal(stale.status, 403);
    assertRefusal(stale.body, 'InvalidTimestamp', 100006, /expired/);
    const bare = await rawSdkCall(sim, { unsigned: true });
    assert.equal(bare.status, 401);
    assertRefusal(bare.body, 'MissingAuthenticationToken', 100003, /missing Authentication Token/);
  });
});
