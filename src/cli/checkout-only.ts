import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';
import { CliExit } from './args.js';

/**
 * Exits 2, saying why, unless the gateway runs from a clone of the repository, one holding every
 * path of `needs`: `golden` and `docs` work on the repository's own files (the golden cases, the
 * generated docs and the sources they are made from), which the installed package does not hold.
 */
export function requireCheckout(command: string, needs: readonly string[], what: string, npmScript: string): void {
  if (needs.every((p) => existsSync(join(PROJECT_ROOT, p)))) return;
  throw new CliExit(
    `gateway ${command} needs a clone of the repository: it ${what}, which the installed package does not hold (in a clone: npm ci, then ${npmScript})`,
    2,
  );
}
