/**
 * `gateway check` as an operator runs it, on the faults an operator makes most (issue 28): each
 * planted fault is a fixture of test/fixtures/config, whose expected.txt the loader API is held to
 * by test/config/fixtures.test.ts; here the real process must print exactly that one message. Unset
 * channel variables come out as one summary line after the errors (--verbose: each; --quiet: none).
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { reportLines } from '../../src/cli/check-command.js';
import { loadConfig } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { makeConfigDir } from '../helpers/config-dir.js';
import { runCli } from '../helpers/process.js';

/** The planted faults: a fixture each, and what its one message must say. */
const PLANTED: Record<string, RegExp> = {
  'function-misspelled-request': /^channels\.yaml:12:\d+: unknown function \$segmnt \(did you mean \$segment\?\)$/,
  'function-misspelled-price': /^channels\.yaml:21:\d+: unknown function \$nubmer \(did you mean \$number\?\)$/,
  'function-misspelled-task-answer': /^routes\.yaml:14:\d+: unknown function \$precent \(did you mean \$percent\?\)$/,
  // The comment above the line at fault is not the fault.
  'yaml-bad-indent-under-comment': /^channels\.yaml:16:7: wrong indentation: .* \(YAML BAD_INDENT\)$/,
  'channel-misspelled-field': /^channels\.yaml:20:\d+: channel "zeta-main": unknown field "base_ulr" \(did you mean "base_url"\?\)$/,
  'route-misspelled-field': /^routes\.yaml:7:\d+: route "generate": unknown field "opration" \(did you mean "operation"\?\)$/,
};

/** The line check starts with but for --quiet: the directory it read, here named by its argument. */
const readFrom = (dir: string) => `config: ${dir} (from the argument)\n`;

for (const [name, message] of Object.entries(PLANTED)) {
  test(`check: the planted fault ${name} gives exactly one clear message`, () => {
    const expected = readFileSync(join(PROJECT_ROOT, 'test/fixtures/config', name, 'expected.txt'), 'utf8');
    const lines = expected.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, `${name}/expected.txt holds one message`);
    assert.match(lines[0] ?? '', message);
    const r = runCli(['check', `test/fixtures/config/${name}`]);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, `${readFrom(join(PROJECT_ROOT, 'test/fixtures/config', name))}${lines[0]}\n1 error(s)\n`);
    assert.equal(r.stderr, '');
  });
}

const ROUTES = `version: 1
routes:
  - { id: generate, method: POST, path: "/v1/models/{model}:generate", kind: sync, operation: generate, model: { path: model }, models: [m1], links: [] }
families:
  - { name: f, models: [m1] }
`;

const channel = (name: string, url: string, key: string, group = 'default') =>
  `  - { name: ${name}, profile: p, base_url: "${url}", secrets: { key: "${key}" }, groups: [${group}], models: [m1] }\n`;

const channels = (list: string) => `version: 1
groups:
  default: {}
profiles:
  p:
    auth: { type: header, name: authorization, value: "Bearer {key}" }
    operations:
      generate: { request: { method: POST, path: '"/g"' }, response: { body: body } }
channels:
${list}`;

/** Two channels whose variables are unset (three variables), one that serves. */
const UNSET = channel('a', 'http://127.0.0.1:9', '${CHECK_A_KEY}') + channel('b', '${CHECK_B_URL}', '${CHECK_B_KEY}') + channel('c', 'http://127.0.0.1:9', 'k');
const unsetDir = makeConfigDir('check-unset', { 'routes.yaml': ROUTES, 'channels.yaml': channels(UNSET) });
// The same, and a channel naming a group nobody declared: an error.
const brokenDir = makeConfigDir('check-unset-broken', {
  'routes.yaml': ROUTES,
  'channels.yaml': channels(UNSET + channel('d', 'http://127.0.0.1:9', 'k', 'nope')),
});
after(() => {
  rmSync(unsetDir, { recursive: true, force: true });
  rmSync(brokenDir, { recursive: true, force: true });
});
const NO_CHECK_ENV = { CHECK_A_KEY: '', CHECK_B_URL: '', CHECK_B_KEY: '' };
const SUMMARY = 'warning: 2 channels left out: their variables are unset (CHECK_A_KEY, CHECK_B_URL, CHECK_B_KEY); --verbose lists them';
const OK = 'ok: 1 route(s), 1 profile(s), 1 channel(s) serving, 2 left out';

test('check: unset variables are one summary line; --verbose lists each warning; --quiet prints none', () => {
  const r = runCli(['check', unsetDir], NO_CHECK_ENV);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, `${readFrom(unsetDir)}${SUMMARY}\n${OK}\n`);

  const verbose = runCli(['check', unsetDir, '--verbose'], NO_CHECK_ENV);
  assert.equal(verbose.status, 0);
  const lines = verbose.stdout.split('\n').filter((l) => l !== '');
  assert.equal(`${lines.shift()}\n`, readFrom(unsetDir));
  assert.deepEqual(
    lines.map((l) => l.replace(/^channels\.yaml:\d+:\d+: /, '')),
    [
      'warning: environment variable CHECK_A_KEY is not set (channel a); the channel is left out until it is',
      'warning: environment variable CHECK_B_URL is not set (channel b); the channel is left out until it is',
      'warning: environment variable CHECK_B_KEY is not set (channel b); the channel is left out until it is',
      OK,
    ],
  );

  const quiet = runCli(['check', unsetDir, '--quiet'], NO_CHECK_ENV);
  assert.equal(quiet.status, 0);
  assert.equal(quiet.stdout, '');

  const both = runCli(['check', unsetDir, '--quiet', '--verbose'], NO_CHECK_ENV);
  assert.equal(both.status, 2);
  assert.match(both.stderr, /--verbose and --quiet exclude each other/);
});

test('check: errors come first, the summary of unset variables after them; --quiet keeps the errors', () => {
  const r = runCli(['check', brokenDir], NO_CHECK_ENV);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  assert.equal(`${lines.shift()}\n`, readFrom(brokenDir));
  assert.equal(lines.length, 3, r.stdout);
  assert.match(lines[0] ?? '', /^channels\.yaml:\d+:\d+: .*nope/);
  assert.equal(lines[1], SUMMARY);
  assert.equal(lines[2], '1 error(s)');

  const quiet = runCli(['check', brokenDir, '--quiet'], NO_CHECK_ENV);
  assert.equal(quiet.status, 1);
  assert.deepEqual(
    quiet.stdout.split('\n').filter((l) => l !== ''),
    [lines[0], '1 error(s)'],
  );
});

test('the loader API: one warning per unset variable, each naming its variable and channel; reportLines sums them up', () => {
  const { snapshot, issues } = loadConfig(unsetDir, { env: NO_CHECK_ENV });
  assert.ok(snapshot);
  assert.deepEqual(
    issues.map((i) => [i.severity, i.unset]),
    [
      ['warning', { variable: 'CHECK_A_KEY', channel: 'a' }],
      ['warning', { variable: 'CHECK_B_URL', channel: 'b' }],
      ['warning', { variable: 'CHECK_B_KEY', channel: 'b' }],
    ],
  );
  assert.deepEqual(reportLines(issues, 'summary'), [SUMMARY]);
  assert.deepEqual(reportLines(issues, 'quiet'), []);
  assert.equal(reportLines(issues, 'verbose').length, 3);
});
