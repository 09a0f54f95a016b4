/**
 * Upstream answers of any media type (issue #13): a made-up vendor answers raw PNG bytes with its
 * metadata in headers (`finish-reason`, `seed`); a profile declaring `response.type: bytes` maps
 * them (base64, media type, size, headers) into a JSON answer. A profile that expects JSON and gets
 * an image, or a mapping that fails on a 2xx, answers bad_response but never counts against the
 * channel's breaker: the vendor did its job.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { makePng, pngSize } from '../../src/sim/png.js';
import { startConfigGateway, type ConfigGateway } from '../helpers/config-gateway.js';
import { listenLocal } from '../helpers/local-server.js';
import { writeConfigFiles } from '../helpers/config-dir.js';

const ADMIN = 'admin-raw-bytes';
const PNG = makePng(96, 64);

/** The vendor: every POST answers a PNG, its seed and finish reason in headers. */
function painter(): Promise<{ server: Server; url: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length, seed: '4242', 'finish-reason': 'STOP' }).end(PNG);
    });
  });
  return listenLocal(server).then((url) => ({ server, url, calls: () => calls }));
}

/** A config (beside the helper's body.json) of one route and three profiles over the same vendor: bytes, JSON by mistake, and a mapping that fails. */
function writeConfig(dir: string, vendorUrl: string): void {
  const request = `request: { method: POST, path: '"/draw"', body: '{ "prompt": request.prompt }' }`;
  writeConfigFiles(dir, {
    'routes.yaml': `version: 1
routes:
  - id: draw
    method: POST
    path: /v1/pictures/{model}:draw
    kind: sync
    operation: draw
    model: { path: model }
    models: [pic-bytes, pic-json, pic-broken]
    body: { schema: body.json }
families:
  - { name: pictures, models: [pic-bytes, pic-json, pic-broken] }
`,
    'channels.yaml': `version: 1
groups: { default: {} }
profiles:
  painter:
    auth: { type: none }
    operations:
      draw:
        ${request}
        response:
          type: bytes
          body: '{ "image": body.base64, "mime": body.content_type, "bytes": body.size, "seed": $number(headers.seed), "finish": headers."finish-reason" }'
  painter-expects-json:
    auth: { type: none }
    operations:
      draw:
        ${request}
        response: { body: '{ "image": body.data }' }
  painter-broken-mapping:
    auth: { type: none }
    operations:
      draw:
        ${request}
        response: { type: bytes, body: '$error("this mapping is wrong")' }
channels:
  - { name: bytes, profile: painter, base_url: "${vendorUrl}", groups: [default], models: [pic-bytes] }
  - { name: expects-json, profile: painter-expects-json, base_url: "${vendorUrl}", groups: [default], models: [pic-json], breaker: { consecutive_failures: 2 } }
  - { name: broken-mapping, profile: painter-broken-mapping, base_url: "${vendorUrl}", groups: [default], models: [pic-broken], breaker: { consecutive_failures: 2 } }
`,
  });
}

let vendor: Awaited<ReturnType<typeof painter>>;
let g: ConfigGateway;
before(async () => {
  vendor = await painter();
  g = await startConfigGateway((dir) => writeConfig(dir, vendor.url), { quota: null, adminKey: ADMIN });
});
after(async () => {
  await g.close();
  await new Promise<void>((r) => vendor.server.close(() => r()));
});

const draw = (model: string) =>
  fetch(`${g.gateway.url()}/v1/pictures/${model}:draw`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'a red kite' }),
  });

test('a raw image answer reaches the mapping as base64 with its media type, size and headers', async () => {
  const res = await draw('pic-bytes');
  assert.equal(res.status, 200);
  const body = (await res.json()) as { image: string; mime: string; bytes: number; seed: number; finish: string };
  assert.deepEqual(pngSize(Buffer.from(body.image, 'base64')), { width: 96, height: 64 });
  assert.deepEqual(
    { mime: body.mime, bytes: body.bytes, seed: body.seed, finish: body.finish },
    { mime: 'image/png', bytes: PNG.length, seed: 4242, finish: 'STOP' },
  );
});

test("2xx answers our profile cannot translate are bad_response, and never open the vendor's breaker", async () => {
  for (const [model, channel] of [
    ['pic-json', 'expects-json'],
    ['pic-broken', 'broken-mapping'],
  ] as const) {
    const before = vendor.calls();
    // Three times the breaker's threshold of two: before the fix the third call was refused unsent (503).
    for (let i = 0; i < 6; i++) {
      const res = await draw(model);
      assert.equal(res.status, 502, `${model} #${i + 1}`);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'bad_response');
    }
    assert.equal(vendor.calls() - before, 6, 'every call reached the vendor');
    const report = (await (await fetch(`${g.gateway.url()}/admin/channels`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
      channels: { name: string; breaker: { state: string } }[];
    };
    assert.equal(report.channels.find((c) => c.name === channel)?.breaker.state, 'closed', channel);
  }
});
