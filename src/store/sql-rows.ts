import type { BudgetPeriod } from './budget-period.js';
import type { LedgerEntry, LedgerKind, LinkRecord, ResourceRecord, TaskPatch, TaskRecord, TokenRecord, UsageGroup } from './store.js';

/** The one row a statement always answers (an aggregate, an INSERT … RETURNING, a CTE's last SELECT); none is the store's fault. */
export function onlyRow<T>(rows: readonly T[]): T {
  const [row] = rows;
  if (row === undefined) throw new Error('the statement answered no row');
  return row;
}

/**
 * The rows of the SQL drivers (SQLite and PostgreSQL keep the same columns: flags as 0/1, JSON as
 * text, times and units as integers), and how they become the store's records.
 */

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

/** A `links` row. */
export interface LinkRow {
  id: string;
  token_id: string;
  channel: string;
  url: string | null;
  data: Uint8Array | null;
  content_type: string | null;
  created_at: number;
  expires_at: number;
}

/** A link as the store answers it (libsql gives a BLOB as an ArrayBuffer view, pg as a Buffer). */
export function toLink(r: LinkRow): LinkRecord {
  return {
    id: r.id,
    tokenId: r.token_id,
    channel: r.channel,
    url: r.url,
    data: r.data === null ? null : Buffer.isBuffer(r.data) ? r.data : Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength),
    contentType: r.content_type,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  };
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
  rpm_limit: number | null;
  max_parallel: number | null;
  expires_at: number | null;
  budget: number | null;
  budget_period: string | null;
  budget_days: number | null;
  budget_anchor: number | null;
  budget_start: number | null;
  budget_used: number;
  previous_key_hash: string | null;
  previous_key_expires_at: number | null;
  last_used_at: number | null;
  /** A JSON array of CIDRs or addresses; null: anywhere. */
  allowed_ips: string | null;
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
    rpmLimit: r.rpm_limit ?? null,
    maxParallel: r.max_parallel ?? null,
    expiresAt: r.expires_at ?? null,
    budget: r.budget ?? null,
    budgetPeriod: (r.budget_period ?? null) as BudgetPeriod | null,
    budgetAnchor: r.budget_anchor ?? null,
    budgetStart: r.budget_start ?? null,
    budgetUsed: r.budget_used ?? 0,
    previousKeyHash: r.previous_key_hash ?? null,
    previousKeyExpiresAt: r.previous_key_expires_at ?? null,
    lastUsedAt: r.last_used_at ?? null,
    allowedIps: r.allowed_ips == null ? null : (JSON.parse(r.allowed_ips) as string[]),
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
  /** The states seen (../task-states.ts); null for a task stored before they were kept. */
  history: string | null;
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
  budget_period: string | null;
  budget_start: number | null;
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
  return {
    id: r.id,
    tokenId: r.token_id,
    kind: r.kind,
    ref: r.ref,
    model: r.model,
    amount: r.amount,
    at: r.at,
    budgetPeriod: r.budget_period ?? null,
    budgetStart: r.budget_start ?? null,
  };
}

/** Milliseconds of a day: `at / DAY_MS` (integer division, in SQL) is the UTC day of `at`, in both drivers whatever their time zone. */
export const DAY_MS = 86_400_000;

/** A row of the usage query: the UTC day as days since 1970-01-01, the sums and counts by kind. */
export interface UsageRow {
  day: number;
  token_id: string;
  token_name: string | null;
  model: string;
  debit: number;
  refund: number;
  settle: number;
  debits: number;
  refunds: number;
}

/** A usage group as the store answers it. */
export function toUsage(r: UsageRow): UsageGroup {
  return {
    day: new Date(Number(r.day) * DAY_MS).toISOString().slice(0, 10),
    tokenId: r.token_id,
    tokenName: r.token_name,
    model: r.model,
    debit: Number(r.debit),
    refund: Number(r.refund),
    settle: Number(r.settle),
    debits: Number(r.debits),
    refunds: Number(r.refunds),
  };
}
