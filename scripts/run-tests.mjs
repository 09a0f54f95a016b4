#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with node's test runner. A script rather
// than a glob so the same command works on Node 20 (no glob support in --test) and Node 22+.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? find(join(dir, d.name)) : d.name.endsWith('.test.js') ? [join(dir, d.name)] : [],
  );
}

const only = process.argv.slice(2);
const files = find('dist/test')
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '--test-timeout=120000', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
