/**
 * The allocation budget (issue 41): bytes of V8 heap the gateway allocates per images-route
 * request. Allocation is not a timing: a busy machine slows a request down but does not make it
 * allocate more, so a test can hold it where it could never hold a latency.
 *
 * The gateway runs in a process of its own (../helpers/alloc-gateway.ts), the simulator and the
 * client in another (../helpers/alloc-client.ts), so the
 * figure is the gateway's alone: the shipped config (zeta-images channel, profile zeta-openai), an
 * in-memory store, the request log on. After a warm-up, a few thousand `POST
 * /v1/images/generations` (zeta-image-1, b64_json: a small answer from a fast vendor) are sent,
 * eight at once, and the heap allocated while they ran, per request, must stay under BUDGET_BYTES.
 * How it is counted: ../helpers/heap-allocation.ts; docs/testing.md, "Allocation budget (issue 41)".
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { type AllocationReport, CALIBRATION_BYTES } from '../helpers/alloc-protocol.js';

/**
 * The budget per request (issue 41): 60 KB on Node 20. This test read about 140 KB there before the
 * issue's changes and 54.5 KB after them (bench/overhead, with its own set-up, read about 170
 * before). Node 24's own HTTP server and undici allocate more for the same request: the same code
 * reads 62.0 KB there, so Node 22 and later get 68 KB, about the same margin. Lower it as the figure
 * falls; raise it only with the reason in the commit.
 */
const BUDGET_BYTES = (process.versions.node.startsWith('20.') ? 60 : 68) * 1024;
/** Requests measured: enough that a GC more or less, or a timer's work, is a small share. */
const REQUESTS = 2_000;

test(`an images-route request allocates less than ${BUDGET_BYTES / 1024} KB of heap`, () => {
  const run = spawnSync(process.execPath, [join(PROJECT_ROOT, 'dist/test/helpers/alloc-gateway.js'), String(REQUESTS)], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 0, `alloc-gateway exited ${run.status ?? run.signal}: ${run.stderr}`);
  const report = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as AllocationReport;
  // the measure must see a known allocation before its figure means anything
  const seen = report.calibrationBytes / CALIBRATION_BYTES;
  assert.ok(seen > 1 && seen < 1.1, `16 MB of short-lived arrays read as ${report.calibrationBytes} bytes`);
  assert.equal(report.warmUp.failed, 0, `warm-up: ${report.warmUp.firstFailure}`);
  assert.equal(report.measured.failed, 0, `measured: ${report.measured.firstFailure}`);
  assert.equal(report.measured.ok, REQUESTS);
  const figure = `${(report.bytesPerRequest / 1024).toFixed(1)} KB of heap per request (budget ${BUDGET_BYTES / 1024} KB; ${REQUESTS} requests, ${report.inFlight} at once)`;
  console.log(`allocation budget: ${figure}`);
  assert.ok(report.bytesPerRequest < BUDGET_BYTES, figure);
});
