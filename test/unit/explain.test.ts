import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { explainModel } from '../../src/config/explain.js';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';

const snapshot = loadConfigOrThrow(join(PROJECT_ROOT, 'test/fixtures/explain-config'), { env: {} });

test('explain lists tiers by priority with each channel share, renaming and groups, never secrets', () => {
  const text = explainModel(snapshot, 'm1')!.join('\n');
  assert.match(text, /priority 1:\n {4}main-a {2}weight 3 \(75%\).*\n {4}main-b {2}weight 1 \(25%\).*upstream model vendor-m1/);
  assert.ok(text.indexOf('priority 1:') < text.indexOf('priority 0:'), 'the preferred tier comes first');
  assert.match(text, /priority 0:\n {4}backup {2}weight 1 \(100%\)/);
  assert.ok(!/secret-/.test(text), 'secrets never appear');
});

test('explain for a group keeps only the channels that serve it', () => {
  const text = explainModel(snapshot, 'm1', 'vip')!.join('\n');
  assert.match(text, /main-a {2}weight 3 \(100%\)/);
  assert.ok(!text.includes('main-b'));
  assert.match(text, /backup/);
});

test('explain says null for a model no route serves', () => {
  assert.equal(explainModel(snapshot, 'nope'), null);
});
