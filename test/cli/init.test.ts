/**
 * `gateway init`, `gateway --version`, `start --config` and `sims --host` as real processes of the
 * built CLI (the packed tarball runs the same commands: test/package/package.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { loadConfig } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { SETTINGS } from '../../src/settings.js';
import { runCli, startCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-init-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const version = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** No channel variable set, whatever the environment running the tests has. */
const noChannelEnv = () => Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, '']));

test('--version, -v and version print the package version alone', () => {
  for (const flag of ['--version', '-v', 'version']) {
    const r = runCli([flag]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
  }
});

test('init writes the shipped config, every channel left out until its variables are set, and a .env.example of every variable', () => {
  const out = join(dir, 'conf');
  const r = runCli(['init', out]);
  assert.equal(r.status, 0, r.stderr);
  // As a user of the installed package types it: the bin is not on PATH.
  assert.match(r.stdout, /^ {2}npx gateway start --config .*\/conf$/m);
  for (const f of ['routes.yaml', 'channels.yaml']) assert.ok(readFileSync(join(out, f), 'utf8').length > 0);
  for (const sub of ['routes.d', 'channels.d', 'schemas/public', 'schemas/config'])
    assert.deepEqual(readdirSync(join(out, sub)).sort(), readdirSync(join(PROJECT_ROOT, sub)).sort(), `${sub}: as shipped`);
  // Each channel is said to be off until its variables are set, just above it.
  const channels = readFileSync(join(out, 'channels.yaml'), 'utf8');
  assert.match(channels, /# Off \(left out\) until ALPHA_BASE_URL and ALPHA_API_KEY are set: see \.env\.example\.\n {2}- name: alpha-primary\n/);
  // Nothing else changed: the same configuration loads, and with no variable nothing serves.
  const shipped = loadConfig(PROJECT_ROOT, { env: {} });
  const written = loadConfig(out, { env: {} });
  assert.ok(shipped.snapshot && written.snapshot, written.issues.map((i) => i.message).join('\n'));
  assert.deepEqual(
    written.snapshot.routes.map((r) => r.id),
    shipped.snapshot.routes.map((r) => r.id),
  );
  assert.equal(written.snapshot.channels.length, 0);
  assert.deepEqual(
    written.snapshot.leftOut.map((c) => [c.name, c.reason]),
    shipped.snapshot.leftOut.map((c) => [c.name, 'unset_env']),
  );
  // With every variable set, every channel serves: none is disabled in the file.
  const all = Object.fromEntries(channelEnvNames(out).map((n) => [n, n.endsWith('_BASE_URL') ? 'http://127.0.0.1:9' : 'x']));
  const serving = loadConfig(out, { env: all }).snapshot;
  assert.equal(serving?.leftOut.length, 0);
  assert.equal(serving?.channels.length, shipped.snapshot.leftOut.length);

  const example = readFileSync(join(out, '.env.example'), 'utf8');
  assert.match(example, new RegExp(`^# Generation Gateway ${version.replace(/\./g, '\\.')}:`));
  for (const s of SETTINGS) assert.match(example, new RegExp(`^#${s.name}=${(s.default ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'), s.name);
  for (const name of channelEnvNames(out)) assert.match(example, new RegExp(`^#${name}=$`, 'm'), name);
  // A channel's variables follow the line naming the channel and where it is in this directory.
  const line = channels.split('\n').findIndex((l) => l.includes('- name: alpha-primary')) + 1;
  assert.match(example, new RegExp(`# Channel alpha-primary \\(profile alpha-native, channels\\.yaml:${line}\\)`));
  // Everything is commented out: an empty PORT= would be port 0.
  assert.deepEqual(
    example.split('\n').filter((l) => l !== '' && !l.startsWith('#')),
    [],
  );
});

test('init refuses a directory that holds config files, and changes nothing there', () => {
  const taken = join(dir, 'taken');
  mkdirSync(taken);
  writeFileSync(join(taken, 'routes.yaml'), 'mine\n');
  const r = runCli(['init', taken]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /already holds routes\.yaml; init writes only into a new or empty directory/);
  assert.deepEqual(readdirSync(taken), ['routes.yaml']);
  assert.equal(readFileSync(join(taken, 'routes.yaml'), 'utf8'), 'mine\n');
  const missing = runCli(['init']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /missing <dir>/);
});

test('start --config serves the directory it names, over GATEWAY_CONFIG_DIR, and says which channels are left out', async () => {
  const conf = join(dir, 'flag');
  assert.equal(runCli(['init', conf]).status, 0);
  const gw = startCli(['start', '--config', conf], {
    ...noChannelEnv(),
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_CONFIG_DIR: join(dir, 'no-such-dir'),
    GATEWAY_DB: join(dir, 'flag.db'),
    GATEWAY_WATCH: '0',
  });
  try {
    const [, base] = await gw.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"gateway listening"/);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.match(gw.output(), /"channel":"alpha-primary","at":"channels\.yaml:\d+","unset":\["ALPHA_BASE_URL","ALPHA_API_KEY"\]/);
  } finally {
    assert.equal(await gw.stop('SIGTERM'), 0);
  }
});

test('sims --host names that host in the URLs it prints; a wildcard address is refused', async () => {
  const refused = runCli(['sims', '--host', '0.0.0.0']);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /--host takes the name or address gateways reach the simulators at, not '0\.0\.0\.0'/);
  const sims = startCli(['sims', '--host', 'localhost'], { GATEWAY_CONFIG_DIR: PROJECT_ROOT });
  try {
    await sims.waitFor(/ready/);
    const urls = sims
      .output()
      .split('\n')
      .filter((l) => /^[A-Z0-9_]+_BASE_URL=/.test(l))
      .map((l) => l.slice(l.indexOf('=') + 1));
    assert.ok(urls.length > 0);
    for (const u of urls) assert.match(u, /^http:\/\/localhost:\d+$/);
    // Reached by that name: a simulator answers (its own 404 for a path it does not serve).
    const res = await fetch(`${urls[0]}/no-such-path`);
    assert.ok(res.status >= 400 && res.status < 500, `status ${res.status}`);
  } finally {
    assert.equal(await sims.stop('SIGTERM'), 0);
  }
});
