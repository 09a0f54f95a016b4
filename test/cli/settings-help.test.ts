/**
 * `gateway --help` lists every setting with its default, made from src/settings.ts's own list
 * (src/cli/settings-help.ts), so a setting the gateway reads cannot be left out of it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { SETTINGS } from '../../src/settings.js';
import { runCli } from '../helpers/process.js';

/** The variables read by the functions that read the settings (env.NAME, env['NAME']). */
function readBySettings(): string[] {
  const names = new Set<string>();
  for (const file of ['src/app.ts', 'src/webhooks/webhook-settings.ts', 'src/archive/archive-env.ts', 'src/log.ts']) {
    for (const [, a, b] of readFileSync(join(PROJECT_ROOT, file), 'utf8').matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g))
      names.add(a ?? b ?? '');
  }
  return [...names];
}

test('--help lists every setting of src/settings.ts with its default, and every variable settingsFromEnv reads', () => {
  const r = runCli(['--help']);
  assert.equal(r.status, 0, r.stderr);
  const start = r.stdout.indexOf('\nsettings (environment');
  assert.ok(start > 0, r.stdout);
  const listed = r.stdout.slice(start);
  const names = new Set([...listed.matchAll(/\b([A-Z][A-Z0-9_]{2,})\b/g)].map((m) => m[1]));
  const read = readBySettings();
  assert.ok(read.length >= 40, `the scan found only ${read.length} variables`);
  assert.deepEqual(
    read.filter((n) => !names.has(n)),
    [],
    'read by the settings but missing from --help',
  );
  for (const s of SETTINGS) {
    assert.ok(listed.includes(s.default === null ? s.name : `${s.name} (${s.default})`), `${s.name} with its default`);
  }
  for (const name of ['GATEWAY_PUBLIC_URL', 'GATEWAY_LINK_TTL_MS', 'GATEWAY_WEBHOOK_TIMEOUT_MS']) assert.ok(names.has(name), name);
});
