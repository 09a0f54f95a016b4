/**
 * Upstream auth schemes are plug-ins (src/signers/, docs/channels-yaml.md, "Upstream auth schemes"): each owns its
 * schema, compile step and signing. The shipped channels.schema.json carries a copy of their
 * schemas for editors; it must say what the plug-ins say (UPDATE_FIXTURES=1 rewrites it).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { authSchema, compileAuth, signRequest } from '../../src/signers/registry.js';
import type { SignableRequest } from '../../src/signers/signer.js';

const FILE = 'schemas/config/channels.schema.json';

test("channels.schema.json's $defs.auth is the plug-ins' schemas", () => {
  const text = readFileSync(FILE, 'utf8');
  const schema = JSON.parse(text) as { $defs: Record<string, unknown> };
  if (process.env.UPDATE_FIXTURES === '1') {
    schema.$defs.auth = authSchema();
    writeFileSync(FILE, `${JSON.stringify(schema, null, 2)}\n`);
    return;
  }
  assert.deepEqual(schema.$defs.auth, authSchema(), `run UPDATE_FIXTURES=1 node --test dist/test/unit/signers.test.js to refresh ${FILE}`);
});

test('every scheme of the schema compiles and signs; its templates name the secrets it checks at load', () => {
  const secrets: Record<string, string> = { key: 'K', ak: 'AK', sk: 'SK' };
  const ctx = { secret: (n: string) => secrets[n] ?? '', cacheKey: {}, nowMs: Date.UTC(2026, 0, 2, 3, 4, 5) };
  const req = (): SignableRequest => ({ method: 'POST', path: '/x', query: {}, headers: { 'content-type': 'application/json' }, body: '{}' });
  const cases: [Record<string, unknown> & { type: string }, string[], (r: SignableRequest) => void][] = [
    [{ type: 'header', name: 'X-Key', value: 'Token {key}' }, ['key'], (r) => assert.equal(r.headers['x-key'], 'Token K')],
    [{ type: 'query', name: 'k', value: '{key}' }, ['key'], (r) => assert.equal(r.query.k, 'K')],
    [{ type: 'jwt-hs256', issuer: '{ak}', secret: '{sk}' }, ['ak', 'sk'], (r) => assert.match(r.headers.authorization!, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/)],
    [
      { type: 'hmac-v4', access_key: '{ak}', secret_key: '{sk}', region: 'r', service: 's', date_header: 'X-When', hash_header: 'X-Body-Hash' },
      ['ak', 'sk'],
      (r) => {
        assert.equal(r.headers['x-when'], '20260102T030405Z');
        assert.match(r.headers['x-body-hash']!, /^[0-9a-f]{64}$/);
        assert.match(
          r.headers.authorization!,
          /^HMAC-SHA256 Credential=AK\/20260102\/r\/s\/request, SignedHeaders=x-body-hash;x-when, Signature=[0-9a-f]{64}$/,
        );
      },
    ],
    [{ type: 'none' }, [], (r) => assert.deepEqual(r.headers, { 'content-type': 'application/json' })],
  ];
  const types = (authSchema().oneOf as { properties: { type: { const: string } } }[]).map((s) => s.properties.type.const);
  assert.deepEqual(cases.map(([raw]) => raw.type).sort(), [...types].sort(), 'each scheme has a case here');
  for (const [raw, named, check] of cases) {
    const auth = compileAuth(raw);
    assert.deepEqual([...auth.secrets].sort(), named, raw.type);
    const r = req();
    signRequest(auth, r, ctx);
    check(r);
  }
});
