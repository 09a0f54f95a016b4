/**
 * `npm start` and `npm run demo` as a developer runs them, real processes all the way: npm, the
 * shell it starts the script with, and the gateway (scripts/gateway.mjs). A SIGTERM to the npm
 * process drains the gateway and npm exits 0 with the port closed (npm passes the signal to the
 * script's shell only: without `exec`, the shell died and the gateway kept the port); a terminal's
 * Ctrl-C (SIGINT to the whole process group, which npm passes on a second time) drains too, rather
 * than ending the gateway mid-drain. Then the notice of a first build, in a folder of its own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startProcess, type Running } from '../helpers/process.js';

const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const root = mkdtempSync(join(tmpdir(), 'gateway-npm-scripts-'));
const running: Running[] = [];
after(async () => {
  for (const p of running) await p.stop('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

/** A shell's environment with the gateway on a free port and a store of its own: no npm_config_* of a parent npm, no GATEWAY_* of the caller. */
function env(name: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k] !== undefined) out[k] = process.env[k];
  return { ...out, PORT: '0', HOST: '127.0.0.1', GATEWAY_DB: join(root, name, 'gateway.db'), GATEWAY_WATCH: '0' };
}

/** Whether something accepts connections on the port. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(2000);
    socket.once('connect', () => resolve(!!socket.destroy()));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => resolve(!socket.destroy()));
  });
}

/** Runs `npm <args>` in the checkout, waits for the gateway's port, stops npm with `signal` (the whole group with `group`), and checks the drain. */
async function stopsCleanly(args: string[], listening: RegExp, signal: NodeJS.Signals, group: boolean): Promise<void> {
  const proc = startProcess('npm', args, { cwd: PROJECT_ROOT, env: env(args.join('-')), group });
  running.push(proc);
  // A build first, should dist/ be older than src/, takes a minute on these machines.
  const [, port = ''] = await proc.waitFor(listening, 90_000);
  assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([proc.stop(signal), new Promise((r) => (timer = setTimeout(() => r('still running after 30 s'), 30_000)))]);
  clearTimeout(timer);
  assert.equal(code, 0, `npm ${args.join(' ')} after ${signal}:\n${proc.output()}`);
  assert.match(proc.output(), /"msg":"stopped; every request in flight finished"/);
  assert.equal(await accepting(Number(port)), false, `port ${port} still taken after npm exited`);
}

const START = /"url":"http:\/\/127\.0\.0\.1:(\d+)"[^\n]*"msg":"gateway listening"/;
const DEMO = /demo listening on http:\/\/127\.0\.0\.1:(\d+)/;

test(
  'SIGTERM to `npm start` reaches the gateway: it drains, npm exits 0, the port is closed',
  { skip: npm.status !== 0 && 'npm is not on PATH', timeout: 150_000 },
  () => stopsCleanly(['start'], START, 'SIGTERM', false),
);

test(
  'SIGTERM to `npm run demo` reaches the gateway: it drains, npm exits 0, the port is closed',
  { skip: npm.status !== 0 && 'npm is not on PATH', timeout: 150_000 },
  () => stopsCleanly(['run', 'demo'], DEMO, 'SIGTERM', false),
);

test(
  'Ctrl-C on `npm start` (SIGINT to the group, and npm’s copy of it) drains rather than cutting the drain short',
  { skip: npm.status !== 0 && 'npm is not on PATH', timeout: 150_000 },
  () => stopsCleanly(['start'], START, 'SIGINT', true),
);

test('the first build says what it does before the minute it takes, and nothing when dist/ is current', () => {
  // A folder with the two scripts, one source file, and a "build" that writes what dist-fresh looks for.
  const dir = join(root, 'build-notice');
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'src'));
  for (const f of ['dist-fresh.mjs', 'gateway.mjs']) copyFileSync(join(PROJECT_ROOT, 'scripts', f), join(dir, 'scripts', f));
  writeFileSync(join(dir, 'src/a.ts'), 'export {};\n');
  writeFileSync(
    join(dir, 'build.mjs'),
    [
      "import { mkdirSync, writeFileSync } from 'node:fs';",
      "mkdirSync('dist/src', { recursive: true });",
      "mkdirSync('dist/console', { recursive: true });",
      "writeFileSync('dist/src/cli.js', 'console.log(`cli ${process.argv.slice(2).join(\" \")}`);\\n');",
      "writeFileSync('dist/console/main.js', '');",
      "writeFileSync('dist/.built-src', '');",
    ].join('\n'),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'x', private: true, type: 'module', scripts: { build: 'node build.mjs' } }));
  const run = () =>
    spawnSync(process.execPath, ['scripts/gateway.mjs', 'start', '--config', 'mydir'], {
      cwd: dir,
      env: env('build-notice'),
      encoding: 'utf8',
      timeout: 60_000,
    });
  const first = run();
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stderr, /^dist\/src\/cli\.js is missing: building first with npm run build \(a minute or so the first time/m);
  assert.match(first.stderr, /^built in \d+ s$/m);
  assert.equal(first.stdout, 'cli start --config mydir\n', 'then the built CLI runs, with the arguments');
  const second = run();
  assert.equal(second.status, 0, second.stderr);
  assert.equal(second.stderr, '', 'no notice once dist/ is current');
  assert.equal(second.stdout, 'cli start --config mydir\n');
});
