/**
 * GATEWAY_TRUST_PROXY (src/http/trust-proxy.ts): its grammar, and what it makes of a request's peer,
 * X-Forwarded-For, -Proto and -Host; the cases follow Express's `trust proxy` (proxy-addr).
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { clientAddress, describeTrust, parseTrustProxy, requestOrigin } from '../../src/http/trust-proxy.js';

/** A request as the functions read it: the peer, the port it came in on, TLS or not, the headers. */
function req(peer: string, headers: Record<string, string> = {}, encrypted = false): IncomingMessage {
  return { socket: { remoteAddress: peer, localPort: 8443, encrypted }, headers } as unknown as IncomingMessage;
}

test('the grammar: false, true, hops, and a comma list of addresses, CIDR blocks and names', () => {
  for (const off of [undefined, '', ' ', 'false', 'FALSE', '0']) assert.equal(parseTrustProxy(off).kind, 'none', String(off));
  assert.equal(parseTrustProxy('true').kind, 'all');
  assert.deepEqual(parseTrustProxy('2'), { kind: 'hops', hops: 2 });
  assert.equal(describeTrust(parseTrustProxy(' loopback , 10.0.0.0/8,2001:db8::1 ')), 'loopback,10.0.0.0/8,2001:db8::1');
  const bad = ['33', '10.0.0.0/33', '::1/129', '10.0.0', 'proxy.example.com', '10.0.0.0/8/1', 'loopback,', '1.2.3.4/x', 'yes'];
  for (const raw of bad) assert.throws(() => parseTrustProxy(raw), /^Error: GATEWAY_TRUST_PROXY/, raw);
  assert.throws(() => parseTrustProxy(Array.from({ length: 65 }, (_, i) => `10.0.0.${i}`).join(',')), /more than 64 entries/);
});

test('believing nobody: the peer is the client, and X-Forwarded-* change nothing', () => {
  const trust = parseTrustProxy('false');
  const r = req('127.0.0.1', { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example', host: 'gw.local:8080' });
  assert.equal(clientAddress(r, trust), '127.0.0.1');
  assert.equal(requestOrigin(r, trust), 'http://gw.local:8080');
});

test('a believed list: X-Forwarded-For is walked from its right end to the first address not believed', () => {
  const trust = parseTrustProxy('loopback, 10.0.0.0/8');
  // client → 198.51.100.9 (a proxy not ours) → 10.1.1.1 (ours) → 127.0.0.1 (ours, the peer)
  const chain = req('127.0.0.1', { 'x-forwarded-for': '203.0.113.7, 198.51.100.9, 10.1.1.1' });
  assert.equal(clientAddress(chain, trust), '198.51.100.9', 'the first hop not believed is the client; what it says is not believed');
  assert.equal(clientAddress(req('127.0.0.1', { 'x-forwarded-for': '10.2.2.2, 10.1.1.1' }), trust), '10.2.2.2', 'all believed: the leftmost');
  assert.equal(clientAddress(req('192.0.2.1', { 'x-forwarded-for': '203.0.113.7' }), trust), '192.0.2.1', 'a peer not believed is the client');
  assert.equal(clientAddress(req('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }), trust), '203.0.113.7', 'an IPv4 peer on a dual-stack socket');
  assert.equal(clientAddress(req('::ffff:192.0.2.1'), trust), '192.0.2.1', 'logged as IPv4');
  assert.equal(
    clientAddress(req('127.0.0.1', { 'x-forwarded-for': '<script>, 10.1.1.1' }), trust),
    '10.1.1.1',
    'a value that is no address is never the client',
  );
  assert.equal(clientAddress(req('127.0.0.1'), trust), '127.0.0.1', 'no header: the peer');
  assert.equal(clientAddress(req('127.0.0.1', { 'x-forwarded-for': '2001:db8::5' }), trust), '2001:db8::5');
});

test('blocks match by their prefix, IPv4 and IPv6 alike', () => {
  const trust = parseTrustProxy('2001:db8::/32, 64:ff9b::/96, 192.168.1.0/24, 0.0.0.0/32, fe80::1');
  const client = (peer: string, xff?: string) => clientAddress(req(peer, xff === undefined ? {} : { 'x-forwarded-for': xff }), trust);
  assert.equal(client('2001:db8:ffff::9', '203.0.113.7'), '203.0.113.7', 'in 2001:db8::/32');
  assert.equal(client('2001:db9::9', '203.0.113.7'), '2001:db9::9', 'next to it: not');
  assert.equal(client('64:ff9b::192.0.2.1', '203.0.113.7'), '203.0.113.7', 'an IPv4 tail inside an IPv6 block');
  assert.equal(client('64:ff9b::1:0:1', '203.0.113.7'), '64:ff9b::1:0:1', 'past the /96');
  assert.equal(client('192.168.1.255', '203.0.113.7'), '203.0.113.7');
  assert.equal(client('192.168.2.1', '203.0.113.7'), '192.168.2.1');
  assert.equal(client('0.0.0.1', '203.0.113.7'), '0.0.0.1', 'a /32 is one address');
  assert.equal(client('fe80::1', '203.0.113.7'), '203.0.113.7', 'an address alone');
  assert.equal(client('fe80::2', '203.0.113.7'), 'fe80::2');
  assert.equal(client('fe80::1%eth0', '203.0.113.7'), '203.0.113.7', 'a zone names the interface, not another address');
  const everything = parseTrustProxy('0.0.0.0/0,::/0');
  assert.equal(clientAddress(req('198.51.100.1', { 'x-forwarded-for': '203.0.113.7, 2001:db8::1' }), everything), '203.0.113.7');
});

test('hops count from the gateway; true believes every hop', () => {
  const xff = { 'x-forwarded-for': '203.0.113.7, 198.51.100.9, 10.1.1.1' };
  assert.equal(clientAddress(req('127.0.0.1', xff), parseTrustProxy('1')), '10.1.1.1');
  assert.equal(clientAddress(req('127.0.0.1', xff), parseTrustProxy('2')), '198.51.100.9');
  assert.equal(clientAddress(req('127.0.0.1', xff), parseTrustProxy('3')), '203.0.113.7');
  assert.equal(clientAddress(req('127.0.0.1', xff), parseTrustProxy('9')), '203.0.113.7', 'more hops than the header has: its leftmost');
  assert.equal(clientAddress(req('127.0.0.1', xff), parseTrustProxy('true')), '203.0.113.7');
});

test("the origin of links: a believed peer's X-Forwarded-Proto and -Host (their first values), checked", () => {
  const trust = parseTrustProxy('loopback');
  const h = { host: 'gw.internal:8080' };
  assert.equal(
    requestOrigin(req('127.0.0.1', { ...h, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' }), trust),
    'https://api.example.com',
  );
  assert.equal(
    requestOrigin(req('127.0.0.1', { ...h, 'x-forwarded-proto': 'HTTPS, http', 'x-forwarded-host': 'api.example.com:8443, gw' }), trust),
    'https://api.example.com:8443',
  );
  assert.equal(requestOrigin(req('127.0.0.1', { ...h, 'x-forwarded-proto': 'gopher' }), trust), 'http://gw.internal:8080', 'an odd scheme is ignored');
  assert.equal(requestOrigin(req('127.0.0.1', { ...h, 'x-forwarded-host': 'a b/c' }), trust), 'http://gw.internal:8080', 'an odd host is ignored');
  assert.equal(
    requestOrigin(req('192.0.2.1', { ...h, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' }), trust),
    'http://gw.internal:8080',
    'a peer not believed',
  );
  assert.equal(requestOrigin(req('127.0.0.1', h, true), parseTrustProxy('false')), 'https://gw.internal:8080', 'the gateway serving TLS itself');
  assert.equal(
    requestOrigin(req('127.0.0.1', { ...h, 'x-forwarded-proto': 'http' }, true), trust),
    'http://gw.internal:8080',
    'a believed proxy says how the client came',
  );
  assert.equal(requestOrigin(req('127.0.0.1', { host: 'bad host' }), trust), 'http://127.0.0.1:8443', 'no usable Host: the address it came in on');
});
