import type { ConfigControl, ReloadOutcome } from '../config/config-control.js';
import { formatIssue } from '../config/issues.js';
import { recordAudit, type Operator } from './audit.js';

/** Who reloads on SIGHUP, in the audit log. */
export const SIGNAL_ACTOR = 'signal';
/** Who reloads when a watched config file changed, in the audit log. */
export const FILE_WATCH_ACTOR = 'file-watch';

/** Problems a refused reload's record lists (the rest are counted), and the longest kept of each. */
const MAX_PROBLEMS = 20;
const MAX_PROBLEM_CHARS = 500;

/** What a reload's record says of the configuration serving: short, and nothing secret (no URL, no key). */
function summary(config: ConfigControl, replica: string) {
  const s = config.status();
  const snapshot = config.current();
  return {
    replica,
    generation: s.generation,
    version: s.version,
    routes: snapshot.routes.length,
    channels: snapshot.channels.length,
    left_out: snapshot.leftOut.length,
    groups: snapshot.groups.size,
  };
}

/**
 * Reloads (`config.reload(reason)`) and records it in the audit log as `config.reload` by `op`'s
 * actor: before, what served; after, what serves and how long the build took, or for a refused
 * reload `ok: false`, the errors counted and the first of them as `file:line:column: message`.
 * The record never fails the reload (recordAudit).
 */
export async function auditedReload(config: ConfigControl, op: Operator, reason: string, replica: string): Promise<ReloadOutcome> {
  const before = summary(config, replica);
  const outcome = await config.reload(reason);
  const errors = outcome.issues.filter((i) => i.severity === 'error');
  const after = outcome.ok
    ? { ok: true, ...summary(config, replica), ms: outcome.ms, warnings: outcome.issues.length - errors.length }
    : {
        ok: false,
        replica,
        generation: outcome.generation,
        version: config.status().version,
        ms: outcome.ms,
        errors: errors.length,
        problems: errors.slice(0, MAX_PROBLEMS).map((i) => formatIssue(i).slice(0, MAX_PROBLEM_CHARS)),
      };
  await recordAudit(op, 'config.reload', null, before, after);
  return outcome;
}
