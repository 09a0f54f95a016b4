/**
 * What `gateway start` loads (docs/operating.md, "Memory given back when idle"): on the shipped config
 * and the embedded store, with no admin key, Redis or archive, the modules only some
 * configurations need stay unloaded (PostgreSQL, Redis, the S3 archive, undici's index, the
 * simulators, the OpenAPI builder). Each of them is megabytes of heap an idle gateway used to hold
 * (issues 14 and 41); this keeps a static import from bringing one back unseen.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { channelEnv } from '../helpers/channel-env.js';
import { CLI, startProcess, type Running } from '../helpers/process.js';

/**
 * A preload that records every module the process loads: ES modules (and packages imported from
 * them) through a resolve hook, CommonJS files through require.cache; SIGUSR2 prints them as one line.
 */
const RECORDER = `
import { createRequire, register } from 'node:module';
import { isMainThread, MessageChannel } from 'node:worker_threads';
if (isMainThread) {
  const { port1, port2 } = new MessageChannel();
  const seen = new Set();
  port1.on('message', (url) => seen.add(url));
  port1.unref();
  const hooks = 'let port; export function initialize(d) { port = d.port; } ' +
    'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }';
  register('data:text/javascript,' + encodeURIComponent(hooks), { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
  process.on('SIGUSR2', () => {
    const cjs = Object.keys(createRequire(import.meta.url).cache).map((f) => 'file://' + f);
    process.stdout.write('LOADED ' + JSON.stringify([...new Set([...seen, ...cjs])]) + '\\n');
  });
}
`;

let dir: string;
let proc: Running;
let loaded: string[];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-lazy-loads-'));
  writeFileSync(join(dir, 'recorder.mjs'), RECORDER);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...channelEnv(),
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_CONFIG_DIR: PROJECT_ROOT,
    GATEWAY_DB: join(dir, 'gateway.db'),
  };
  for (const name of ['GATEWAY_ADMIN_KEY', 'GATEWAY_REDIS', 'GATEWAY_ARCHIVE']) delete env[name];
  proc = startProcess(process.execPath, ['--import', join(dir, 'recorder.mjs'), CLI, 'start'], { cwd: PROJECT_ROOT, env });
  await proc.waitFor(/"msg":"gateway listening"/, 30_000);
  proc.child.kill('SIGUSR2');
  const [, list] = await proc.waitFor(/^LOADED (.*)$/m, 10_000);
  loaded = JSON.parse(list!) as string[];
});

after(async () => {
  await proc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const hits = (re: RegExp) => loaded.filter((url) => re.test(url));

test('the recorder sees what start loads: the gateway, the store driver, the mappings', () => {
  assert.equal(hits(/\/dist\/src\/gateway\.js$/).length, 1);
  assert.ok(hits(/\/node_modules\/libsql\//).length > 0);
  assert.ok(hits(/\/node_modules\/jsonata\//).length > 0);
});

test('start without PostgreSQL, Redis, an archive or the demo loads none of their modules', () => {
  const unneeded: [string, RegExp][] = [
    ['pg (GATEWAY_DB=postgres://…)', /\/node_modules\/(pg|pg-[a-z-]+)\//],
    ['the PostgreSQL store', /\/dist\/src\/store\/postgres\//],
    ['ioredis (GATEWAY_REDIS)', /\/node_modules\/(ioredis|@ioredis)\//],
    ['the Redis live state', /\/dist\/src\/live\/redis-/],
    ['the AWS SDK (GATEWAY_ARCHIVE=s3://…)', /\/node_modules\/@(aws-sdk|smithy|aws-crypto)\//],
    ['the S3 archive backend', /\/dist\/src\/archive\/s3-backend\.js$/],
    ["undici's index (only its Pool is used)", /\/node_modules\/undici\/index\.js$/],
    ['the simulators (demo)', /\/dist\/src\/sim\//],
    ['the OpenAPI builder (/openapi.json)', /\/dist\/src\/openapi\//],
    ['the golden runner', /\/dist\/src\/golden\//],
  ];
  const found = unneeded.filter(([, re]) => hits(re).length > 0).map(([what, re]) => `${what}: ${hits(re).slice(0, 3).join(', ')}`);
  assert.deepEqual(found, []);
});
