/**
 * The compiled, frozen configuration. Built once per load by src/config/load.ts; the request
 * path only reads it. Every stage of the pipeline imports its types from here.
 */
import type { ValidateFunction } from 'ajv';
import type { Mapping } from '../mapping/mapping.js';
import type { Secret } from './secret.js';
import type { CompiledAuth } from '../signers/signer.js';
import type { CompiledRoute, ModelSet } from './snapshot-routes.js';

export type * from './snapshot-routes.js';

/** How a family takes a generation mode: served, served with a warning, or refused. */
export type ModeSupport = 'supported' | 'discouraged' | 'unsupported';

/** A model family of routes.yaml `families`: its models, the modes it takes, its limits. */
export interface CompiledFamily {
  readonly name: string;
  readonly description: string;
  readonly models: ModelSet;
  /** The models as written (patterns keep their `*`), for the catalogue. */
  readonly modelNames: readonly string[];
  /** How this family reads the mode from a request (its own field conventions); else the route's `mode`. */
  readonly mode: Mapping | null;
  /** Modes the family names; a mode it does not name is unsupported. */
  readonly modes: ReadonlyMap<string, ModeSupport>;
  /** JSON Schema every request body of the family must pass, after the route's own. */
  readonly limits: ValidateFunction | null;
  readonly rawLimits: Readonly<Record<string, unknown>> | null;
  /** Further limits of single models. */
  readonly modelLimits: ReadonlyMap<string, ValidateFunction>;
  readonly rawModelLimits: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Models a route takes that the vendor refuses there (routes.yaml `vendor_refuses`), for the catalogue. */
  readonly vendorRefuses: readonly { readonly model: string; readonly route: string; readonly why: string }[];
}

/** How a profile signs upstream requests: its `auth` block compiled by the scheme's plug-in (src/signers/). */
export type AuthSpec = CompiledAuth;

/** One operation of a protocol profile: its mappings, compiled. */
export interface CompiledOperation {
  readonly request: {
    readonly method: string;
    readonly path: Mapping;
    readonly query: Mapping | null;
    readonly headers: Mapping | null;
    readonly body: Mapping | null;
    /** How the body mapping's output is sent: JSON text, or multipart/form-data (data URIs become files). */
    readonly encoding: 'json' | 'multipart';
  };
  /**
   * `type`: how a 2xx answer is read, parsed as JSON, kept as bytes of any media type, or read as a
   * stream of events, each mapped by `body` as it arrives (docs/channels-yaml.md, `response.type`).
   * `maxBytes` bounds the whole answer, or one event of a stream.
   */
  readonly response: { readonly body: Mapping; readonly maxBytes: number; readonly type: 'json' | 'bytes' | 'stream'; readonly stream: StreamLimits | null };
  readonly error: Mapping | null;
  /** The vendor models the operation serves (`models`: names, or patterns ending in `*`); null: every model. */
  readonly models: ModelSet | null;
  /**
   * Synchronous routes over an asynchronous vendor: the response mapping gives a task update, the
   * engine follows it with the profile's task query until it ends, then `answer` maps the finished
   * task to the public body. Null for ordinary operations.
   */
  /** `resultType`: the type of a result the vendor leaves untyped. */
  readonly await: { readonly answer: Mapping; readonly intervalMs: number; readonly timeoutMs: number; readonly resultType: string } | null;
}

/** How a vendor frames a streamed answer's events (`response.events`): Server-Sent Events, or newline-delimited JSON. */
export type EventFraming = 'sse' | 'ndjson';

/** How a streamed answer is read (`response.type: stream`): its framing and how long it may idle or last. */
export interface StreamLimits {
  readonly framing: EventFraming;
  /** Longest wait for the vendor's next event (or for a slow client to take the last one); null: the channel's `timeouts.body_ms`. */
  readonly idleMs: number | null;
  /** Longest the whole stream may last. */
  readonly maxMs: number;
}

/** A vendor document or official SDK a profile was checked against, and when. */
export interface ProfileSource {
  readonly name: string;
  /** YYYY-MM-DD. */
  readonly checked: string;
  readonly note: string | null;
  /** What it is (`sdk`, `specification`, `reference-text`: the vendor's; `protocol-note`: ours); null when not said. */
  readonly kind: SourceKind | null;
  /** Where the checked copy is kept (`npm:<package>@<version>` or a repository file); null when none is. */
  readonly pinned: string | null;
}

/** The kinds of a profile's source: the vendor's own artifacts, strictest first, then our own note. */
export type SourceKind = 'sdk' | 'specification' | 'reference-text' | 'protocol-note';

/** How a profile follows its tasks (channels.yaml `profiles.*.tasks`). */
export interface CompiledTaskProtocol {
  /** Looks at one task; its response mapping gives a task update. */
  readonly query: CompiledOperation;
  /** Looks at several tasks in one call, when the vendor allows it. */
  readonly batchQuery: (CompiledOperation & { readonly maxIds: number }) | null;
  /**
   * Two-step results: resolves a completed task's files (a file id → a download URL) after the
   * query, and again when a stored result URL has expired at download time.
   */
  readonly result: CompiledOperation | null;
  /**
   * Finds a task whose submission a crash cut off by the reference we sent (our task id in a
   * field the vendor keeps), tried in order; empty when the vendor keeps none.
   */
  readonly adopt: readonly CompiledOperation[];
  /** Downloads a result; without it the result URL is fetched as it is, with no credentials. */
  readonly content: { readonly method: string; readonly path: Mapping; readonly query: Mapping | null; readonly headers: Mapping | null } | null;
}

/** A vendor protocol: how to sign, and how each operation maps. */
export interface CompiledProfile {
  readonly name: string;
  /** Where the profile's facts come from (channels.yaml `profiles.*.sources`); empty when it says none. */
  readonly sources: readonly ProfileSource[];
  readonly auth: AuthSpec;
  readonly operations: ReadonlyMap<string, CompiledOperation>;
  /** Null for profiles without asynchronous operations. */
  readonly tasks: CompiledTaskProtocol | null;
}

/** How the poller follows a channel's tasks (channels.yaml `channels[].polling`). */
export interface Polling {
  readonly intervalMs: number;
  readonly concurrency: number;
  readonly deadlineMs: number;
  /** A query route refreshes a record older than this from the vendor before answering. */
  readonly staleMs: number;
  /**
   * How long the vendor's own "no such task" answer (a `lost` update) must keep coming, with no
   * other news between, before the task is failed as `task_lost`.
   */
  readonly lostAfterMs: number;
}

/** Upstream timeouts of a channel, in milliseconds. */
export interface Timeouts {
  readonly connectMs: number;
  readonly headersMs: number;
  readonly bodyMs: number;
}

/** When a channel's circuit breaker opens, and for how long (channels.yaml `channels[].breaker`). */
export interface BreakerPolicy {
  readonly enabled: boolean;
  readonly consecutiveFailures: number;
  /** Also open on a failure share over a window; null: only consecutive failures count. */
  readonly failureRate: { readonly threshold: number; readonly windowMs: number; readonly minRequests: number } | null;
  readonly cooldownMs: number;
}

/** How a request moves on after a failed vendor call (channels.yaml `routing`). */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  readonly deadlineMs: number;
  /** Retry-After (seconds) of a 429 the gateway decides itself. */
  readonly retryAfterS: number;
}

/** One upstream channel of channels.yaml, compiled. */
export interface CompiledChannel {
  readonly name: string;
  readonly profile: CompiledProfile;
  /** Origin (scheme, host, port) of base_url; the unit of connection pooling. */
  readonly origin: string;
  /** Path prefix of base_url without a trailing slash ('' for none). */
  readonly basePath: string;
  readonly secrets: Readonly<Record<string, Secret>>;
  readonly groups: ReadonlySet<string>;
  /** Public model name → upstream model name. */
  readonly models: ReadonlyMap<string, string>;
  /** Model name prefixes (`GV-*` in the file) served under the client's own name. */
  readonly modelPrefixes: readonly string[];
  readonly priority: number;
  readonly weight: number;
  readonly timeouts: Timeouts;
  /**
   * How long an idle connection to the vendor stays open when the vendor does not say (ms); a
   * vendor's `Keep-Alive: timeout` hint, less 2 s, is taken instead.
   */
  readonly keepAliveMs: number;
  /** Most request-path calls in flight at once; null: no limit. The connection pool has no bound of its own. */
  readonly maxConcurrency: number | null;
  /** The wait for a slot when the channel is at its `max_concurrency`. */
  readonly queue: QueuePolicy;
  readonly breaker: BreakerPolicy;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly polling: Polling;
}

/** How one model is priced (channels.yaml `prices.models`), compiled (docs/tokens-and-quota.md, "Quota, prices and the ledger"). */
export interface CompiledPrice {
  /** The model name or pattern as written (`some-video-*`), and where, for warnings. */
  readonly name: string;
  readonly where: string;
  /** Units every request adds. */
  readonly base: number;
  /** Units per request; 0 for a per-second price. */
  readonly perRequest: number;
  /**
   * A per-second price: units per second, the seconds asked (null: the largest of body.seconds,
   * body.duration and body.metadata.duration), and the seconds used when they give no number.
   */
  readonly perSecond: { readonly rate: number; readonly seconds: Mapping | null; readonly defaultSeconds: number } | null;
  /** What picks the resolution factor, and the factor of each value (any other value: 1). */
  readonly resolution: { readonly of: Mapping; readonly factors: ReadonlyMap<string, number> } | null;
}

/** channels.yaml `prices`, compiled: an exact name beats a pattern, and the longest pattern wins. */
export interface CompiledPrices {
  /** Units of a request whose model has no price of its own. */
  readonly default: number;
  readonly exact: ReadonlyMap<string, CompiledPrice>;
  /** Pattern prices (a trailing `*`), longest prefix first. */
  readonly prefixes: readonly { readonly prefix: string; readonly price: CompiledPrice }[];
}

/** Everything the request path needs, frozen. */
/** A channel the configuration declares and checks but does not route to, and why. */
export interface LeftOutChannel {
  readonly name: string;
  readonly profile: string;
  readonly reason: 'disabled' | 'unset_env';
  /** For `unset_env`: the variables that have no value. */
  readonly unset: readonly string[];
  /** Where the channel is declared, as `file:line`. */
  readonly at: string;
}

/** The line in front of a `max_concurrency` (docs/routing.md, "Saturation"): how many may wait, and how long. */
export interface QueuePolicy {
  /** Most requests waiting at once; 0: none waits, a full limit answers 429 at once. */
  readonly maxWaiting: number;
  /** Longest wait of one request, ms. */
  readonly maxWaitMs: number;
}

/** A token group's shared rate limits; null: that limit is not set (docs/tokens-and-quota.md, "Rate limits"). */
export interface GroupLimits {
  readonly rpm: number | null;
  readonly maxParallel: number | null;
}

export interface Snapshot {
  readonly loadedAt: Date;
  /** Digest of the config files read (names and contents): equal on replicas serving the same files. */
  readonly version: string;
  readonly routes: readonly CompiledRoute[];
  /**
   * Query parameters any route reads a client's key from: left out of every route's query, so a key
   * sent that way never reaches a mapping, a log or a vendor, whichever route it was sent to.
   */
  readonly keyQueryParams: readonly string[];
  readonly families: readonly CompiledFamily[];
  readonly profiles: ReadonlyMap<string, CompiledProfile>;
  readonly groups: ReadonlySet<string>;
  /** Group → most requests of its tokens in flight at once (absent: no limit). */
  readonly groupConcurrency: ReadonlyMap<string, number>;
  /** Group → the wait for one of its `max_concurrency` slots (present with every group concurrency). */
  readonly groupQueue: ReadonlyMap<string, QueuePolicy>;
  /** Group → the rate limits its keys share (channels.yaml `groups.<name>.limits`; absent: none). */
  readonly groupLimits: ReadonlyMap<string, GroupLimits>;
  readonly retry: RetryPolicy;
  readonly channels: readonly CompiledChannel[];
  /** Channels that compile but do not serve: `enabled: false`, or credentials unset (docs/operating.md, "Channels left out"). */
  readonly leftOut: readonly LeftOutChannel[];
  /** Public model name → channels that serve it by exact name. */
  readonly channelsByModel: ReadonlyMap<string, readonly CompiledChannel[]>;
  /** Channels that serve models by prefix; used only when no channel names the model exactly. */
  readonly channelsByPrefix: readonly { readonly prefix: string; readonly channel: CompiledChannel }[];
  readonly channelsByName: ReadonlyMap<string, CompiledChannel>;
  /** What requests cost (channels.yaml `prices`). */
  readonly prices: CompiledPrices;
}
