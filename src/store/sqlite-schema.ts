import type { LedgerEntry, LedgerKind, ResourceRecord, TaskPatch, TaskRecord, TokenRecord } from './store.js';

/**
 * The SQLite schema of the embedded store: its migrations (applied in order, each once), the rows
 * as SQLite gives them, and how they become the store's records.
 */

/** Schema steps; the store records how many ran in `schema_version`. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     key_hash TEXT NOT NULL UNIQUE,
     grp TEXT NOT NULL,
     models TEXT,
     quota INTEGER,
     used INTEGER NOT NULL DEFAULT 0,
     disabled INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL
   )`,
  `CREATE TABLE tasks (
     id TEXT PRIMARY KEY,
     token_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     route TEXT NOT NULL,
     model TEXT NOT NULL,
     upstream_model TEXT NOT NULL,
     channel TEXT NOT NULL,
     upstream_id TEXT,
     status TEXT NOT NULL,
     progress INTEGER NOT NULL DEFAULT 0,
     vendor_status TEXT,
     results TEXT NOT NULL DEFAULT '[]',
     error TEXT,
     context TEXT,
     seconds TEXT,
     size TEXT,
     price INTEGER NOT NULL,
     refunded INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     completed_at INTEGER,
     deadline_at INTEGER NOT NULL,
     version INTEGER NOT NULL
   );
   CREATE INDEX tasks_unfinished ON tasks (id) WHERE status IN ('submitting', 'queued', 'in_progress');`,
  // The usage ledger, and what a task needs for settlement. A store from before the ledger opens
  // with one debit row per token for what it had used, so its ledger balances from the start.
  `CREATE TABLE ledger (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     token_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     ref TEXT NOT NULL,
     model TEXT NOT NULL,
     amount INTEGER NOT NULL,
     at INTEGER NOT NULL
   );
   CREATE INDEX ledger_by_token ON ledger (token_id, id);
   ALTER TABLE tasks ADD COLUMN pricing TEXT;
   ALTER TABLE tasks ADD COLUMN charged INTEGER;
   UPDATE tasks SET charged = CASE WHEN refunded = 1 THEN 0 ELSE price END WHERE status IN ('completed', 'failed');
   INSERT INTO ledger (token_id, kind, ref, model, amount, at)
     SELECT id, 'debit', 'opening-balance', '', used, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM tokens WHERE used > 0;`,
  // Holds of synchronous requests in flight, so the debits of requests a crash cut off go back.
  `CREATE TABLE holds (
     ref TEXT PRIMARY KEY,
     token_id TEXT NOT NULL,
     model TEXT NOT NULL,
     amount INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX holds_by_expiry ON holds (expires_at);`,
  // Resources clients create besides tasks (assets), with their owner and the channel that holds them.
  `CREATE TABLE resources (
     kind TEXT NOT NULL,
     id TEXT NOT NULL,
     token_id TEXT NOT NULL,
     channel TEXT NOT NULL,
     vendor_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (kind, id)
   );`,
];

/** A `resources` row. */
export interface ResourceRow {
  kind: string;
  id: string;
  token_id: string;
  channel: string;
  vendor_id: string;
  created_at: number;
}

/** A resource as the store answers it. */
export function toResource(r: ResourceRow): ResourceRecord {
  return { kind: r.kind, id: r.id, tokenId: r.token_id, channel: r.channel, vendorId: r.vendor_id, createdAt: r.created_at };
}

/** A `holds` row. */
export interface HoldRow {
  ref: string;
  token_id: string;
  model: string;
  amount: number;
  expires_at: number;
}

/** A `tokens` row. */
export interface TokenRow {
  id: string;
  name: string;
  key_hash: string;
  grp: string;
  models: string | null;
  quota: number | null;
  used: number;
  disabled: number;
  created_at: number;
}

/** A token as the store answers it. */
export function toRecord(r: TokenRow): TokenRecord {
  return {
    id: r.id,
    name: r.name,
    keyHash: r.key_hash,
    group: r.grp,
    models: r.models === null ? null : (JSON.parse(r.models) as string[]),
    quota: r.quota,
    used: r.used,
    disabled: r.disabled !== 0,
    createdAt: r.created_at,
  };
}

/** A `tasks` row. */
export interface TaskRow {
  id: string;
  token_id: string;
  kind: string;
  route: string;
  model: string;
  upstream_model: string;
  channel: string;
  upstream_id: string | null;
  status: TaskRecord['status'];
  progress: number;
  vendor_status: string | null;
  results: string;
  error: string | null;
  context: string | null;
  seconds: string | null;
  size: string | null;
  price: number;
  pricing: string | null;
  charged: number | null;
  refunded: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  deadline_at: number;
  version: number;
}

/** A task as the store answers it. */
export function toTask(r: TaskRow): TaskRecord {
  return {
    id: r.id,
    tokenId: r.token_id,
    kind: r.kind,
    route: r.route,
    model: r.model,
    upstreamModel: r.upstream_model,
    channel: r.channel,
    upstreamId: r.upstream_id,
    status: r.status,
    progress: r.progress,
    vendorStatus: r.vendor_status,
    results: JSON.parse(r.results) as TaskRecord['results'],
    error: r.error === null ? null : (JSON.parse(r.error) as TaskRecord['error']),
    context: r.context === null ? null : (JSON.parse(r.context) as unknown),
    seconds: r.seconds,
    size: r.size,
    price: r.price,
    pricing: r.pricing === null ? null : (JSON.parse(r.pricing) as TaskRecord['pricing']),
    charged: r.charged,
    refunded: r.refunded !== 0,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    completedAt: r.completed_at,
    deadlineAt: r.deadline_at,
    version: r.version,
  };
}

/** A `ledger` row. */
export interface LedgerRow {
  id: number;
  token_id: string;
  kind: LedgerKind;
  ref: string;
  model: string;
  amount: number;
  at: number;
}

/** Column of each patchable field, and how its value is stored. */
export const PATCH_COLUMNS: Record<Exclude<keyof TaskPatch, 'refund' | 'settle'>, [string, (v: unknown) => unknown]> = {
  upstreamId: ['upstream_id', (v) => v],
  // A submission that fell back to another channel is accepted there.
  channel: ['channel', (v) => v],
  upstreamModel: ['upstream_model', (v) => v],
  status: ['status', (v) => v],
  progress: ['progress', (v) => v],
  vendorStatus: ['vendor_status', (v) => v],
  results: ['results', (v) => JSON.stringify(v)],
  error: ['error', (v) => (v === null ? null : JSON.stringify(v))],
  context: ['context', (v) => (v === null || v === undefined ? null : JSON.stringify(v))],
  seconds: ['seconds', (v) => v],
  size: ['size', (v) => v],
  updatedAt: ['updated_at', (v) => v],
  completedAt: ['completed_at', (v) => v],
  deadlineAt: ['deadline_at', (v) => v],
};

/** A ledger entry as the store answers it. */
export function toLedger(r: LedgerRow): LedgerEntry {
  return { id: r.id, tokenId: r.token_id, kind: r.kind, ref: r.ref, model: r.model, amount: r.amount, at: r.at };
}
