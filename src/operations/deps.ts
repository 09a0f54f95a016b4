import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { LinkRecord, TaskRecord } from '../store/store.js';
import type { RoutingState } from '../routing/routing-state.js';
import type { Pools } from '../upstream/pools.js';
import type { Poller } from '../tasks/poller.js';
import type { LinkArchive, LinkDeps } from '../links/hand-out.js';
import type { Authenticator } from '../pipeline/authenticate.js';
import type { KeyLimiter } from '../live/key-limiter.js';
import type { LastUsed } from '../tokens/last-used.js';
import type { Webhooks } from '../webhooks/webhooks.js';
import type { HoldEndings } from '../quota/hold-endings.js';

/** What a synchronous operation needs from the process. */
export interface SyncDeps extends LinkDeps {
  readonly pools: Pools;
  readonly random?: () => number;
  /** Overrides every awaiting operation's interval (golden runs look again at once). */
  readonly awaitIntervalMs?: number;
  /** Overrides every channel's `polling.lost_after_ms` for awaiting operations (golden runs: 0). */
  readonly lostAfterMs?: number;
  /** The process clock (golden runs fix it), for signing the later calls of an awaiting operation. */
  readonly clock?: () => Date;
  /** Channel saturation and circuit breakers. */
  readonly routing: RoutingState;
  readonly metrics: Metrics;
  /** Where a synchronous request's hold ending goes, to be written after its answer (src/quota/hold-endings.ts). */
  readonly holdEndings: HoldEndings;
}

/** What the task operations need besides: the poller, task ids, and how fresh a query must be. */
export interface TaskDeps extends SyncDeps {
  readonly poller: Poller;
  /** Makes our task ids; golden runs make them deterministic. */
  readonly newId: () => string;
  /** Golden runs: every query of an unfinished task asks the vendor, whatever `stale_ms` says. */
  readonly refreshAlways?: boolean;
  /** Webhooks: what a submission's `callback_url` is checked against (docs/webhooks.md); absent: callback URLs are ignored. */
  readonly webhooks?: Webhooks;
  /** The result archive (GATEWAY_ARCHIVE); absent or null: none, every download asks the vendor. */
  readonly archive?: ArchivedFiles | null;
}

/**
 * What the archive did with a download: `served` it (the answer is written); the file is
 * `not_archived` (not copied yet, purged, or lost: the vendor is asked, as without an archive); or
 * the archive holds it but is `unavailable` (unreachable, or it did not answer in time): the vendor
 * is asked, and a vendor that no longer has it is the archive's outage, not the vendor's error.
 * Nothing is written unless it was served.
 */
export type ArchiveAnswer = 'served' | 'not_archived' | 'unavailable';

/** The result archive as downloads see it (src/archive/, docs/archive.md). */
export interface ArchivedFiles extends LinkArchive {
  /** Serves result `index` of a completed task from the archive when it holds it and answers (Range included). */
  serveTask(req: IncomingMessage, res: ServerResponse, task: TaskRecord, index: number, ids: ServeIds): Promise<ArchiveAnswer>;
  /** Serves the file behind a link from the archive when it holds it and answers. */
  serveLink(req: IncomingMessage, res: ServerResponse, link: LinkRecord, ids: ServeIds): Promise<ArchiveAnswer>;
}

/** What serving a file says in its answer and its log lines. */
export interface ServeIds {
  readonly requestId: string;
  readonly log: Logger;
}

/** What the stages of a request need from the process: the operations' needs, the key lookup and the keys' rate limits. */
export interface RequestDeps extends TaskDeps {
  readonly auth: Authenticator;
  readonly keyLimits: KeyLimiter;
  /** Notes each token's last use, written in batches; null or absent: not kept. */
  readonly lastUsed?: LastUsed | null;
}
