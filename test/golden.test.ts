import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfigOrThrow } from '../src/config/load.js';
import { PROJECT_ROOT } from '../src/config/paths.js';
import { runGolden } from '../src/golden/runner.js';

const CASES = join(PROJECT_ROOT, 'test/golden');

test('golden cases: every mapping agrees with its cases', async (t) => {
  const results = await runGolden(PROJECT_ROOT, CASES);
  assert.ok(results.length > 0, 'no golden cases found');
  for (const r of results) {
    await t.test(r.name, () => {
      assert.ok(r.ok, r.diff);
    });
  }
});

test('golden cases: every profile of channels.yaml has a folder of cases', () => {
  const snapshot = loadConfigOrThrow(PROJECT_ROOT);
  const folders = new Set(readdirSync(CASES));
  for (const profile of snapshot.profiles.keys()) assert.ok(folders.has(profile), `test/golden/${profile} is missing`);
});
