/**
 * Where a task is. `submitting`: the record exists and the quota is debited, the vendor has not
 * confirmed yet; the client has no id. The other four are the public states (docs/client-api.md, "Tasks").
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

/** One compare-and-set of a batch (`updateTasks`): `patch` applied to task `id` if it is still at `version`. */
export interface TaskWrite {
  readonly id: string;
  readonly version: number;
  readonly patch: TaskPatch;
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

/** The task records: created with their debit, changed by compare-and-set, and leased to one replica at a time. */
export interface TaskStore {
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
  /**
   * Many compare-and-sets at once (the poller's writes of one tick): each write as `updateTask`
   * would make it, states, refunds and settlements included, in as few statements as the driver
   * can, whatever the number of writes. Answers, in the order of `writes`, each task's new record,
   * or null where that write changed nothing (the task changed meanwhile or is gone). Writes of one
   * task apply in their order (a second write naming the version the first read fails). A failure
   * of the store fails the whole call; what it wrote is then unknown, as for one `updateTask`.
   */
  updateTasks(writes: readonly TaskWrite[]): Promise<(TaskRecord | null)[]>;
  /** Removes a task the vendor never accepted and refunds its price, atomically (compare-and-set). */
  abortTask(id: string, version: number): Promise<boolean>;
  /** Unfinished tasks (`submitting`, `queued`, `in_progress`) with ids after `after`, in id order. */
  listUnfinishedTasks(after: string | null, limit: number): Promise<TaskRecord[]>;
  /**
   * How many tasks are unfinished, by status (every unfinished status present, 0 when none):
   * finished tasks are left out, so the count reads the unfinished index, not the whole history.
   */
  countUnfinishedTasks(): Promise<Record<UnfinishedStatus, number>>;
  /**
   * Leases, so each unfinished task is followed by one replica at a time (docs/deploying.md, "Running several
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
}
