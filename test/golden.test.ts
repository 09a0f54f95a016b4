import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { loadConfigOrThrow } from '../src/config/load.js';
import { PROJECT_ROOT } from '../src/config/paths.js';
import { runGolden } from '../src/golden/runner.js';
import { GOLDEN_SUITES } from '../src/golden/suites.js';

for (const suite of GOLDEN_SUITES) {
  test(`golden cases of ${suite.cases}: every mapping agrees with its cases`, async (t) => {
    const results = await runGolden(suite.configDir, suite.casesDir);
    assert.ok(results.length > 0, `no golden cases found in ${suite.cases}`);
    for (const r of results) {
      await t.test(r.name, () => {
        assert.ok(r.ok, r.diff);
      });
    }
  });

  test(`golden cases of ${suite.cases}: every profile of its config has a folder of cases`, () => {
    const snapshot = loadConfigOrThrow(suite.configDir);
    const folders = new Set(readdirSync(suite.casesDir));
    for (const profile of snapshot.profiles.keys()) assert.ok(folders.has(profile), `${suite.cases}/${profile} is missing`);
  });
}

test('golden cases: an answer scripted two ways, or bytes that are not base64, fail the case, saying so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-golden-malformed-'));
  try {
    mkdirSync(join(dir, 'alpha-native'));
    const request = { method: 'POST', path: '/v1beta/models/alpha-3-pro-image-preview:generateContent', body: {} };
    const response = { status: 200, body: {} };
    writeFileSync(join(dir, 'alpha-native/two-bodies.yaml'), stringify({ description: 'd', request, upstream_response: { status: 200, body: {}, body_base64: 'iVBORw==' }, upstream: null, response }));
    const step = { request, upstream_response: { status: 200, raw_body: '' }, upstream: null, response, then: [{ upstream_response: { status: 200, body_base64: 'not base64!' }, upstream: null }] };
    writeFileSync(join(dir, 'alpha-native/not-base64.yaml'), stringify({ description: 'd', steps: [step] }));
    const results = await runGolden(PROJECT_ROOT, dir);
    assert.deepEqual(
      results.map((r) => [r.name, r.ok, r.diff]),
      [
        ['alpha-native/not-base64', false, 'the case is malformed: step 1: then[0].upstream_response.body_base64 is not base64 (standard alphabet, padded)'],
        ['alpha-native/two-bodies', false, 'the case is malformed: upstream_response gives body and body_base64; give one of body, raw_body, body_base64'],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
