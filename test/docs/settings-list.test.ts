/**
 * One list of settings (src/settings.ts), which `gateway init` writes into `.env.example`: it names
 * every variable src/ reads, and the settings table of docs/operating.md names the same ones.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { SETTINGS } from '../../src/settings.js';

const listed = new Set(SETTINGS.map((s) => s.name));

/** Every environment variable src/ reads by name (`env.NAME`, `env['NAME']`), with a file that reads it. */
function readInSource(): Map<string, string> {
  const found = new Map<string, string>();
  const src = join(PROJECT_ROOT, 'src');
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(src, f))) {
    for (const [, a, b] of readFileSync(file, 'utf8').matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g)) {
      const name = a ?? b ?? '';
      if (!found.has(name)) found.set(name, relative(PROJECT_ROOT, file));
    }
  }
  return found;
}

test('every variable src/ reads is in the list of settings (src/settings.ts)', () => {
  const read = readInSource();
  assert.ok(read.size >= 20, `the scan found only ${read.size} variables: is it still reading src/?`);
  const missing = [...read].filter(([name]) => !listed.has(name)).map(([name, file]) => `${name} (read in ${file})`);
  assert.deepEqual(missing, [], 'add these to SETTINGS in src/settings.ts (gateway init writes the list into .env.example) and to docs/operating.md');
  const unread = [...listed].filter((name) => !read.has(name));
  assert.deepEqual(unread, [], 'settings listed that src/ never reads');
});

test('the settings table of docs/operating.md names exactly the listed settings', () => {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs/operating.md'), 'utf8');
  const start = doc.indexOf('| variable | default | meaning |');
  assert.ok(start >= 0, 'docs/operating.md has its settings table');
  const table = doc.slice(start).split('\n\n')[0] ?? '';
  const rows = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
  assert.deepEqual([...rows].sort(), [...listed].sort());
  assert.equal(new Set(rows).size, rows.length, 'a variable in two rows');
});
