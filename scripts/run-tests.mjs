#!/usr/bin/env node
// Runs the compiled tests (dist/test/**/*.test.js) with node's test runner: all but the slow set
// (below), or with `--slow` the slow set only, with `--all` every file, or those whose path contains
// one of the arguments (`unit`, `e2e/alpha`), slow or not. A script rather than a glob so the same
// command works on Node 20 (no glob support in --test) and Node 22+.
//
// It runs what was built and does not build: `npm test` builds first; `npm run test:unit` does
// not, and this refuses to run a test whose TypeScript (or any of src/) changed since it was built,
// naming the command that rebuilds, so a quick run never tests yesterday's code. A compiled test
// whose source is gone (moved or deleted) is not run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { find, requireFresh } from './dist-fresh.mjs';

/** The TypeScript source of a compiled file (dist/x/y.js → x/y.ts). */
const sourceOf = (js) => js.slice('dist/'.length).replace(/\.js$/, '.ts');

/**
 * The slow set (`npm run test:slow`; CI runs it after `npm test`): files that start several gateway
 * processes at once (replicas), move a gigabyte, or run thousands of generated cases. Together they
 * took a third of the suite's CPU, and the suite is CPU-bound on two cores at about 9 minutes.
 */
const SLOW = ['test/replicas/', 'test/archive/archive-process.test', 'test/property/', 'test/fuzz/', 'test/gateway/mapping-budget.test'];
const isSlow = (f) => SLOW.some((s) => f.includes(s));

const args = process.argv.slice(2);
const set = args.includes('--slow') ? 'slow' : args.includes('--all') ? 'all' : 'fast';
const only = args.filter((a) => a !== '--slow' && a !== '--all');
const files = find('dist/test', '.test.js')
  .filter((f) => existsSync(sourceOf(f)))
  .filter((f) => (only.length > 0 ? only.some((o) => f.includes(o)) : set === 'all' || (set === 'slow') === isSlow(f)))
  .sort();
if (files.length === 0) {
  console.error(`no compiled test files under dist/test${only.length ? ` matching ${only.join(', ')}` : ''}: run npm run build:test`);
  process.exit(1);
}
requireFresh(['src', 'test'], 'npm run build:test');
// Test files run in processes of their own, this many at once: most of the suite's time is spent
// waiting on gateway, simulator, PostgreSQL and browser processes, not on this machine's two cores.
// Every test takes port 0, its own temp dir, schema and key prefix, so files do not meet.
// GATEWAY_TEST_CONCURRENCY=1 runs them one by one (to read one file's output undisturbed).
const concurrency = Number(process.env.GATEWAY_TEST_CONCURRENCY ?? 3);
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 16) {
  console.error(`GATEWAY_TEST_CONCURRENCY must be a whole number from 1 to 16, got ${process.env.GATEWAY_TEST_CONCURRENCY}`);
  process.exit(2);
}
// Node's test timeout bounds a whole file too. A slow file alone takes about a minute (the group
// limits over three replicas: 58 s), and three of them at once on two cores took over two (the 1 GB
// archive, the busy mapping test and the replicas): five minutes for a file with one, two for the rest.
const timeoutMs = files.some(isSlow) ? 300_000 : 120_000;
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', `--test-timeout=${timeoutMs}`, `--test-concurrency=${concurrency}`, ...files], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
