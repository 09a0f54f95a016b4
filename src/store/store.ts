/**
 * The store interface: everything the gateway keeps across restarts. One contract test suite
 * (test/store-contract.ts) is run against every driver, so drivers are interchangeable.
 */

/** An API token as stored: only the SHA-256 of its key is kept. */
export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly keyHash: string;
  readonly group: string;
  /** Models the token may use; null means every model of its group. */
  readonly models: readonly string[] | null;
  /** Total units the token may spend; null means unlimited. */
  readonly quota: number | null;
  readonly used: number;
  readonly disabled: boolean;
  readonly createdAt: number;
}

/**
 * What `deleteToken` did. A token still in use (an unfinished task, or a hold of a synchronous
 * request in flight) is not deleted: its refund or settlement needs it. `busy` says what runs.
 */
export type TokenDeletion =
  | { readonly outcome: 'deleted'; readonly token: TokenRecord }
  | { readonly outcome: 'unknown' }
  | { readonly outcome: 'busy'; readonly unfinishedTasks: number; readonly holds: number };

/** What a new token needs. */
export interface NewToken {
  readonly name: string;
  readonly keyHash: string;
  readonly group: string;
  readonly models: readonly string[] | null;
  readonly quota: number | null;
}

/**
 * Where a task is. `submitting`: the record exists and the quota is debited, the vendor has not
 * confirmed yet; the client has no id. The other four are the public states (README, "Tasks").
 */
export type TaskStatus = 'submitting' | 'queued' | 'in_progress' | 'completed' | 'failed';

/** Statuses of a task still under way. */
export type UnfinishedStatus = Exclude<TaskStatus, 'completed' | 'failed'>;
export const UNFINISHED_STATUSES: readonly UnfinishedStatus[] = ['submitting', 'queued', 'in_progress'];

/** Statuses a task leaves no more. */
export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['completed', 'failed']);

/** One result of a task, as the vendor gave it; its URL never reaches a client. */
export interface TaskResult {
  /** Where the vendor serves the file; null for a result that is only data (lyrics text, say). */
  readonly url: string | null;
  /** What it is (`video`, `audio`, `image`, …), for the content route's `variant`. */
  readonly type: string;
  /** Whatever else the profile keeps about it (clip id, title, duration), for answer mappings. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** Why a task failed, in words a client can show. */
export interface TaskError {
  readonly code: string;
  readonly message: string;
}

/** A task as stored: our id, who owns it, where it runs, and how far it got. */
export interface TaskRecord {
  /** Ours: random and unguessable; the only id a client ever sees. */
  readonly id: string;
  readonly tokenId: string;
  /** Family of the submitting route (`video`, `audio`, …); query routes serve only their families. */
  readonly kind: string;
  /** Id of the route that created it. */
  readonly route: string;
  /** Public model name, and the name the vendor was sent. */
  readonly model: string;
  readonly upstreamModel: string;
  /** Name of the channel that accepted it; polls and downloads go back there. */
  readonly channel: string;
  /** The vendor's id; null while submitting. Never shown to clients. */
  readonly upstreamId: string | null;
  readonly status: TaskStatus;
  /** 0–100. */
  readonly progress: number;
  /** The vendor's own word for the state at the last look, for logs and odd states. */
  readonly vendorStatus: string | null;
  readonly results: readonly TaskResult[];
  readonly error: TaskError | null;
  /** What the submit mapping kept for the query mapping (the submit kind, say). */
  readonly context: unknown;
  /** Public request facts shown by the query routes. */
  readonly seconds: string | null;
  readonly size: string | null;
  /** Units held (debited) when it was accepted. */
  readonly price: number;
  /** How the final charge follows the seconds the vendor reports (per-second prices); null: the hold is the charge. */
  readonly pricing: PerSecondPricing | null;
  /**
   * Units finally charged, set once: at completion (settlement: at most `price`, the rest went back)
   * or 0 by a refund. Null while the task is unfinished.
   */
  readonly charged: number | null;
  /** True once the charge went back to the token; it goes back at most once. */
  readonly refunded: boolean;
  /** Unix milliseconds. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly completedAt: number | null;
  /** After this, a task still unfinished is failed by the poller. */
  readonly deadlineAt: number;
  /** Bumped by every update; updates name the version they read (compare-and-set). */
  readonly version: number;
}

/**
 * The terms of a per-second price, kept on the task so its settlement needs neither the request
 * nor the configuration of the day: final charge = ceil(base + perSecond × seconds × factor).
 */
export interface PerSecondPricing {
  readonly base: number;
  readonly perSecond: number;
  /** The resolution factor chosen when the task was accepted. */
  readonly factor: number;
}

/** What a new task needs; it starts `submitting`, version 1 (`newTaskRecord` fills in the rest). */
export type NewTask = Pick<TaskRecord, 'id' | 'tokenId' | 'kind' | 'route' | 'model' | 'upstreamModel' | 'channel' | 'price' | 'createdAt' | 'deadlineAt'> & {
  readonly pricing?: PerSecondPricing | null;
  /** The replica that follows the new task, and until when (see `claimTasks`); none: any replica may claim it. */
  readonly lease?: { readonly owner: string; readonly until: number };
};

/** Rows of `status, count` into a count for every unfinished status, as every driver answers `countUnfinishedTasks`. */
export function unfinishedCounts(rows: readonly { readonly status: string; readonly n: number | string }[]): Record<UnfinishedStatus, number> {
  const out: Record<UnfinishedStatus, number> = { submitting: 0, queued: 0, in_progress: 0 };
  for (const r of rows) if ((UNFINISHED_STATUSES as readonly string[]).includes(r.status)) out[r.status as UnfinishedStatus] = Number(r.n);
  return out;
}

/** The record a new task starts as, as every driver stores it. */
export function newTaskRecord(t: NewTask): TaskRecord {
  const { id, tokenId, kind, route, model, upstreamModel, channel, price, createdAt, deadlineAt } = t;
  return {
    id,
    tokenId,
    kind,
    route,
    model,
    upstreamModel,
    channel,
    price,
    createdAt,
    deadlineAt,
    upstreamId: null,
    status: 'submitting',
    progress: 0,
    vendorStatus: null,
    results: [],
    error: null,
    context: null,
    seconds: null,
    size: null,
    pricing: t.pricing ?? null,
    charged: null,
    refunded: false,
    updatedAt: t.createdAt,
    completedAt: null,
    version: 1,
  };
}

/**
 * Fields an update may change. `refund: true` gives back what the task is still charged, in the
 * same transaction, once. `settle: N` makes N (at most the price) the final charge and gives back
 * the rest, once, and only to a task neither settled nor refunded.
 */
export type TaskPatch = Partial<
  Pick<
    TaskRecord,
    | 'upstreamId'
    | 'channel'
    | 'upstreamModel'
    | 'status'
    | 'progress'
    | 'vendorStatus'
    | 'results'
    | 'error'
    | 'context'
    | 'seconds'
    | 'size'
    | 'updatedAt'
    | 'completedAt'
    | 'deadlineAt'
  >
> & { readonly refund?: boolean; readonly settle?: number };

/**
 * A page of a token's tasks (`listTasks`): after the task `after` (null: from the start), at most
 * `limit`, newest first (`desc`) or oldest first (`asc`). Newest means the later `createdAt`; tasks
 * created in the same millisecond keep the order the store took them in.
 */
export interface TaskPage {
  readonly after: string | null;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
}

/**
 * A state a task was seen in: what `updateTask` records when an update changes the status, the
 * vendor's word or the progress (GET /admin/tasks/{task_id}). `at` is when the store wrote it, by
 * the clock of the ledger's rows: a submission's `updatedAt` is when its request began, before
 * the vendor was asked and before the debit was written, and a timeline must not put it first.
 */
export interface TaskStateSeen {
  readonly at: number;
  readonly status: TaskStatus;
  readonly vendorStatus: string | null;
  readonly progress: number;
}

/** States a task keeps, the latest: a task polled for an hour must not grow its row without end. */
export const TASK_HISTORY_LIMIT = 50;

/**
 * Which tasks of every token `findTasks` answers (operators): each filter set narrows them; a page
 * of at most `limit`, newest first by (`createdAt`, `id`), strictly after `before` in that order.
 */
export interface TaskQuery {
  readonly status?: TaskStatus;
  readonly model?: string;
  readonly channel?: string;
  readonly tokenId?: string;
  /** Where the previous page ended; null: from the newest. */
  readonly before: { readonly createdAt: number; readonly id: string } | null;
  readonly limit: number;
}

/** One task as the gateway saw it: its record, its states seen (oldest first), and the ledger rows of its id. */
export interface TaskHistory {
  readonly task: TaskRecord;
  /** The last TASK_HISTORY_LIMIT; empty for a task stored before states were recorded. */
  readonly states: readonly TaskStateSeen[];
  /** Oldest first: the debit of its price, then a settlement's give-back or a refund, if any. */
  readonly ledger: readonly LedgerEntry[];
}

/** A movement of a token's `used`: `debit` adds, `refund` and `settle` (what settlement gives back) take away. */
export type LedgerKind = 'debit' | 'refund' | 'settle';

/** One row of the usage ledger (README, "Quota, prices and the ledger"). */
export interface LedgerEntry {
  /** Increasing; pages of the ledger are read after an id. */
  readonly id: number;
  readonly tokenId: string;
  readonly kind: LedgerKind;
  /** The task id, or the request id of a synchronous request. */
  readonly ref: string;
  /** Public model name. */
  readonly model: string;
  /** Units moved, > 0. */
  readonly amount: number;
  /** Unix milliseconds. */
  readonly at: number;
}

/** What a debit or a refund of a synchronous request is for. */
export interface LedgerRef {
  readonly ref: string;
  readonly model: string;
}

/**
 * A synchronous request's hold (README, "Quota, prices and the ledger"): its debit, recorded until
 * the request settles (the debit stands) or fails (it goes back). A hold still recorded after
 * `expiresAt` belongs to a request that can no longer finish (its process died) and is given back.
 */
export interface HoldRef extends LedgerRef {
  /** Unix milliseconds, later than the longest the request can run. */
  readonly expiresAt: number;
}

/**
 * A resource a client created besides tasks (an asset; README, "Authentication, tokens and
 * quota"): whose it is and which channel holds it. Another token's resource is answered as unknown.
 */
export interface ResourceRecord {
  readonly kind: string;
  /** The id clients use (today the vendor's own id). */
  readonly id: string;
  readonly tokenId: string;
  /** The channel that created it: requests that use it go there. */
  readonly channel: string;
  /** The vendor's id for it. */
  readonly vendorId: string;
  /** Unix milliseconds. */
  readonly createdAt: number;
}

/**
 * A link a synchronous answer handed out instead of a vendor's URL (README, "Links instead of
 * vendor URLs"): the vendor URL it stands for, or the file itself (a raw answer kept as a stored
 * result). Found by the hash of the link's secret, served until `expiresAt`.
 */
export interface LinkRecord {
  /** SHA-256 (hex) of the secret in the link: the link itself is never stored. */
  readonly id: string;
  readonly tokenId: string;
  /** The channel that answered: a URL is fetched through it. */
  readonly channel: string;
  /** The vendor's URL; null when `data` holds the file. */
  readonly url: string | null;
  /** The file's bytes; null when the vendor serves it at `url`. */
  readonly data: Buffer | null;
  /** The media type `data` is served as; null for a URL (the vendor's answer says). */
  readonly contentType: string | null;
  /** Unix milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** A hold given back because it expired. */
export interface ExpiredHold {
  readonly ref: string;
  readonly tokenId: string;
  readonly model: string;
  readonly amount: number;
  readonly expiresAt: number;
}

/**
 * A token's `used` and the units its whole ledger moved per kind, read together (one consistent
 * view): `debit − refund − settle = used`, always.
 */
export type LedgerBalance = Readonly<Record<LedgerKind, number> & { used: number }>;

/** Which ledger rows `usage` sums: `from` ≤ `at` < `to` (Unix ms), of one token and/or one model when given. */
export interface UsageQuery {
  readonly from: number;
  readonly to: number;
  readonly tokenId: string | null;
  readonly model: string | null;
}

/**
 * The ledger rows of one UTC day, one token and one model, summed by kind (README, "Usage"). Each
 * row counts on the day of its own `at`: a refund the day after its debit counts the day after.
 */
export interface UsageGroup {
  /** The UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly tokenId: string;
  /** The token's name; null once the token was deleted (its ledger rows stay). */
  readonly tokenName: string | null;
  readonly model: string;
  /** Units of the day's `debit`, `refund` and `settle` rows. */
  readonly debit: number;
  readonly refund: number;
  readonly settle: number;
  /** How many `debit` and `refund` rows (a refund gives back a whole debit; a settlement only part of one). */
  readonly debits: number;
  readonly refunds: number;
}

/** Persistent state of the gateway. Every method is safe under concurrent callers. */
export interface Store {
  createToken(token: NewToken): Promise<TokenRecord>;
  findTokenByHash(keyHash: string): Promise<TokenRecord | null>;
  listTokens(): Promise<TokenRecord[]>;
  /** Removes the tokens of that name; returns how many went. */
  deleteTokensNamed(name: string): Promise<number>;
  /** The token of that id; null when there is none. */
  getToken(id: string): Promise<TokenRecord | null>;
  /** Disables (refused from then on) or enables a token; the token as it now is, null when there is none. */
  setTokenDisabled(id: string, disabled: boolean): Promise<TokenRecord | null>;
  /** Sets a token's quota (null: unlimited), even below what it used; the token as it now is, null when there is none. */
  setTokenQuota(id: string, quota: number | null): Promise<TokenRecord | null>;
  /**
   * Deletes a token unless it is busy (see TokenDeletion), atomically with task creation and holds:
   * once it is gone none can start for it, and none that started before is left without it. Its
   * ledger rows, finished tasks and resources stay, as the record of what it did.
   */
  deleteToken(id: string): Promise<TokenDeletion>;
  /**
   * Atomically spends `amount` units if the quota allows it, with its ledger row; false, with
   * nothing written, when it does not.
   */
  debit(tokenId: string, amount: number, entry: LedgerRef): Promise<boolean>;
  /**
   * Gives back `amount` units of a debit whose request failed, with its ledger row. Callers give
   * back a debit at most once (src/quota/account.ts); tasks are refunded through updateTask.
   */
  refund(tokenId: string, amount: number, entry: LedgerRef): Promise<void>;
  /**
   * A debit (as `debit`) recorded as a hold until `entry.expiresAt`, in the same transaction; false,
   * with nothing written, when the quota is short. A hold of 0 units records nothing.
   */
  hold(tokenId: string, amount: number, entry: HoldRef): Promise<boolean>;
  /**
   * Ends the hold of request `ref`: settled (`refund` false: the debit stands) or failed (the units
   * go back with a `refund` row), in one transaction. True when this call ended it; false when it
   * was ended before (by the other outcome or by expiry) or never recorded.
   */
  releaseHold(ref: string, refund: boolean): Promise<boolean>;
  /**
   * Gives back, each exactly once with a `refund` row, at most `limit` holds that expired at or
   * before `now` (oldest first), and returns them.
   */
  expireHolds(now: number, limit: number): Promise<ExpiredHold[]>;
  /**
   * Spends `amount` units whatever the quota, with a `debit` row: for a request that was served
   * after its hold had already been given back by expiry.
   */
  charge(tokenId: string, amount: number, entry: LedgerRef): Promise<void>;
  /**
   * Debits the task's price from its token and inserts the task (`submitting`, version 1) in one
   * transaction, with the debit's ledger row, and returns it; null, with nothing written, when the
   * quota is short.
   */
  createTask(task: NewTask): Promise<TaskRecord | null>;
  getTask(id: string): Promise<TaskRecord | null>;
  /** The tasks of those ids that exist, in no particular order. */
  getTasks(ids: readonly string[]): Promise<TaskRecord[]>;
  /**
   * Compare-and-set: applies `patch` only if the task is still at `version`, and bumps the
   * version. Returns the new record, or null when the task changed meanwhile or is gone. When the
   * patch changes the status, the vendor status or the progress, the same statement appends the
   * state to the task's history (TaskStateSeen; the last TASK_HISTORY_LIMIT are kept).
   */
  updateTask(id: string, version: number, patch: TaskPatch): Promise<TaskRecord | null>;
  /** Removes a task the vendor never accepted and refunds its price, atomically (compare-and-set). */
  abortTask(id: string, version: number): Promise<boolean>;
  /**
   * A page of the token's tasks of those kinds that clients have seen (every status but
   * `submitting`), in the page's order. Null when `after` is not such a task of that token (another
   * token's id, an unknown or deleted one): a cursor of someone else's is unknown, never a position.
   */
  listTasks(tokenId: string, kinds: readonly string[], page: TaskPage): Promise<TaskRecord[] | null>;
  /**
   * Removes a finished task (`completed` or `failed`) of that token, results and all; true when this
   * call removed it. An unfinished task, another token's and an unknown one are left (false). Its
   * ledger rows stay, as the record of what was spent: a deletion moves no units.
   */
  deleteTask(id: string, tokenId: string): Promise<boolean>;
  /**
   * Records a resource a client created. True when recorded (or already recorded as this token's,
   * on this channel); false, with nothing written, when its kind and id already belong to another.
   */
  putResource(resource: ResourceRecord): Promise<boolean>;
  /** The resources of that kind and those ids that exist, in no particular order. */
  getResources(kind: string, ids: readonly string[]): Promise<ResourceRecord[]>;
  /** Records the links of one answer, all or none. */
  putLinks(links: readonly LinkRecord[]): Promise<void>;
  /** A link by id while it serves: null when unknown, expired at `now`, or its token was deleted. */
  getLink(id: string, now: number): Promise<LinkRecord | null>;
  /** Deletes up to `limit` links expired at `now` (their stored files with them); returns how many. */
  deleteExpiredLinks(now: number, limit: number): Promise<number>;
  /**
   * Tasks of every token, `submitting` ones too, newest first by (createdAt, id), narrowed by the
   * query (GET /admin/tasks). A position deleted meanwhile is still a position: paging goes on.
   */
  findTasks(query: TaskQuery): Promise<TaskRecord[]>;
  /** A task with the states it was seen in and its ledger rows; null for an unknown id. */
  taskHistory(id: string): Promise<TaskHistory | null>;
  /** Ledger rows of a token with ids after `after` (null: from the start), oldest first, at most `limit`. */
  ledger(tokenId: string, after: number | null, limit: number): Promise<LedgerEntry[]>;
  /** The token's `used` and its ledger's sums, read together; null for an unknown token. */
  ledgerBalance(tokenId: string): Promise<LedgerBalance | null>;
  /**
   * The ledger summed in the store by UTC day, token and model over the query's range, ordered by
   * day, token id and model (byte-wise), at most `limit` groups.
   */
  usage(query: UsageQuery, limit: number): Promise<UsageGroup[]>;
  /**
   * Calls `listener` with every ledger row once its transaction committed (quota metrics); returns
   * the function that stops it.
   */
  onLedger(listener: (entry: LedgerEntry) => void): () => void;
  /** Unfinished tasks (`submitting`, `queued`, `in_progress`) with ids after `after`, in id order. */
  listUnfinishedTasks(after: string | null, limit: number): Promise<TaskRecord[]>;
  /**
   * How many tasks are unfinished, by status (every unfinished status present, 0 when none):
   * finished tasks are left out, so the count reads the unfinished index, not the whole history.
   */
  countUnfinishedTasks(): Promise<Record<UnfinishedStatus, number>>;
  /**
   * Leases, so each unfinished task is followed by one replica at a time (README, "Running several
   * replicas"): takes up to `limit` unfinished tasks whose lease is free or ran out (at or before
   * `now`), oldest id first, leases them to `owner` until `until`, and returns them. Two calls never
   * take the same task. A lease is not a change of the task: its version stays.
   */
  claimTasks(owner: string, now: number, until: number, limit: number): Promise<TaskRecord[]>;
  /**
   * Extends `owner`'s leases of those unfinished tasks to `until`; returns the ids it still held (a
   * lease that ran out and was taken by another is lost).
   */
  renewLeases(owner: string, ids: readonly string[], until: number): Promise<string[]>;
  /** Gives up every lease `owner` holds (a replica stopping), so other replicas take its tasks at once. */
  releaseLeases(owner: string): Promise<void>;
  /** Resolves when the store answers a trivial query; rejects when it cannot. */
  ping(): Promise<void>;
  /** Whether the store answers now, and when that changes (README, "When something fails"). */
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
