/**
 * The quick fuzz profile (docs/testing.md, "Fuzzing") against a real gateway process: hostile requests of
 * every category over every route, and not one 5xx, crash, non-JSON error, wrong shape or hang.
 * The seed is random and printed; `FUZZ_SEED=<n>` replays a run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CATEGORIES } from './hostile-requests.js';
import { formatReport, runFuzz } from './harness.js';
import { startUnderTest, type UnderTest } from './gateway-under-test.js';
import { FUZZ_PROFILES } from './profiles.js';

let under: UnderTest;
before(async () => {
  under = await startUnderTest();
});
after(async () => {
  await under?.close();
});

test('quick fuzz profile: every category on every route, no finding', { timeout: 180_000 }, async (t) => {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  t.diagnostic(`seed ${seed} (FUZZ_SEED=${seed} replays it)`);
  const report = await runFuzz(under.targets, under.gateway, { ...FUZZ_PROFILES.quick, seed });
  const text = formatReport(report, 10);
  for (const line of text.split('\n').slice(0, CATEGORIES.length + 3)) t.diagnostic(line);
  assert.equal(report.crashes, 0, `${text}\n\n${under.crashOutput().slice(-3000)}`);
  assert.deepEqual(report.findings, [], text);
  assert.equal(report.sent, FUZZ_PROFILES.quick.requests, `every request was sent and judged within the profile's time:\n${text}`);
  for (const [category, s] of report.byCategory) assert.ok(s.sent > 0, `category ${category} was tried`);
});
