/**
 * The compiled, frozen configuration. Built once per load by src/config/load.ts; the request
 * path only reads it. Every stage of the pipeline imports its types from here.
 */
import type { ValidateFunction } from 'ajv';
import type { Mapping } from '../mapping/mapping.js';
import type { Secret } from './secret.js';
import type { CompiledAuth } from '../signers/signer.js';

/** A compiled path template of routes.yaml (config/path-template.ts compiles it). */
export interface PathMatcher {
  readonly template: string;
  readonly params: readonly string[];
  /** Decoded parameters when the path matches; null otherwise; throws URIError on bad escapes. */
  match(pathname: string): Record<string, string> | null;
}

/** Where a route reads the client's API key (routes.yaml `auth`): `Authorization: Bearer`, a header's whole value, or a query parameter. */
export type KeySource = { readonly from: 'bearer' } | { readonly from: 'header'; readonly name: string } | { readonly from: 'query'; readonly name: string };

/** One public route of routes.yaml, compiled. */
export interface CompiledRoute {
  readonly id: string;
  /** What the route does, as routes.yaml says it ('' when it says nothing); the OpenAPI document publishes it. */
  readonly description: string;
  readonly method: string;
  readonly path: string;
  readonly matcher: PathMatcher;
  readonly kind: RouteKind;
  /** Profile operation that serves it (`sync`, `task-submit`); '' for routes that call no operation. */
  readonly operation: string;
  readonly keySources: readonly KeySource[];
  /**
   * Where the model is (`sync`, `task-submit`): a path parameter, a body pointer, or one fixed
   * model the route always serves (`value`, its `name`); `model-get`: the model id asked about;
   * null for routes that read tasks.
   */
  readonly model: { readonly from: 'path' | 'body' | 'value'; readonly name: string; readonly pointer: readonly string[] } | null;
  /** Exact model names and prefix patterns (the part before a trailing `*`). */
  readonly models: { readonly exact: ReadonlySet<string>; readonly prefixes: readonly string[] };
  readonly body: CompiledBody | null;
  /** Task rules of the task kinds; null for `sync` and the model kinds. */
  readonly task: CompiledRouteTask | null;
  /** A request known to pass this route (routes.yaml `example`), for the demo's banner. */
  readonly example: { readonly path: string; readonly body: unknown } | null;
  /** Query parameters the request must carry with these exact values to take this route (`match_query`). */
  readonly matchQuery: Readonly<Record<string, string>>;
  /** How a `sync` route delivers its answer (`stream`): `sse`, as Server-Sent Events; null: one JSON answer. */
  readonly stream: AnswerStream | null;
  /** The generation mode a request asks for (`mode`, JSONata over body, params, query, model); null: not checked. */
  readonly mode: Mapping | null;
  /** A resource the route creates or reads (routes.yaml `resource`); null: none. */
  readonly resource: CompiledRouteResource | null;
  /** `model-list`, `model-get`: builds one model's public answer from `model` (routes.yaml `answer`); null for other kinds. */
  readonly answer: Mapping | null;
  /**
   * `model-list`, `task-list`: builds the list's envelope around its items (`data`; a task list also
   * `first_id`, `last_id`, `has_more`) (routes.yaml `list`); null for other kinds.
   */
  readonly list: Mapping | null;
  /** Resources a request body may reference by a prefixed string (routes.yaml `references`). */
  readonly references: readonly ResourceReference[];
  /** `sync`: where its answers carry files, each handed out as a gateway link; null for other kinds. */
  readonly links: LinkPlaces | null;
}

/**
 * Where a `sync` route's answers carry files (routes.yaml `links`, `pass_vendor_url`; README, "Links
 * instead of vendor URLs"). `scan`: every string of the answer that is an absolute http(s) URL (no
 * `links` given); `at`: the places `links` names (a `*` segment is every key or index), where a
 * `data:` URI also becomes a stored result; `pass`: `pass_vendor_url: true`, or no `link-content`
 * route declared to serve links (check warns).
 */
export type LinkPlaces = { readonly mode: 'scan' } | { readonly mode: 'at'; readonly places: readonly (readonly string[])[] } | { readonly mode: 'pass' };

/** A route's resource (README, "Authentication, tokens and quota"): it creates one, or reads one. */
export interface CompiledRouteResource {
  readonly kind: string;
  /** Creating routes: the new resource's id, from the public answer (`answer`). */
  readonly creates: Mapping | null;
  /** Reading routes: where the id is. */
  readonly id: { readonly from: 'path' | 'query' | 'body'; readonly name: string; readonly pointer: readonly string[] } | null;
  /** A prefix the id may carry (`asset://`), read without it. */
  readonly prefix: string | null;
}

/** Strings starting with `prefix` anywhere in a body name a resource of `kind` (the rest is its id). */
export interface ResourceReference {
  readonly kind: string;
  readonly prefix: string;
}

/** How a family takes a generation mode: served, served with a warning, or refused. */
export type ModeSupport = 'supported' | 'discouraged' | 'unsupported';

/** A model family of routes.yaml `families`: its models, the modes it takes, its limits. */
export interface CompiledFamily {
  readonly name: string;
  readonly description: string;
  readonly models: { readonly exact: ReadonlySet<string>; readonly prefixes: readonly string[] };
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

/** How a streaming route sends its answer (routes.yaml `stream`); only Server-Sent Events so far. */
export type AnswerStream = 'sse';

/** Which engine runs a route (README, "routes.yaml"). */
export type RouteKind = 'sync' | 'task-submit' | 'task-query' | 'task-content' | 'task-list' | 'task-delete' | 'model-list' | 'model-get' | 'link-content';

/** Where a task route finds the task id(s). `body` is a JSON pointer to an array of ids (a batch). */
export type TaskIdSource =
  | { readonly from: 'path' | 'query'; readonly name: string }
  | { readonly from: 'body'; readonly pointer: readonly string[]; readonly name: string };

/** Task rules of a route. */
export interface CompiledRouteTask {
  /** task-submit: the family its tasks belong to. Query and content routes: the families they serve. */
  readonly kinds: readonly string[];
  /** Query, content and delete routes: where the id is. */
  readonly id: TaskIdSource | null;
  /**
   * Submit routes that work on an earlier task (a remix): where its id is. The source must be the
   * caller's own completed task; the new task runs on its channel, with its model unless the
   * request names one, and mappings see it as `source`.
   */
  readonly source: TaskIdSource | null;
  /** Most ids one batch query may name. */
  readonly maxIds: number;
  /** Submit, query, list (each item) and delete routes: builds the public answer from the task (README, "Answer mappings"). */
  readonly answer: Mapping | null;
}

/** Body rules of a route. */
export interface CompiledBody {
  readonly maxBytes: number;
  readonly maxDepth: number;
  readonly contentTypes: readonly string[];
  /** Most files one multipart body may carry. */
  readonly maxFiles: number;
  readonly validate: ValidateFunction;
  /** The JSON Schema file as routes.yaml names it, and its content: the OpenAPI document publishes them. */
  readonly schemaFile: string;
  readonly schema: Readonly<Record<string, unknown>> | boolean;
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
  /** `type`: how a 2xx answer is read, parsed as JSON or kept as bytes of any media type (README, channels.yaml `response.type`). */
  readonly response: { readonly body: Mapping; readonly maxBytes: number; readonly type: 'json' | 'bytes' };
  readonly error: Mapping | null;
  /**
   * Synchronous routes over an asynchronous vendor: the response mapping gives a task update, the
   * engine follows it with the profile's task query until it ends, then `answer` maps the finished
   * task to the public body. Null for ordinary operations.
   */
  /** `resultType`: the type of a result the vendor leaves untyped. */
  readonly await: { readonly answer: Mapping; readonly intervalMs: number; readonly timeoutMs: number; readonly resultType: string } | null;
}

/** A vendor document or official SDK a profile was checked against, and when. */
export interface ProfileSource {
  readonly name: string;
  /** YYYY-MM-DD. */
  readonly checked: string;
  readonly note: string | null;
}

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
  readonly maxConnections: number;
  /** Most request-path calls in flight at once; null: no limit. */
  readonly maxConcurrency: number | null;
  readonly breaker: BreakerPolicy;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly polling: Polling;
}

/** How one model is priced (channels.yaml `prices.models`), compiled (README, "Quota, prices and the ledger"). */
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
  readonly retry: RetryPolicy;
  readonly channels: readonly CompiledChannel[];
  /** Channels that compile but do not serve: `enabled: false`, or credentials unset (README, "Channels left out"). */
  readonly leftOut: readonly LeftOutChannel[];
  /** Public model name → channels that serve it by exact name. */
  readonly channelsByModel: ReadonlyMap<string, readonly CompiledChannel[]>;
  /** Channels that serve models by prefix; used only when no channel names the model exactly. */
  readonly channelsByPrefix: readonly { readonly prefix: string; readonly channel: CompiledChannel }[];
  readonly channelsByName: ReadonlyMap<string, CompiledChannel>;
  /** What requests cost (channels.yaml `prices`). */
  readonly prices: CompiledPrices;
}
