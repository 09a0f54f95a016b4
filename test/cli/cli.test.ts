import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { pngSize } from '../../src/sim/png.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { CLI, runCli, startCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const NO_CHANNEL_ENV = { ALPHA_BASE_URL: '', ALPHA_API_KEY: '' };

const generate = {
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
};

test('check: the repository config is valid (unset channel variables are warnings, summed up in one line)', () => {
  const r = runCli(['check'], NO_CHANNEL_ENV);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^warning: \d+ channels left out: their variables are unset \(ALPHA_BASE_URL, ALPHA_API_KEY, .*\); --verbose lists them$/m);
  assert.doesNotMatch(r.stdout, /is not set/);
  assert.match(r.stdout, /^ok: \d+ route\(s\)/m);
  const verbose = runCli(['check', '--verbose'], NO_CHANNEL_ENV);
  assert.match(verbose.stdout, /channels\.yaml:\d+:\d+: warning: environment variable ALPHA_API_KEY is not set/);
});

test('check: a broken config prints file:line:column and exits 1', () => {
  const r = runCli(['check', 'test/fixtures/config/unknown-profile']);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /^channels\.yaml:\d+:\d+: unknown profile/m);
  assert.match(r.stdout, /1 error\(s\)/);
});

test('start: GATEWAY_STRICT=1 without channel credentials refuses to start and names the line', () => {
  const r = runCli(['start'], { ...NO_CHANNEL_ENV, PORT: '0', GATEWAY_DB: join(dir, 'start.db'), GATEWAY_STRICT: '1' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /channels\.yaml:\d+:\d+: environment variable ALPHA_API_KEY is not set/);
});

test('tokens: create prints the key once, list never shows it, unknown groups are refused', () => {
  const env = { GATEWAY_DB: join(dir, 'tokens.db') };
  const created = runCli(['tokens', 'create', '--group', 'default', '--quota', '5', '--name', 'ci'], env);
  assert.equal(created.status, 0, created.stderr);
  const key = created.stdout.trim();
  assert.match(key, /^gw-[A-Za-z0-9_-]{43}$/);
  const listed = runCli(['tokens', 'list'], env);
  assert.match(listed.stdout, /ci {2}group=default {2}quota=5 {2}used=0/);
  assert.ok(!listed.stdout.includes(key) && !listed.stdout.includes(key.slice(3)), 'the key is never listed');
  const bad = runCli(['tokens', 'create', '--group', 'nope'], env);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /group "nope" is not declared/);
});

test('a command line that is wrong is refused with the usage on stderr, exit 2, and changes nothing', () => {
  const env = { GATEWAY_DB: join(dir, 'strict.db') };
  const cases: [string[], RegExp][] = [
    [['tokens', 'create', '--group', 'default', '--nope', '1'], /--nope/],
    [['tokens', 'create', '--group', 'default', '--quota'], /--quota/],
    [['tokens', 'create', '--group'], /--group/],
    [['tokens', 'create', '--quota', '5'], /--group is required/],
    [['tokens', 'create', '--group=default', '--quota=1.5'], /--quota takes a whole number of 0 or more, not '1\.5'/],
    [['tokens', 'create', '--group=default', '--quota=-1'], /--quota takes a whole number/],
    [['tokens', 'create', '--group=default', '--models='], /--models takes model names/],
    [['tokens', 'set-quota', 'some-id', 'lots'], /whole number of 0 or more, or unlimited, not 'lots'/],
    [['tokens', 'delete'], /missing <token>/],
    [['tokens', 'disable', 'a', 'b'], /unexpected argument 'b'/],
    [['tokens', 'list', '--quota=1'], /--quota/],
    [['tokens', 'frob'], /unknown tokens command 'frob'/],
    [['sims', '--finish-ms'], /--finish-ms/],
    [['sims', '--finish-ms=soon'], /--finish-ms takes a whole number from 0 to 3600000/],
    [['golden', '--update=yes'], /--update/],
    [['explain'], /missing <model>/],
    [['check', 'a', 'b'], /unexpected argument 'b'/],
    [['catalogue', '--write', 'README.md'], /unexpected argument|positional/i],
    [['frob'], /unknown command 'frob'/],
  ];
  for (const [args, message] of cases) {
    const r = runCli(args, env);
    const what = `gateway ${args.join(' ')}`;
    assert.equal(r.status, 2, `${what}: ${r.stderr}`);
    assert.match(r.stderr, /^gateway: /, what);
    assert.match(r.stderr, message, what);
    assert.match(r.stderr, /^usage: gateway /m, `${what}: the usage follows`);
    assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  }
  assert.equal(runCli(['tokens', 'list'], env).stdout, '', 'no token was created');
});

test('--help, help and no command print the usage on stdout, exit 0; a command takes --help too', () => {
  for (const args of [['--help'], ['help'], [], ['-h']]) {
    const r = runCli(args);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: gateway <command>/);
    assert.match(r.stdout, /tokens set-quota <token> <N\|unlimited>/);
  }
  const create = runCli(['tokens', 'create', '--help']);
  assert.equal(create.status, 0);
  assert.match(create.stdout, /^usage: gateway tokens create --group G/);
});

test('golden: a filter that matches no case fails, saying so', () => {
  const r = runCli(['golden', 'no-such-case-anywhere']);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '', 'no "0 passed, 0 failed"');
  assert.match(r.stderr, /^gateway: no golden case name contains "no-such-case-anywhere"/);
});

test("golden: the made-up vendors' suite runs too, by the same filter", () => {
  const r = runCli(['golden', 'painter-bytes/png-answer']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, 'ok      painter-bytes/png-answer\n1 passed, 0 failed\n');
});

test('explain: the explanation on stdout, the warnings about left-out channels on stderr', () => {
  const r = runCli(['explain', 'alpha-3-pro-image-preview', '--group=default'], NO_CHANNEL_ENV);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^model alpha-3-pro-image-preview/);
  assert.doesNotMatch(r.stdout, /warning/);
  assert.match(r.stderr, /^warning: \d+ channels left out: their variables are unset \(ALPHA_BASE_URL, ALPHA_API_KEY, .*\); --verbose lists them$/m);
});

test('the gateway bin is executable after a build: dist/src/cli.js runs by its path', () => {
  // package.json `bin` is what `npx gateway` runs; tsc writes it without the execute bit, the build script adds it.
  const { bin } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  assert.equal(join(PROJECT_ROOT, bin.gateway!), CLI);
  assert.notEqual(statSync(CLI).mode & 0o111, 0, 'dist/src/cli.js has no execute bit');
  const r = spawnSync(CLI, ['--help'], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.error, undefined, String(r.error));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^usage: gateway <command>/);
});

test('demo: a real process serves an image with the printed key, logs no secret, and stops on SIGTERM', async () => {
  const db = join(dir, 'demo.db');
  const demo = startCli(['demo'], { ...NO_CHANNEL_ENV, PORT: '0', GATEWAY_DB: db, LOG_LEVEL: 'debug' });
  try {
    const [, base] = await demo.waitFor(/listening on (http:\/\/\S+)/);
    const [, key] = await demo.waitFor(/API key: (gw-\S+)/);
    const res = await fetch(`${base}/v1beta/models/alpha-3-pro-image-preview:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(generate),
    });
    assert.equal(res.status, 200);
    const answer = (await res.json()) as { candidates: { content: { parts: { inlineData?: { data: string } }[] } }[] };
    const part = answer.candidates[0]!.content.parts.find((p) => p.inlineData)!;
    assert.deepEqual(pngSize(Buffer.from(part.inlineData!.data, 'base64')), { width: 64, height: 36 });

    const failing = await fetch(`${base}/v1beta/models/alpha-3-pro-image-preview:generateContent?key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...generate, contents: [{ parts: [{ text: 'x [sim:fault=500]' }] }] }),
    });
    assert.equal(failing.status, 502);

    const logLines = demo
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    assert.ok(logLines.length > 0, 'the demo logs JSON lines');
    for (const line of logLines) assert.ok(!line.includes(key!) && !line.includes(key!.slice(3)), `a log line carries the key: ${line}`);
    assert.ok(!/sim-alpha-[0-9a-f]{12}/.test(demo.output()), 'the simulator key never appears in the output');
  } finally {
    assert.equal(await demo.stop(), 0);
  }
});

test('demo: GATEWAY_DEMO_KEY makes it accept that key', async () => {
  const key = 'gw-chosen-demo-key-for-the-test';
  const demo = startCli(['demo'], { ...NO_CHANNEL_ENV, PORT: '0', GATEWAY_DB: join(dir, 'demo2.db'), GATEWAY_DEMO_KEY: key });
  try {
    const [, base] = await demo.waitFor(/listening on (http:\/\/\S+)/);
    assert.match(demo.output(), new RegExp(`API key: ${key}`));
    const res = await fetch(`${base}/v1beta/models/alpha-2.5-flash-image-preview:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(generate),
    });
    assert.equal(res.status, 200);
  } finally {
    await demo.stop();
  }
});

test('demo: a port in use is reported in words, not as a stack', async () => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  try {
    const port = (blocker.address() as import('node:net').AddressInfo).port;
    const r = runCli(['demo'], { ...NO_CHANNEL_ENV, PORT: String(port), GATEWAY_DB: join(dir, 'busy.db') });
    assert.equal(r.status, 2);
    assert.match(r.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use; choose another with PORT=`));
  } finally {
    blocker.close();
  }
});

test('sims: one process serves every simulated vendor and prints the variables that point the channels at it', async () => {
  const sims = startCli(['sims', '--finish-ms', '100'], { GATEWAY_CONFIG_DIR: PROJECT_ROOT });
  try {
    await sims.waitFor(/ready \(SIGINT or SIGTERM stops them\)/);
    const env = Object.fromEntries(
      sims
        .output()
        .split('\n')
        .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    // Every channel of the shipped config has a simulated vendor, so every variable it names is printed.
    assert.deepEqual(Object.keys(env).sort(), [...channelEnvNames(PROJECT_ROOT)].sort());
    for (const [name, value] of Object.entries(env)) if (name.endsWith('_BASE_URL')) assert.match(value, /^http:\/\/127\.0\.0\.1:\d+$/, name);

    // A real gateway started with only those variables serves through them.
    const db = join(dir, 'sims.db');
    const created = runCli(['tokens', 'create', '--group', 'default'], { GATEWAY_DB: db, GATEWAY_CONFIG_DIR: PROJECT_ROOT });
    assert.equal(created.status, 0, created.stderr);
    const { proc, base } = await startGatewayProcess({
      ...env,
      GATEWAY_DB: db,
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_WATCH: '0',
      HOST: '127.0.0.1',
      PORT: '0',
    });
    try {
      const res = await fetch(`${base}/v1beta/models/alpha-3-pro-image-preview:generateContent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${created.stdout.trim()}`, 'content-type': 'application/json' },
        body: JSON.stringify(generate),
      });
      assert.equal(res.status, 200, await res.clone().text());
    } finally {
      await proc.stop();
    }
  } finally {
    assert.equal(await sims.stop('SIGTERM'), 0);
  }
});
