#!/usr/bin/env node
// Recomputes the SHA-256 that test/contract/specs/sources.json pins for an SDK extract: the files the
// extract was derived from, read at the pinned commit, concatenated in sorted path order. The
// extracts themselves are written by hand from those files; this only proves which files they were.
//
//   node scripts/spec-extracts/sdk-hashes.mjs <extract.json> <checkout>
//
// <checkout> is a clone of the entry's repository: a work tree (its files are read at the pinned
// commit through git, so a checkout of another commit still verifies) or a bare repository.
// Prints the pinned and computed hashes; exits 1 when they differ or a file is missing.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [extract, checkout] = process.argv.slice(2);
if (!extract || !checkout) {
  console.error('usage: node scripts/spec-extracts/sdk-hashes.mjs <extract.json> <checkout>');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const sources = JSON.parse(readFileSync(join(root, 'test/contract/specs/sources.json'), 'utf8'));
const entry = sources[extract];
if (!entry?.files?.length) {
  console.error(`${extract}: no entry with files in test/contract/specs/sources.json`);
  process.exit(2);
}
const hash = createHash('sha256');
for (const file of [...entry.files].sort()) {
  hash.update(execFileSync('git', ['-C', checkout, 'show', `${entry.commit}:${file}`], { maxBuffer: 64 * 1024 * 1024 }));
}
const computed = hash.digest('hex');
console.log(`${extract}: ${entry.repository}@${entry.commit}, ${entry.files.length} files`);
console.log(`pinned   ${entry.sha256}\ncomputed ${computed}`);
process.exit(computed === entry.sha256 ? 0 : 1);
