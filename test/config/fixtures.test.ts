/**
 * One runner for the config fixtures: every directory under test/fixtures/config breaks exactly one
 * rule of the loader, and its expected.txt holds the error lines `formatIssue` must print for it.
 * `UPDATE_FIXTURES=1` rewrites expected.txt from the current output; review the diff by eye.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatIssue } from '../../src/config/issues.js';
import { loadConfig } from '../../src/config/load.js';
import { channelEnv } from '../helpers/channel-env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';

const FIXTURES = join(PROJECT_ROOT, 'test/fixtures/config');
const UPDATE = process.env.UPDATE_FIXTURES === '1';

const fixtures = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

test('the config fixture folder is not empty', () => {
  assert.ok(fixtures.length > 0, `no fixtures under ${FIXTURES}`);
});

for (const name of fixtures) {
  test(`config fixture ${name}`, () => {
    const dir = join(FIXTURES, name);
    const { snapshot, issues } = loadConfig(dir, { env: {} });
    // Messages that quote a file system path name the fixture folder, not this machine's layout.
    const actual = issues.filter((i) => i.severity === 'error').map((i) => formatIssue(i).split(dir).join('<fixture>'));
    const expectedFile = join(dir, 'expected.txt');
    if (UPDATE) writeFileSync(expectedFile, actual.map((l) => `${l}\n`).join(''));
    const expected = readFileSync(expectedFile, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    assert.equal(snapshot, null, 'a fixture that breaks a rule must not load');
    assert.ok(expected.length > 0, 'expected.txt must name at least one error');
    assert.deepEqual(actual, expected);
  });
}

test('the repository config loads without issues when its environment is set', () => {
  const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env: channelEnv() });
  assert.deepEqual(issues.map(formatIssue), []);
  assert.ok(snapshot);
  assert.ok(snapshot.routes.length > 0);
  assert.ok(snapshot.channels.length > 0);
});

test('the repository config loads with warnings only when env may be missing', () => {
  const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env: {} });
  assert.ok(snapshot, issues.map(formatIssue).join('\n'));
  assert.ok(issues.length > 0, 'unset ${VAR} references should be reported');
  assert.deepEqual(issues.filter((i) => i.severity !== 'warning').map(formatIssue), []);
  for (const i of issues) assert.match(i.message, /^environment variable [A-Z_]+ is not set/);
  // The channel with unset references is left out, not half-configured.
  assert.equal(snapshot.channels.length, 0);
});

test('two routes may share one body schema file that declares an $id', () => {
  const dir = mkdtempSync(join(tmpdir(), 'config-shared-schema-'));
  try {
    const route = (id: string) =>
      `  - { id: ${id}, method: POST, path: "/${id}/{model}", kind: sync, operation: generate, model: { path: model }, models: [${id}-m], body: { schema: body.json }, links: [] }\n`;
    writeFileSync(join(dir, 'routes.yaml'), `version: 1\nroutes:\n${route('a')}${route('b')}families:\n  - { name: f, models: [a-m, b-m] }\n`);
    writeFileSync(join(dir, 'body.json'), JSON.stringify({ $id: 'https://example.test/body.json', type: 'object' }));
    writeFileSync(
      join(dir, 'channels.yaml'),
      [
        'version: 1',
        'groups: { default: {} }',
        'profiles:',
        '  p:',
        '    auth: { type: none }',
        '    operations:',
        '      generate: { request: { method: POST, path: \'"/g"\' }, response: { body: body } }',
        'channels:',
        '  - { name: c1, profile: p, base_url: "http://127.0.0.1:9", groups: [default], models: [a-m, b-m] }',
        '',
      ].join('\n'),
    );
    const { snapshot, issues } = loadConfig(dir, { env: {} });
    assert.deepEqual(issues.map(formatIssue), []);
    assert.equal(snapshot?.routes.length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
