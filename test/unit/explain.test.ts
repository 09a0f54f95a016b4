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

test("explain shows each channel's profile proof: the pinned vendor artifact that proves it, or none", () => {
  const shipped = loadConfigOrThrow(PROJECT_ROOT, { env: { ZETA_BASE_URL: 'http://127.0.0.1:9', ZETA_API_KEY: 'k' } });
  const zeta = explainModel(shipped, 'zeta-image-2')?.join('\n') ?? '';
  // Its strictest pinned artifact: OpenAI's specification, ahead of the openai package also pinned.
  assert.match(zeta, /profile zeta-openai \(proof: specification test\/contract\/specs\/openai-openapi\.json\)/);
  const text = explainModel(snapshot, 'm1')!.join('\n');
  assert.match(text, /\(proof: none \(our own reading\)\)/, 'a profile that names no pinned vendor artifact says so');
});
