/**
 * The drift check of a generated document (src/docs/generated-docs.ts): the committed file must be
 * what its source makes now. On a mismatch the failure is a short diff of the lines that differ and
 * the command that fixes it, never the whole file.
 */
import assert from 'node:assert/strict';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { committedDoc, DOCS_COMMAND } from '../../src/docs/generated-docs.js';
import { lineDiff } from './line-diff.js';

/** Null when `committed` is `fresh`; else why not, as a short diff, and the command to run. */
export function docDrift(path: string, fresh: string, committed: string | null): string | null {
  if (committed === fresh) return null;
  if (committed === null) return `${path} does not exist: run ${DOCS_COMMAND}`;
  const diff = lineDiff(committed, fresh, { labels: [`${path} (committed)`, `${path} (what the config makes now)`] });
  return `${path} is stale; the lines that differ:\n${diff}\nrun ${DOCS_COMMAND}`;
}

/** Fails, with the short diff, unless the file at `path` (relative to `root`) holds `fresh`. */
export function assertDocCurrent(path: string, fresh: string, root: string = PROJECT_ROOT): void {
  const drift = docDrift(path, fresh, committedDoc(path, root));
  if (drift !== null) assert.fail(drift);
}
