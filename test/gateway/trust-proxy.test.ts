/**
 * GATEWAY_TRUST_PROXY end to end (docs/deploying.md, "TLS and proxies"): the same request, with the
 * X-Forwarded-For, -Proto and -Host a proxy in front would add, sent over real HTTP to gateways over
 * one store and one set of simulators that believe the loopback proxy, believe nobody, or have a
 * GATEWAY_PUBLIC_URL. The access line's client address and the origin of the links handed out
 * follow the setting; what a peer not believed says changes neither.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';
import { parseTrustProxy } from '../../src/http/trust-proxy.js';
import { postJson } from '../helpers/harness.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** A log line as pino writes it. */
type Line = Record<string, unknown> & { msg: string };

const FORWARDED = { 'x-forwarded-for': '203.0.113.7, 10.9.8.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };
/** The delta images route answers gateway links when asked for URLs. */
const IMAGES = '/v1/images/generations';
const BODY = { model: 'delta-img-5-0-260128', prompt: 'a kite', response_format: 'url', size: '1K' };

describe('trusted proxies: the client address in the access log, the origin of links', () => {
  let h: TaskHarness;
  const lines: Line[] = [];
  const others: Gateway[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Line);
      done();
    },
  });

  /** Another gateway over the harness's store and configuration, logging into `lines`. */
  async function gateway(opts: Partial<GatewayOptions>): Promise<string> {
    const gw = createGateway({ snapshot: () => h.snapshot, store: h.store, log: pino({ level: 'info' }, sink), poll: false, ...opts });
    others.push(gw);
    await gw.listen(0);
    return gw.url();
  }
  /** One request with a proxy's headers; its first link and its access line. */
  async function ask(base: string, requestId: string): Promise<{ link: string; client: unknown }> {
    const res = await postJson(base, IMAGES, BODY, { authorization: `Bearer ${h.key}`, 'x-request-id': requestId, ...FORWARDED });
    assert.equal(res.status, 200, res.text);
    const line = lines.find((l) => l.msg === 'request' && l.req_id === requestId);
    assert.ok(line, `the access line of ${requestId}`);
    return { link: res.json.data[0].url as string, client: line.client };
  }

  before(async () => {
    h = await startTaskHarness({ log: pino({ level: 'info' }, sink), network: { trustProxy: parseTrustProxy('loopback,10.0.0.0/8') } });
  });
  after(async () => {
    for (const gw of others) await gw.close();
    await h.close();
  });

  test("believing the loopback proxy and 10/8: the client is the first address not believed, and links are on the proxy's origin", async () => {
    const { link, client } = await ask(h.url, 'trust-proxy-believed');
    assert.equal(client, '203.0.113.7', '10.9.8.7 is a proxy of ours too; 203.0.113.7 is the client');
    assert.match(link, /^https:\/\/api\.example\.com\/v1\/links\/[A-Za-z0-9_-]+$/);
    // The link serves: the proxy would hand its path to this gateway.
    const file = await fetch(h.url + new URL(link).pathname);
    assert.equal(file.status, 200);
  });

  test('believing nobody (the default): the peer is the client and the links are on the Host the request named', async () => {
    const base = await gateway({});
    const { link, client } = await ask(base, 'trust-proxy-nobody');
    assert.equal(client, '127.0.0.1');
    assert.ok(link.startsWith(`${base}/v1/links/`), link);
  });

  test('a proxy not on the list is not believed either', async () => {
    const base = await gateway({ trustProxy: parseTrustProxy('192.0.2.0/24') });
    const { link, client } = await ask(base, 'trust-proxy-stranger');
    assert.equal(client, '127.0.0.1');
    assert.ok(link.startsWith(`${base}/v1/links/`), link);
  });

  test('GATEWAY_PUBLIC_URL wins over what a believed proxy says for links; the client address still comes from it', async () => {
    const base = await gateway({ trustProxy: parseTrustProxy('loopback'), publicUrl: 'https://gateway.example.org/' });
    const { link, client } = await ask(base, 'trust-proxy-public-url');
    assert.equal(client, '10.9.8.7', 'loopback alone is believed: 10.9.8.7 is the client');
    assert.match(link, /^https:\/\/gateway\.example\.org\/v1\/links\//);
  });
});
