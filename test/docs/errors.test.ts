/**
 * The error table, docs/generated/errors.md, is generated from the error catalogue: it must be what
 * `npm run docs` writes (else a short diff and the command), and it must say, row for row, what the
 * catalogue says.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderErrorsDoc } from '../../src/docs/generated-docs.js';
import { catalogue } from '../../src/errors/catalogue.js';
import { assertDocCurrent } from '../helpers/doc-drift.js';

test('docs/generated/errors.md is the table the error catalogue makes', () => {
  assertDocCurrent('docs/generated/errors.md', renderErrorsDoc());
});

test('the error table and the error catalogue agree row for row: code, HTTP status, shape, when', () => {
  const page = renderErrorsDoc();
  const start = page.indexOf('| code | HTTP | shape | when |');
  assert.ok(start >= 0, 'the page has the error table');
  const rows = page
    .slice(start)
    .split('\n')
    .slice(2)
    .filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')))
    .map((l) =>
      l
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.trim().replace(/\\\|/g, '|')),
    );
  const documented = rows.map(([code, status, shape, when]) => ({ code: code!.replace(/`/g, ''), status: Number(status), shape, when }));
  const actual = Object.entries(catalogue).map(([code, e]) => ({ code, status: e.status, shape: e.shape, when: e.when }));
  assert.deepEqual(documented, actual);
});
