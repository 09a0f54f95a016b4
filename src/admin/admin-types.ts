/** The types the admin routes and their handlers share (a module of its own: no handler imports the router). */
import type { ConfigControl } from '../config/config-control.js';
import type { Snapshot } from '../config/snapshot.js';
import type { ReplicaStatus, SharedLive } from '../live/shared-live.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Operator } from '../records/audit.js';
import type { RoutingState } from '../routing/routing-state.js';
import type { Store } from '../store/store.js';
import type { Webhooks } from '../webhooks/webhooks.js';

/** What the probes read (health.ts): whether the process is stopping, and whether its store answers. */
export interface Health {
  /** True from the moment a stop begins: the load balancer should send no more. */
  readonly draining: () => boolean;
  /** Whether the store answered its last ping (asked again when that is older than a second). */
  storeUp(): Promise<boolean>;
  /** Whether the result archive answers (null: no archive); said by /readyz, never a reason to take the replica out. */
  readonly archiveUp?: () => boolean | null;
}

/** What the operator routes read and act on. */
export interface AdminDeps {
  /** GATEWAY_ADMIN_KEY; null leaves /admin and /metrics closed. */
  readonly adminKey: string | null;
  readonly metrics: Metrics;
  readonly store: Store;
  readonly routing: RoutingState;
  /** Null when this gateway's configuration cannot be reloaded (a fixed snapshot, as in golden runs). */
  readonly config: ConfigControl | null;
  /** What replicas share (docs/deploying.md, "Running several replicas"); shares nothing with one replica. */
  readonly shared: SharedLive;
  /** This replica's status as it announces it. */
  readonly self: () => Omit<ReplicaStatus, 'seenAt'>;
  /** What /readyz reports: the store answering, and no stop under way. */
  readonly health: Health;
  /** Who acts through these routes (the admin key's id), for the audit log; null while they are closed. */
  readonly operator: Operator | null;
  /** Webhook deliveries (docs/webhooks.md): their settings, and the worker "send again" wakes. */
  /**
   * Writes the hold endings this process has waiting (src/quota/hold-endings.ts): a token whose
   * last request was answered a moment ago is not busy for a settlement not yet written.
   */
  readonly writeHoldEndings: () => Promise<void>;
  readonly webhooks: Webhooks;
  /** A token changed (disabled, enabled, its quota set, deleted): every replica must stop trusting what it cached of it. */
  tokenChanged(keyHash: string): void;
}

/** One admin request, as a handler sees it. */
export interface AdminContext {
  /** The snapshot serving when the request started. */
  readonly snapshot: Snapshot;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The JSON body, validated against the route's schema; undefined for a route that takes none. */
  readonly body: unknown;
  readonly deps: AdminDeps;
}

/** A handler's answer: JSON, or text (the metrics exposition, the console's files, a CSV file) with its own status and headers (a content-disposition, a CSP) if it needs them. */
export type AdminAnswer =
  | { readonly json: unknown; readonly status?: number }
  | { readonly text: string; readonly contentType: string; readonly status?: number; readonly headers?: Readonly<Record<string, string>> };
