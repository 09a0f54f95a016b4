import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';

/** The version of this package (package.json), for `gateway --version` and what `init` writes. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
