/**
 * The models a token may use (GET /v1/models): by the token's group and list, only from the
 * channels the snapshot routes to (a channel left out lists nothing), the way rankChannels routes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { formatIssue } from '../../src/config/issues.js';
import { loadConfig } from '../../src/config/load.js';
import { isModelRoute } from '../../src/config/lookups.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { availableModels, mayUseModel } from '../../src/routing/available-models.js';
import { rankChannels } from '../../src/routing/rank-channels.js';
import { modelsOf } from '../helpers/route-parts.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-models-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The shipped config with only the epsilon video channel's credentials set, and a vip group with an alpha channel of its own. */
function snapshotWithVip(): Snapshot {
  mkdirSync(join(dir, 'channels.d'), { recursive: true });
  writeFileSync(
    join(dir, 'channels.d', 'vip.yaml'),
    `version: 1
groups:
  vip: { description: tokens of the models test }
channels:
  - name: alpha-vip
    profile: alpha-native
    base_url: http://127.0.0.1:9
    secrets: { key: k }
    groups: [vip]
    models: [alpha-3-pro-image-preview]
`,
  );
  const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env: { EPSILON_BASE_URL: 'http://127.0.0.1:9', EPSILON_API_KEY: 'k' }, extraDirs: [dir] });
  assert.ok(snapshot, issues.map(formatIssue).join('\n'));
  return snapshot;
}

test('a token lists the models of the channels in its group, and only those the snapshot routes to', () => {
  const snapshot = snapshotWithVip();
  // The two channels of the epsilon vendor's variables, and the vip one.
  assert.deepEqual(snapshot.channels.map((c) => c.name).sort(), ['alpha-vip', 'epsilon-image', 'epsilon-video']);
  assert.ok(
    snapshot.leftOut.some((c) => c.name === 'alpha-primary'),
    'the shipped alpha channel is left out',
  );
  assert.deepEqual(availableModels(snapshot, { group: 'default', models: null }), [
    'epsilon-4-2-image',
    'epsilon-video-3',
    'epsilon-video-3-max',
    'epsilon-video-3-pro',
  ]);
  assert.deepEqual(availableModels(snapshot, { group: 'vip', models: null }), ['alpha-3-pro-image-preview']);
  assert.deepEqual(
    availableModels(snapshot, { group: 'vip', models: ['alpha-3-pro-image-preview', 'epsilon-video-3'] }),
    ['alpha-3-pro-image-preview'],
    'the list narrows, the group still holds',
  );
  assert.deepEqual(availableModels(snapshot, { group: 'default', models: ['epsilon-video-3', 'GV-*'] }), ['epsilon-video-3'], 'a pattern is never a model');
  assert.deepEqual(availableModels(snapshot, { group: 'nobody', models: null }), []);
  // A model of a left-out channel (the pattern channel too) is not one the token may use.
  assert.equal(mayUseModel(snapshot, { group: 'default', models: null }, 'GV-x'), false);
  assert.equal(mayUseModel(snapshot, { group: 'default', models: null }, 'alpha-3-pro-image-preview'), false);
});

test('what is listed is what routing takes, and what is refused routing refuses too', () => {
  const snapshot = snapshotWithVip();
  // The routes whose client names the model (a route with a fixed model, the assets', names none).
  const routes = snapshot.routes.filter(isModelRoute).filter((r) => r.model !== null && r.model.from !== 'value');
  for (const group of ['default', 'vip', 'nobody']) {
    const token = { id: 't', name: 't', keyHash: 'h', group, models: null, quota: null, used: 0, disabled: false, createdAt: 0 };
    const listed = new Set(availableModels(snapshot, token));
    const names = new Set(snapshot.routes.flatMap((r) => [...modelsOf(r).exact]));
    for (const model of names) {
      const routed = routes.some((r) => {
        try {
          return r.models.exact.has(model) && rankChannels(snapshot, r, model, token).length > 0;
        } catch {
          return false;
        }
      });
      assert.equal(listed.has(model), routed, `${group}: ${model}`);
    }
  }
});
