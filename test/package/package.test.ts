/**
 * The package as an operator gets it: `npm pack` of this tree, installed into an empty directory
 * with the steps the Dockerfile runs (test/helpers/install-steps.ts), then `npx gateway --version`,
 * `npx gateway init`, a start with no keys (every channel left out, and said so), and a start in
 * front of the package's own simulators (`gateway sims`) that answers a real request and drains on
 * SIGTERM. Nothing here reads the repository's files at run time but the tarball.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { loadConfig } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { SETTINGS } from '../../src/settings.js';
import { fill, STEPS, words } from '../helpers/install-steps.js';
import { startProcess, type Running } from '../helpers/process.js';
import { until } from '../helpers/until.js';
import { dockerHealthcheck } from '../helpers/deploy-files.js';
import { brokenLinks, relativeLinks } from '../helpers/markdown-links.js';

const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const version = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Only what a shell on a fresh machine has: no GATEWAY_* setting, no channel variable, no npm_config_* of a parent npm. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'SYSTEMROOT'];
  const env: NodeJS.ProcessEnv = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, ...extra };
}

/** Runs one step to completion in `cwd`; fails the test with its output unless it exits 0. */
function run(cmd: string[], cwd: string, env: NodeJS.ProcessEnv, timeout = 60_000): string {
  const [command = '', ...args] = cmd;
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout });
  assert.equal(r.status, 0, `${cmd.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The gateway's own "gateway listening" line gives its real port (it starts on PORT=0). */
async function listening(proc: Running): Promise<string> {
  const [, base = ''] = await proc.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"gateway listening"/, 30_000);
  return base;
}

/** The Markdown files under `dir` (node_modules aside), relative to it. */
function markdownIn(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((d) => {
    const path = under === '' ? d.name : `${under}/${d.name}`;
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : markdownIn(dir, path);
    return d.name.endsWith('.md') ? [path] : [];
  });
}

if (npm.status !== 0) {
  if (process.env.CI === 'true') test('npm is installed', () => assert.fail('npm is not on PATH and CI=true: the package test must run in CI, not skip'));
  else test('the packed tarball installs and serves', { skip: 'npm is not on PATH: the package cannot be packed or installed' }, () => undefined);
} else {
  const root = mkdtempSync(join(tmpdir(), 'gateway-package-'));
  // npm pack's folder is made by the steps, as in the Dockerfile; the empty directory is WORKDIR's.
  const pack = join(root, 'pack');
  const app = join(root, 'app');
  mkdirSync(app);
  const running: Running[] = [];
  /** The installed package's folder, once the first test installed it. */
  let installedAt: string | null = null;
  after(async () => {
    for (const p of running) await p.stop('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  test('the packed tarball installs into an empty directory, writes a config and serves from it', { timeout: 120_000 }, async (t) => {
    const started = Date.now();
    // From the folder npm pack writes to: the steps after the build (the suite built dist/ already).
    for (const step of STEPS.build.slice(STEPS.build.indexOf('npm run build') + 1)) run(words(fill(step, { pack })), PROJECT_ROOT, cleanEnv());
    const tarballs = readdirSync(pack).filter((f) => f.endsWith('.tgz'));
    assert.deepEqual(tarballs, [`generation-gateway-${version}.tgz`]);
    const tarball = join(pack, tarballs[0] ?? '');
    t.diagnostic(`tarball ${(statSync(tarball).size / 1024).toFixed(0)} KB`);

    const [installStep = '', initStep = ''] = STEPS.install;
    const installed = Date.now();
    run(words(fill(installStep, { tarball })), app, cleanEnv(), 90_000);
    t.diagnostic(`npm install took ${Date.now() - installed} ms`);
    // Only what runs went in: no TypeScript source, no tests, no source maps.
    const pkg = join(app, 'node_modules', 'generation-gateway');
    assert.ok(existsSync(join(pkg, 'dist/src/cli.js')) && existsSync(join(pkg, 'dist/console/main.js')));
    for (const absent of ['src/cli.ts', 'test', 'dist/test', 'dist/src/cli.js.map']) assert.ok(!existsSync(join(pkg, absent)), `${absent} is in the package`);
    installedAt = pkg;
    // npx of a name that is not installed would fetch whatever the registry calls it: the bin must be here first.
    assert.ok(existsSync(join(app, 'node_modules/.bin/gateway')));

    assert.equal(run(['npx', 'gateway', '--version'], app, cleanEnv()).trim(), version);
    assert.equal(run(['npx', 'gateway', '-v'], app, cleanEnv()).trim(), version);

    run(['npx', ...words(fill(initStep, { config: 'mydir' }))], app, cleanEnv());
    const config = join(app, 'mydir');
    for (const f of ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas/public/video-generation.json', 'schemas/config/channels.schema.json'])
      assert.ok(existsSync(join(config, f)), `init wrote no ${f}`);
    const example = readFileSync(join(config, '.env.example'), 'utf8');
    for (const name of [...SETTINGS.map((s) => s.name), ...channelEnvNames(PROJECT_ROOT)])
      assert.match(example, new RegExp(`^#${name}=`, 'm'), `.env.example lacks ${name}`);
    // The written config is the shipped one: the same routes and channels load from it.
    const shipped = loadConfig(PROJECT_ROOT, { env: {} }).snapshot;
    const written = loadConfig(config, { env: {} }).snapshot;
    assert.ok(shipped && written);
    assert.deepEqual(
      written.routes.map((r) => r.id),
      shipped.routes.map((r) => r.id),
    );
    assert.deepEqual(
      written.leftOut.map((c) => c.name),
      shipped.leftOut.map((c) => c.name),
    );
    assert.equal(written.channels.length, 0, 'no channel serves before its variables are set');

    // No keys at all: it serves, and says which channels are off and what they lack.
    const data = join(root, 'data');
    const bare = startProcess('npx', ['gateway', ...words(fill(STEPS.start, { config: 'mydir' })).slice(1)], {
      cwd: app,
      env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', GATEWAY_DB: join(data, 'gateway.db'), GATEWAY_WATCH: '0' }),
      group: true,
    });
    running.push(bare);
    const bareBase = await listening(bare);
    assert.equal((await fetch(`${bareBase}/healthz`)).status, 200);
    const off = [...bare.output().matchAll(/"channel":"([^"]+)"[^\n]*"msg":"channel left out: [^"]*not set/g)].map((m) => m[1]);
    assert.deepEqual(off.sort(), shipped.leftOut.map((c) => c.name).sort());
    // npx runs the gateway as its child and does not pass a SIGTERM on: a terminal's Ctrl-C reaches the group.
    await bare.stop('SIGINT');
    await bare.waitFor(/"msg":"stopped; every request in flight finished"/, 30_000);

    // The package's own simulators, and the variables that point the channels of mydir at them.
    const bin = join(app, 'node_modules/.bin/gateway');
    const sims = startProcess(bin, ['sims', '--finish-ms', '1000'], { cwd: app, env: cleanEnv({ GATEWAY_CONFIG_DIR: config }) });
    running.push(sims);
    await sims.waitFor(/ready \(SIGINT or SIGTERM stops them\)/, 30_000);
    const simEnv = Object.fromEntries(
      sims
        .output()
        .split('\n')
        .flatMap((l) => (/^[A-Z][A-Z0-9_]*=/.test(l) ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]] : [])),
    );
    assert.ok(Object.keys(simEnv).length > 0, `gateway sims printed no variables:\n${sims.output()}`);

    const env = cleanEnv({ ...simEnv, PORT: '0', HOST: '127.0.0.1', GATEWAY_DB: join(data, 'gateway.db'), GATEWAY_WATCH: '0' });
    // The group is checked against the config the gateway will serve: named as every command names it.
    const key = run([bin, 'tokens', 'create', '--group', 'default', '--name', 'package-test', '--config', config], app, env).trim();
    // As the image and the service unit run it: the installed bin itself, so SIGTERM reaches the gateway.
    const [, ...startArgs] = words(fill(STEPS.start, { config }));
    const gw = startProcess(bin, startArgs, { cwd: app, env });
    running.push(gw);
    const base = await listening(gw);
    assert.doesNotMatch(gw.output(), /channel left out/, 'every channel serves once its variables are set');

    const route = shipped.routes.find((r) => r.kind === 'sync' && r.example !== null && r.method === 'POST');
    assert.ok(route?.example, 'the shipped config has a synchronous route with an example');
    const res = await fetch(`${base}${route.example.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(route.example.body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${route.id} answered ${res.status}: ${text}`);
    assert.ok(typeof JSON.parse(text) === 'object');

    // The admin console's files are in the package: its page, a script, the stylesheet.
    for (const path of ['/admin/', '/admin/console/main.js', '/admin/console/console.css']) {
      const page = await fetch(`${base}${path}`);
      const body = await page.text();
      assert.equal(page.status, 200, `${path}: ${body.slice(0, 200)}`);
    }

    // The image's HEALTHCHECK, as the Dockerfile says it, against this gateway.
    const port = new URL(base).port;
    const check = dockerHealthcheck();
    const healthy = spawnSync(check[0] ?? '', check.slice(1), { env: cleanEnv({ PORT: port }), encoding: 'utf8', timeout: 10_000 });
    assert.equal(healthy.status, 0, `the HEALTHCHECK failed against a serving gateway: ${healthy.stderr}`);

    assert.equal(await gw.stop('SIGTERM'), 0);
    assert.match(gw.output(), /"msg":"stopped; every request in flight finished"/);
    const unhealthy = spawnSync(check[0] ?? '', check.slice(1), { env: cleanEnv({ PORT: port }), encoding: 'utf8', timeout: 10_000 });
    assert.notEqual(unhealthy.status, 0, 'the HEALTHCHECK passed with no gateway listening');
    await until('the simulators to stop', async () => (await sims.stop('SIGTERM')) === 0);
    t.diagnostic(`pack, install, init and three processes took ${Date.now() - started} ms`);
  });

  test('the package holds what its documents cite, and says which commands need a clone', { timeout: 60_000 }, () => {
    assert.ok(installedAt, 'the test before installed no package');
    const pkg = installedAt;
    // The unit the systemd steps copy, from where they copy it, and every relative link of every document shipped.
    const app = join(pkg, '../..');
    for (const doc of ['deploy/gateway.service', 'docs/deploying.md']) {
      const copies = [...readFileSync(join(pkg, doc), 'utf8').matchAll(/\bcp (\S+) \/etc\/systemd\/system\//g)].map((m) => m[1] ?? '');
      assert.equal(copies.length, 1, `${doc} copies the unit once`);
      assert.ok(existsSync(join(app, copies[0] ?? '')), `${doc}: the install directory has no ${copies[0]} to copy`);
    }
    const documents = markdownIn(pkg);
    for (const f of ['README.md', 'CHANGELOG.md', 'docs/deploying.md', 'docs/generated/errors.md'])
      assert.ok(documents.includes(f), `${f} is not in the package`);
    const links = documents.reduce((n, f) => n + relativeLinks(readFileSync(join(pkg, f), 'utf8')).length, 0);
    assert.ok(links > 100, `only ${links} links in the package's documents`);
    assert.deepEqual(brokenLinks(pkg, documents), [], 'links of the packed documents that go nowhere');

    // golden and docs work on the repository's own files: from the package they say so, exit 2, no stack.
    const bin = join(pkg, '../.bin/gateway');
    for (const [command, script] of [
      ['golden', 'npm run golden'],
      ['docs', 'npm run docs'],
    ] as const) {
      const r = spawnSync(bin, [command], { cwd: app, env: cleanEnv(), encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 2, `gateway ${command} exited ${r.status}:\n${r.stdout}${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^gateway: gateway ${command} needs a clone of the repository: .*\\(in a clone: npm ci, then ${script}\\)\n$`));
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  });
}
