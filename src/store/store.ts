/**
 * The store interface: everything the gateway keeps across restarts. One contract test suite
 * (test/store/store-contract.ts) is run against every driver, so drivers are interchangeable.
 *
 * The store is made of parts, as its drivers are (src/store/sqlite/, src/store/postgres/), each
 * declared with its records in a file of its own; this file joins them and is where every
 * importer gets them from.
 */
import type { ArchiveStore } from './archive-store.js';
import type { AuditStore } from './audit-store.js';
import type { LinkStore } from './link-store.js';
import type { OperatorTaskStore } from './operator-task-store.js';
import type { OwnTaskStore } from './own-task-store.js';
import type { LedgerEntry, QuotaStore } from './quota-store.js';
import type { RequestLogStore } from './request-log-store.js';
import type { ResourceStore } from './resource-store.js';
import type { TaskStore } from './task-store.js';
import type { TokenKeyStore } from './token-key-store.js';
import type { TokenStore } from './token-store.js';
import type { UsageStore } from './usage-store.js';
import type { WebhookStore } from './webhook-store.js';
export { DELIVERY_STATUSES, WEBHOOK_EVENTS } from './webhook-store.js';

export type { ArchivedFile, ArchiveJob, ArchiveJobKind, ArchiveStore, ArchiveTotals, NewArchiveJob } from './archive-store.js';
export type { AuditQuery, AuditRecord, AuditStore } from './audit-store.js';
export type { LinkRecord, LinkStore } from './link-store.js';
export type { OperatorTaskStore, TaskHistory, TaskQuery } from './operator-task-store.js';
export type { OwnTaskStore, TaskPage } from './own-task-store.js';
export type { ExpiredHold, HoldEnd, HoldEnding, HoldRef, LedgerBalance, LedgerEntry, LedgerKind, LedgerRef, QuotaStore } from './quota-store.js';
export type { RequestLogStore, RequestQuery, RequestRecord } from './request-log-store.js';
export type { ResourceRecord, ResourceStore } from './resource-store.js';
export {
  newTaskRecord,
  TASK_HISTORY_LIMIT,
  TERMINAL_STATUSES,
  UNFINISHED_STATUSES,
  unfinishedCounts,
  type NewTask,
  type PerSecondPricing,
  type TaskError,
  type TaskPatch,
  type TaskRecord,
  type TaskResult,
  type TaskStateSeen,
  type TaskStatus,
  type TaskStore,
  type TaskWrite,
  type UnfinishedStatus,
} from './task-store.js';
export { TokenNameTaken, type TokenKeyStore, type TokenUse } from './token-key-store.js';
export type { NewToken, TokenDeletion, TokenLimitsChange, TokenRecord, TokenStore } from './token-store.js';
export { tokenBudgetAt } from './token-store.js';
export type { BudgetNow, BudgetPeriod } from './budget-period.js';
export type { UsageGroup, UsageQuery, UsageStore } from './usage-store.js';
export type {
  AttemptOutcome,
  DeliveryQuery,
  DeliveryStatus,
  NewWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookEvent,
  WebhookStore,
} from './webhook-store.js';

/** Persistent state of the gateway: every part, and the store's own lifecycle. Every method is safe under concurrent callers. */
export interface Store
  extends TokenStore,
    TokenKeyStore,
    QuotaStore,
    TaskStore,
    OwnTaskStore,
    OperatorTaskStore,
    ResourceStore,
    LinkStore,
    UsageStore,
    RequestLogStore,
    AuditStore,
    WebhookStore,
    ArchiveStore {
  /**
   * Calls `listener` with every ledger row once its transaction committed (quota metrics); returns
   * the function that stops it.
   */
  onLedger(listener: (entry: LedgerEntry) => void): () => void;
  /** Resolves when the store answers a trivial query; rejects when it cannot. */
  ping(): Promise<void>;
  /** Whether the store answers now, and when that changes (docs/deploying.md, "When something fails"). */
  readonly availability: StoreAvailability;
  close(): Promise<void>;
}

/**
 * A store's reachability as the gateway sees it. A shared store (over a network) can go away: while
 * it is, every call fails at once with `store_unavailable` instead of waiting (./store-guard.ts);
 * the embedded one is always there, and says so.
 */
export interface StoreAvailability {
  /** False from the moment the store was found unreachable until it answers again. */
  readonly up: boolean;
  /** What made it unreachable, while it is (no secrets: a driver's error message); else null. */
  readonly reason: string | null;
  /** Calls `listener` at each change (down with the reason, up with how long it was down); returns the function that stops it. */
  onChange(listener: (change: AvailabilityChange) => void): () => void;
  /** Asks the store now (joining a look already under way) and resolves with whether it answered (GET /readyz). */
  check(): Promise<boolean>;
}

/** A change of a store's availability. */
export type AvailabilityChange = { readonly up: false; readonly reason: string } | { readonly up: true; readonly downMs: number };

/** The availability of a store that cannot go away (the embedded one): always up; a check is a ping. */
export function alwaysAvailable(ping: () => Promise<void>): StoreAvailability {
  return {
    up: true,
    reason: null,
    onChange: () => () => undefined,
    check: () =>
      ping().then(
        () => true,
        () => false,
      ),
  };
}
