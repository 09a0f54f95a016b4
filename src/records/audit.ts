import { createHash, randomUUID } from 'node:crypto';
import type { Store } from '../store/store.js';

/**
 * GATEWAY_AUDIT_DAYS's default: a year, what most audit regimes ask an operator to keep (SOC 2,
 * PCI DSS), and small (a record per operator action, not per request). 0 keeps records forever.
 */
export const DEFAULT_AUDIT_DAYS = 365;

/** Who acts through the `gateway tokens` commands: whoever may run them on the store's host. */
export const CLI_ACTOR = 'cli';

/**
 * Who acts through the admin routes: `admin:` and the first 12 hex digits of the admin key's
 * SHA-256. It names which key without being usable as one (a rotated key shows as another actor).
 */
export function adminActor(adminKey: string): string {
  return `admin:${createHash('sha256').update(adminKey).digest('hex').slice(0, 12)}`;
}

/** Who acts, on which store, and where a record that could not be written is told. */
export interface Operator {
  readonly store: Store;
  readonly actor: string;
  /** Told when the action was done but its audit record could not be written. */
  readonly lost: (message: string) => void;
  /** Unix ms; default the system clock. */
  readonly now?: () => number;
}

/**
 * Records an action that was done (docs/admin-and-metrics.md, "The audit log"). It never fails the
 * action: the change stands whatever happens here, so a record the store refused is told to
 * `lost` (the log, or the CLI's stderr), not thrown. `before` and `after` must hold no secret.
 */
export async function recordAudit(op: Operator, action: string, target: string | null, before: unknown, after: unknown): Promise<void> {
  try {
    await op.store.putAudit({ id: randomUUID(), at: op.now?.() ?? Date.now(), actor: op.actor, action, target, before: before ?? null, after: after ?? null });
  } catch (err) {
    op.lost(`the audit record of ${action}${target === null ? '' : ` on ${target}`} by ${op.actor} could not be written: ${(err as Error).message}`);
  }
}
