/**
 * What a newcomer meets first (issue #40), on a real `gateway start` listening on every interface:
 * the "gateway listening" line names the address really bound (it once said 127.0.0.1 for 0.0.0.0)
 * beside a URL that reaches it; `GET /` answers a short JSON pointing at the OpenAPI document, the
 * console and the health probe (it was a JSON 404), and each place it names answers.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Running, startCli } from '../helpers/process.js';

describe('gateway start on 0.0.0.0: the listening line and GET /', () => {
  let dir: string;
  let proc: Running;
  let line: Record<string, unknown>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-front-door-'));
    proc = startCli(['start'], { ALPHA_BASE_URL: '', ALPHA_API_KEY: '', PORT: '0', HOST: '0.0.0.0', GATEWAY_DB: join(dir, 'gw.db'), GATEWAY_WATCH: '0' });
    const [json = ''] = await proc.waitFor(/\{[^\n]*"msg":"gateway listening"[^\n]*\}/, 30_000);
    line = JSON.parse(json) as Record<string, unknown>;
  });
  after(async () => {
    await proc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the line says the address bound, its port, and a URL to call', async () => {
    assert.equal(line.address, '0.0.0.0', JSON.stringify(line));
    assert.ok(Number.isInteger(line.port) && (line.port as number) > 0, JSON.stringify(line));
    assert.equal(line.url, `http://127.0.0.1:${line.port}`);
    const res = await fetch(`${line.url}/healthz`);
    assert.equal(res.status, 200, 'the URL reaches the gateway');
  });

  test('GET / points at the OpenAPI document, the console and the health probe, each of which answers', async () => {
    const res = await fetch(`${line.url}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.ok(res.headers.get('x-request-id'));
    const body = (await res.json()) as Record<string, string>;
    assert.deepEqual(body, { service: 'generation-gateway', openapi: '/openapi.json', console: '/admin/', health: '/healthz' });
    for (const path of [body.openapi, body.console, body.health]) {
      const got = await fetch(`${line.url}${path}`);
      assert.equal(got.status, 200, `${path} answers`);
      await got.arrayBuffer();
    }
    const head = await fetch(`${line.url}/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    // Only GET and HEAD: anything else at / is still no route.
    const post = await fetch(`${line.url}/`, { method: 'POST' });
    assert.equal(post.status, 404);
    assert.equal(((await post.json()) as { error: { code: string } }).error.code, 'not_found');
  });
});
