/**
 * The generated documents (src/docs/generated-docs.ts) as a whole: `gateway docs` checks them all
 * in a real process, and a drift is reported as a short diff of the lines that differ, never the
 * whole file (test/helpers/line-diff.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GENERATED_DOCS } from '../../src/docs/generated-docs.js';
import { docDrift } from '../helpers/doc-drift.js';
import { lineDiff } from '../helpers/line-diff.js';
import { runCli } from '../helpers/process.js';

test('gateway docs (a real process) finds every generated document of docs/generated/ current', () => {
  const r = runCli(['docs']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(
    r.stdout.trim().split('\n'),
    GENERATED_DOCS.map((d) => `current ${d.path}`),
  );
});

test('a line diff shows the hunks that differ with two lines of context, numbered as in both texts', () => {
  const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join('\n');
  const after = ['a', 'b', 'c', 'D', 'e', 'f', 'g', 'h', 'i', 'j', 'k'].join('\n');
  assert.equal(
    lineDiff(before, after),
    ['--- before', '+++ after', '@@ -2,5 +2,5 @@', ' b', ' c', '-d', '+D', ' e', ' f', '@@ -9,2 +9,3 @@', ' i', ' j', '+k'].join('\n'),
  );
  assert.equal(lineDiff(before, before), '');
});

test('a one-line change in a 6,000-line document is a diff of a few lines and the command to run', () => {
  const lines = Array.from({ length: 6000 }, (_, i) => `    "line ${i}": ${i},`);
  const committed = lines.join('\n');
  const fresh = [...lines.slice(0, 3000), '    "a new line": true,', ...lines.slice(3000)].join('\n');
  const drift = docDrift('docs/generated/openapi.json', fresh, committed) ?? '';
  assert.match(drift, /^\+ {4}"a new line": true,$/m);
  assert.match(drift, /\nrun npm run docs$/);
  assert.ok(drift.split('\n').length < 15, drift);
});

test('a diff longer than its budget is cut, saying how much was left out', () => {
  const before = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n');
  const after = Array.from({ length: 500 }, (_, i) => `line ${i}${i % 2 === 0 ? ' changed' : ''}`).join('\n');
  const diff = lineDiff(before, after, { maxLines: 40 }).split('\n');
  assert.equal(diff.length, 41);
  assert.match(diff.at(-1)!, /^… and \d+ more line\(s\) of diff$/);
});
