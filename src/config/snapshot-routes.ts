/**
 * The compiled routes of routes.yaml: a variant per kind, each with the fields its kind uses and no
 * other, so a stage takes the variant it needs. Part of the frozen snapshot (snapshot.ts re-exports
 * every type here); built by compile-routes.ts, read by the request path.
 */
import type { ValidateFunction } from 'ajv';
import type { Mapping } from '../mapping/mapping.js';

/** A compiled path template of routes.yaml (config/path-template.ts compiles it). */
export interface PathMatcher {
  readonly template: string;
  readonly params: readonly string[];
  /** Decoded parameters when the path matches; null otherwise; throws URIError on bad escapes. */
  match(pathname: string): Record<string, string> | null;
}

/** Where a route reads the client's API key (routes.yaml `auth`): `Authorization: Bearer`, a header's whole value, or a query parameter. */
export type KeySource = { readonly from: 'bearer' } | { readonly from: 'header'; readonly name: string } | { readonly from: 'query'; readonly name: string };

/** Where a route reads the model: a path parameter, a body pointer, or the one model it always serves (`value`, its `name`). */
export interface ModelSource {
  readonly from: 'path' | 'body' | 'value';
  readonly name: string;
  readonly pointer: readonly string[];
}

/** Exact model names and prefix patterns (the part before a trailing `*`). */
export interface ModelSet {
  readonly exact: ReadonlySet<string>;
  readonly prefixes: readonly string[];
}

/** What every public route of routes.yaml has, whatever its kind. */
interface RouteBase {
  readonly id: string;
  /** What the route does, as routes.yaml says it ('' when it says nothing); the OpenAPI document publishes it. */
  readonly description: string;
  /** A short line naming what it does (routes.yaml `summary`); null: none given. */
  readonly summary: string | null;
  readonly method: string;
  readonly path: string;
  readonly matcher: PathMatcher;
  readonly keySources: readonly KeySource[];
  /** A request known to pass this route (routes.yaml `example`), for the demo's banner. */
  readonly example: { readonly path: string; readonly body: unknown } | null;
  /** Query parameters the request must carry with these exact values to take this route (`match_query`). */
  readonly matchQuery: Readonly<Record<string, string>>;
  /** A resource the route creates or reads (routes.yaml `resource`); null: none. */
  readonly resource: CompiledRouteResource | null;
  /** Resources a request body may reference by a prefixed string (routes.yaml `references`). */
  readonly references: readonly ResourceReference[];
  /** Body rules; null for a route that takes no body (the kinds that never do say `null`). */
  readonly body: CompiledBody | null;
  /** The schema of its success answer (routes.yaml `response`), for the OpenAPI document; null: none declared. */
  readonly response: CompiledResponse | null;
  /** Whether and how long its files are archived (routes.yaml `archive`, docs/archive.md); null: it says nothing. */
  readonly archive: RouteArchive | null;
}

/** What the routes that call a profile operation for a model share (`sync`, `task-submit`). */
interface OperationRoute extends RouteBase {
  /** The profile operation that serves it; a channel is eligible only if its profile defines it. */
  readonly operation: string;
  readonly models: ModelSet;
  /** The generation mode a request asks for (`mode`, JSONata over body, params, query, model); null: not checked. */
  readonly mode: Mapping | null;
}

/** `sync`: one vendor call (with fallback), its answer mapped back at once. */
export interface SyncRoute extends OperationRoute {
  readonly kind: 'sync';
  readonly model: ModelSource;
  /** Whether and how it answers as Server-Sent Events (`stream`); null: one JSON answer. */
  readonly stream: RouteStream | null;
  /** Where its answers carry files, each handed out as a gateway link. */
  readonly links: LinkPlaces;
}

/**
 * `task-submit`: creates a task at the vendor and answers the gateway's own id. It reads the model
 * from the request, or (a remix that names none) takes its source task's.
 */
export type TaskSubmitRoute =
  | (OperationRoute & { readonly kind: 'task-submit'; readonly model: ModelSource; readonly task: SubmitTask })
  | (OperationRoute & { readonly kind: 'task-submit'; readonly model: null; readonly task: SubmitTask & { readonly source: TaskIdSource } });

/** `task-query`: answers one task record, or a batch named in the body. */
export interface TaskQueryRoute extends RouteBase {
  readonly kind: 'task-query';
  readonly task: TaskRules & { readonly id: TaskIdSource; readonly maxIds: number; readonly answer: Mapping };
}

/** `task-content`: streams a completed task's result. */
export interface TaskContentRoute extends RouteBase {
  readonly kind: 'task-content';
  readonly body: null;
  readonly task: TaskRules & { readonly id: TaskIdSource };
}

/** `task-list`: a page of the caller's own tasks; `task.answer` builds each item, `list` the page. */
export interface TaskListRoute extends RouteBase {
  readonly kind: 'task-list';
  readonly body: null;
  readonly task: TaskRules & { readonly answer: Mapping };
  /** Builds the page around its items (`data`, `first_id`, `last_id`, `has_more`) (routes.yaml `list`). */
  readonly list: Mapping;
}

/** `task-delete`: removes one of the caller's finished tasks; answers it as it was. */
export interface TaskDeleteRoute extends RouteBase {
  readonly kind: 'task-delete';
  readonly body: null;
  readonly task: TaskRules & { readonly id: TaskIdSource; readonly answer: Mapping };
}

/** `model-list`: the models the caller's token may use; `answer` builds one model, `list` the list. */
export interface ModelListRoute extends RouteBase {
  readonly kind: 'model-list';
  readonly body: null;
  readonly answer: Mapping;
  readonly list: Mapping;
}

/** `model-get`: one model the token may use; `model` is the path parameter naming it. */
export interface ModelGetRoute extends RouteBase {
  readonly kind: 'model-get';
  readonly body: null;
  readonly model: ModelSource;
  readonly answer: Mapping;
}

/** `link-content`: serves the links sync answers hand out; no key is asked for, the link is the credential. */
export interface LinkContentRoute extends RouteBase {
  readonly kind: 'link-content';
  readonly body: null;
  readonly keySources: readonly [];
}

/** One public route of routes.yaml, compiled: a variant by `kind`, each with the fields its kind uses and no other. */
export type CompiledRoute =
  | SyncRoute
  | TaskSubmitRoute
  | TaskQueryRoute
  | TaskContentRoute
  | TaskListRoute
  | TaskDeleteRoute
  | ModelListRoute
  | ModelGetRoute
  | LinkContentRoute;

/** The routes that call a profile operation for a model: they have `operation`, `models` and `mode`. */
export type ModelRoute = SyncRoute | TaskSubmitRoute;

/** The routes of tasks: their `task` block names the families whose tasks they serve. */
export type TaskRoute = TaskSubmitRoute | TaskQueryRoute | TaskContentRoute | TaskListRoute | TaskDeleteRoute;

/** The routes whose requests run the stage list (src/operations/stages.ts): every kind but `link-content`, which the server serves with no key. */
export type KeyedRoute = Exclude<CompiledRoute, LinkContentRoute>;

/** The route variant of one kind. */
export type RouteOfKind<K extends RouteKind> = Extract<CompiledRoute, { readonly kind: K }>;

/**
 * Where a `sync` route's answers carry files (routes.yaml `links`, `pass_vendor_url`; docs/client-api.md, "Links
 * instead of vendor URLs"). `scan`: every string of the answer that is an absolute http(s) URL (no
 * `links` given); `at`: the places `links` names (a `*` segment is every key or index), where a
 * `data:` URI also becomes a stored result; `pass`: `pass_vendor_url: true`, or no `link-content`
 * route declared to serve links (check warns).
 */
/** A route's `archive`: days its files are kept (0: never archived); null: the default (GATEWAY_ARCHIVE_KEEP_DAYS). */
export interface RouteArchive {
  readonly keepDays: number | null;
}

export type LinkPlaces = { readonly mode: 'scan' } | { readonly mode: 'at'; readonly places: readonly (readonly string[])[] } | { readonly mode: 'pass' };

/** A route's resource (docs/tokens-and-quota.md, "Authentication, tokens and quota"): it creates one, or reads one. */
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

/**
 * How a route answers as Server-Sent Events (routes.yaml `stream`, docs/routes-yaml.md): always, or
 * when the client asks; through which profile operation; and how the protocol writes an error that
 * happens once the stream has begun.
 */
export interface RouteStream {
  /** The body field (a JSON pointer, as segments) whose value `true` asks for a stream; null: the route always streams. */
  readonly askedBy: readonly string[] | null;
  /** The profile operation a streamed request calls; null: the route's own. */
  readonly operation: string | null;
  /** Where each event's data carries files, each handed out as a gateway link; null: the route's `links`. */
  readonly links: LinkPlaces | null;
  /** The error event of the client's protocol (JSONata over the error: `{code, message, param, status, error}`); null: `event: error` with the error body. */
  readonly error: Mapping | null;
}

/** Which engine runs a route (docs/routes-yaml.md, "routes.yaml"). */
export type RouteKind = 'sync' | 'task-submit' | 'task-query' | 'task-content' | 'task-list' | 'task-delete' | 'model-list' | 'model-get' | 'link-content';

/** Where a task route finds the task id(s). `body` is a JSON pointer to an array of ids (a batch). */
export type TaskIdSource =
  | { readonly from: 'path' | 'query'; readonly name: string }
  | { readonly from: 'body'; readonly pointer: readonly string[]; readonly name: string };

/** What every task route's `task` block says: the families (task kinds) whose tasks it serves. */
export interface TaskRules {
  /** task-submit: the one family its tasks belong to. Other task routes: the families they serve. */
  readonly kinds: readonly string[];
}

/** The `task` block of a `task-submit` route. */
export interface SubmitTask extends TaskRules {
  /** The family its tasks belong to (`kinds` is this one). */
  readonly kind: string;
  /**
   * A remix, which works on an earlier task: where its id is. The source must be the caller's own
   * completed task; the new task runs on its channel, with its model unless the request names one,
   * and mappings see it as `source`.
   */
  readonly source: TaskIdSource | null;
  /** Builds the public answer from the new task (docs/routes-yaml.md, "Answer mappings"). */
  readonly answer: Mapping;
}

/** The declared schema of a route's success answer (routes.yaml `response`): published, never enforced. */
export interface CompiledResponse {
  /** The JSON Schema file as routes.yaml names it, and its content. */
  readonly schemaFile: string;
  readonly schema: Readonly<Record<string, unknown>> | boolean;
  /** Its validator, for tests that hold answers against it. */
  readonly validate: ValidateFunction;
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
