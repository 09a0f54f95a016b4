import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { runGolden } from '../../src/golden/runner.js';
import { GOLDEN_SUITES } from '../../src/golden/suites.js';

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

test('golden cases: an answer scripted two ways, bytes that are not base64, or a stream end without events, fail the case, saying so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-golden-malformed-'));
  try {
    mkdirSync(join(dir, 'alpha-native'));
    const request = { method: 'POST', path: '/v1beta/models/alpha-3-pro-image-preview:generateContent', body: {} };
    const response = { status: 200, body: {} };
    writeFileSync(
      join(dir, 'alpha-native/two-bodies.yaml'),
      stringify({ description: 'd', request, upstream_response: { status: 200, body: {}, body_base64: 'iVBORw==' }, upstream: null, response }),
    );
    const step = {
      request,
      upstream_response: { status: 200, raw_body: '' },
      upstream: null,
      response,
      // biome-ignore lint/suspicious/noThenProperty: `then` is the golden case format's own key (src/golden/golden-case.ts); this object is written out as YAML, never awaited.
      then: [{ upstream_response: { status: 200, body_base64: 'not base64!' }, upstream: null }],
    };
    writeFileSync(join(dir, 'alpha-native/not-base64.yaml'), stringify({ description: 'd', steps: [step] }));
    writeFileSync(
      join(dir, 'alpha-native/stream-two-ways.yaml'),
      stringify({ description: 'd', request, upstream_response: { status: 200, body: {}, events: [{ data: {} }] }, upstream: null, response }),
    );
    writeFileSync(
      join(dir, 'alpha-native/cut-without-events.yaml'),
      stringify({ description: 'd', request, upstream_response: { status: 200, body: {}, stream_end: 'cut' }, upstream: null, response }),
    );
    const results = await runGolden(PROJECT_ROOT, dir);
    assert.deepEqual(
      results.map((r) => [r.name, r.ok, r.diff]),
      [
        ['alpha-native/cut-without-events', false, 'the case is malformed: upstream_response.stream_end needs events'],
        ['alpha-native/not-base64', false, 'the case is malformed: step 1: then[0].upstream_response.body_base64 is not base64 (standard alphabet, padded)'],
        [
          'alpha-native/stream-two-ways',
          false,
          'the case is malformed: upstream_response gives body and events; give one of body, raw_body, body_base64, events',
        ],
        [
          'alpha-native/two-bodies',
          false,
          'the case is malformed: upstream_response gives body and body_base64; give one of body, raw_body, body_base64, events',
        ],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('golden: a config that does not load fails the run and leaves no recording vendor listening', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-golden-bad-'));
  try {
    writeFileSync(join(dir, 'routes.yaml'), 'routes: [not, a, route]\n');
    writeFileSync(join(dir, 'channels.yaml'), 'profiles: {}\nchannels: []\n');
    mkdirSync(join(dir, 'cases', 'any'), { recursive: true });
    writeFileSync(join(dir, 'cases', 'any', 'one.yaml'), 'request: {method: GET, path: /x}\n');
    // A process of its own, which must end by itself: a vendor left listening would keep it alive.
    const runner = pathToFileURL(join(PROJECT_ROOT, 'dist/src/golden/runner.js')).href;
    const script = `const { runGolden } = await import(${JSON.stringify(runner)}); await runGolden(process.argv[1], process.argv[2]).then(() => console.log('ran'), () => console.log('refused'));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, dir, join(dir, 'cases')], { timeout: 30_000 });
    assert.equal(stdout.trim(), 'refused');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
