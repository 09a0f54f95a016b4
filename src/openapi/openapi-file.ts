import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';
import type { Snapshot } from '../config/snapshot.js';
import { renderOpenApi } from './openapi-document.js';

/**
 * The committed copy of the OpenAPI document (openapi.json at the project root), made from the
 * shipped config: `gateway openapi --write` rewrites it, and test/openapi.test.ts fails while it
 * differs from what the config makes, as the README catalogue does.
 */

/** Where the committed document is. */
export const OPENAPI_FILE = join(PROJECT_ROOT, 'openapi.json');

/** How to bring the committed document up to date, for messages (`npm run openapi` builds first). */
export const OPENAPI_WRITE_COMMAND = 'gateway openapi --write';
const FIX = `run \`${OPENAPI_WRITE_COMMAND}\` (\`npm run openapi\`)`;

/** Writes the snapshot's document to `file` (the committed copy by default). */
export function writeOpenApi(snapshot: Pick<Snapshot, 'routes'>, file: string = OPENAPI_FILE): void {
  writeFileSync(file, renderOpenApi(snapshot));
}

/** Null when `file` holds the snapshot's document; else what differs first, and the command that fixes it. */
export function openApiDrift(snapshot: Pick<Snapshot, 'routes'>, file: string = OPENAPI_FILE): string | null {
  const fresh = renderOpenApi(snapshot);
  let committed: string;
  try {
    committed = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return `${file} does not exist: ${FIX}`;
  }
  if (committed === fresh) return null;
  const a = committed.split('\n');
  const b = fresh.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (line: string | undefined) => (line === undefined ? '(end of file)' : JSON.stringify(line.trim().slice(0, 120)));
  return `${file} is not the document the config makes (line ${i + 1}: the file has ${show(a[i])}, the config makes ${show(b[i])}): ${FIX}`;
}
