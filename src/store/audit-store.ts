/**
 * The audit log (docs/admin-and-metrics.md, "The audit log"): what operators changed, by whom,
 * from what to what, from the admin routes and the `gateway tokens` commands alike
 * (src/records/audit.ts writes it). Its records never hold a key or a key's hash.
 */
import { newestFirstSql } from './newest-first.js';

/** One operator action. */
export interface AuditRecord {
  readonly id: string;
  /** Unix milliseconds. */
  readonly at: number;
  /** Who: `admin:<first 12 hex of the admin key's SHA-256>`, or `cli`. */
  readonly actor: string;
  /** What: `token.create`, `token.disable`, `token.enable`, `token.quota`, `token.delete`, `config.reload`. */
  readonly action: string;
  /** What it acted on (a token id); null for the gateway as a whole (a reload). */
  readonly target: string | null;
  /** The target before and after (JSON), null when it did not exist before or after. */
  readonly before: unknown;
  readonly after: unknown;
}

/** Which audit records `findAudit` answers: filters narrow, `from` ≤ at < `to`, newest first by (at, id), after `before`. */
export interface AuditQuery {
  readonly actor?: string;
  readonly action?: string;
  readonly target?: string;
  readonly from?: number;
  readonly to?: number;
  readonly before: { readonly at: number; readonly id: string } | null;
  readonly limit: number;
}

/** The audit log in the store. */
export interface AuditStore {
  /** Records one action (an id already there is left as it is). */
  putAudit(record: AuditRecord): Promise<void>;
  /** A page of records, newest first (see AuditQuery). */
  findAudit(query: AuditQuery): Promise<AuditRecord[]>;
  /** Deletes up to `limit` records older than `before` (Unix ms), oldest first; returns how many (GATEWAY_AUDIT_DAYS). */
  deleteAuditBefore(before: number, limit: number): Promise<number>;
}

const FILTERS = [
  ['actor', 'actor'],
  ['action', 'action'],
  ['target', 'target'],
] as const;

/** The statement of findAudit for both SQL drivers, read off `audit_by_at (at, id)` walked backwards. */
export function findAuditSql(q: AuditQuery, param: (n: number) => string): { sql: string; args: unknown[] } {
  return newestFirstSql('audit', FILTERS, q, param);
}

/** An `audit` row of both drivers: before and after as JSON text. */
export interface AuditRow {
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  before: string | null;
  after: string | null;
}

/** The row of a record. */
export function auditRow(r: AuditRecord): AuditRow {
  return {
    id: r.id,
    at: r.at,
    actor: r.actor,
    action: r.action,
    target: r.target,
    before: r.before === null || r.before === undefined ? null : JSON.stringify(r.before),
    after: r.after === null || r.after === undefined ? null : JSON.stringify(r.after),
  };
}

/** A record as the store answers it. */
export function toAudit(r: AuditRow): AuditRecord {
  return {
    id: r.id,
    at: Number(r.at),
    actor: r.actor,
    action: r.action,
    target: r.target,
    before: r.before === null ? null : (JSON.parse(r.before) as unknown),
    after: r.after === null ? null : (JSON.parse(r.after) as unknown),
  };
}
