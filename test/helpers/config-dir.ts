/**
 * A configuration a test writes: its files by name (routes.yaml, channels.yaml, a body schema),
 * text as written or a value written as JSON, in a directory of its own.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A configuration's files: a name (may hold a folder, `routes.d/x.yaml`) and its text or JSON value. */
export type ConfigFiles = Readonly<Record<string, string | object>>;

/** Writes `files` into `dir` (which exists). */
export function writeConfigFiles(dir: string, files: ConfigFiles): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
}

/** A new temporary directory named after `prefix`, holding `files`. The test removes it. */
export function makeConfigDir(prefix: string, files: ConfigFiles): string {
  const dir = mkdtempSync(join(tmpdir(), `gw-${prefix}-`));
  writeConfigFiles(dir, files);
  return dir;
}
