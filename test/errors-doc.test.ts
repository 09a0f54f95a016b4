import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../src/config/paths.js';
import { catalogue } from '../src/errors/catalogue.js';

test('the README error table and the error catalogue agree row for row', () => {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('| code | HTTP | shape | when |');
  assert.ok(start >= 0, 'README has no error table');
  const rows = readme
    .slice(start)
    .split('\n')
    .slice(2)
    .filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  const documented = rows.map(([code, status, shape, when]) => ({ code: code!.replace(/`/g, ''), status: Number(status), shape, when }));
  const actual = Object.entries(catalogue).map(([code, e]) => ({ code, status: e.status, shape: e.shape, when: e.when }));
  assert.deepEqual(documented, actual);
});
