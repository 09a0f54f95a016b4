import type { Mapping } from '../mapping/mapping.js';
import type {
  CompiledBody,
  CompiledResponse,
  CompiledRoute,
  CompiledRouteResource,
  KeySource,
  LinkPlaces,
  ModelSet,
  ModelSource,
  PathMatcher,
  ResourceReference,
  RouteArchive,
  RouteKind,
  RouteStream,
  TaskIdSource,
} from './snapshot.js';

/**
 * A route as the compiler works on it before it becomes its kind's variant (snapshot-routes.ts):
 * every part that some kind has, null where the route declares none or where it failed to compile.
 * Every route has a draft, well formed or not, so the checks of the other tables (families,
 * channels, prices) see it and one mistake is not reported again as several.
 */
export interface RouteDraft {
  readonly id: string;
  readonly description: string;
  readonly summary: string | null;
  readonly method: string;
  readonly path: string;
  readonly matcher: PathMatcher;
  readonly kind: RouteKind;
  /** '' for routes that call no operation. */
  readonly operation: string;
  readonly keySources: readonly KeySource[];
  readonly model: ModelSource | null;
  /** Empty for routes that list none. */
  readonly models: ModelSet;
  readonly body: CompiledBody | null;
  readonly response: CompiledResponse | null;
  readonly task: TaskDraft | null;
  readonly example: { readonly path: string; readonly body: unknown } | null;
  readonly matchQuery: Readonly<Record<string, string>>;
  readonly stream: RouteStream | null;
  readonly mode: Mapping | null;
  readonly resource: CompiledRouteResource | null;
  readonly answer: Mapping | null;
  readonly list: Mapping | null;
  readonly references: readonly ResourceReference[];
  /** Sync routes only. */
  readonly links: LinkPlaces | null;
  readonly archive: RouteArchive | null;
}

/** A route's `task` block as compiled, before its kind says which parts it has. */
export interface TaskDraft {
  readonly kinds: readonly string[];
  readonly id: TaskIdSource | null;
  readonly source: TaskIdSource | null;
  readonly maxIds: number;
  readonly answer: Mapping | null;
}

/** What the checks of families, channels and prices read of a route: a draft has it, and so has a compiled route. */
export interface RouteOutline {
  readonly id: string;
  readonly kind: RouteKind;
  readonly operation?: string;
  readonly models?: ModelSet;
  readonly model?: ModelSource | null;
}

/** Whether a route reads its model from the request (or serves a fixed one), and so serves its models to channels. */
export function readsModel(r: RouteOutline): r is RouteOutline & { readonly models: ModelSet; readonly model: ModelSource } {
  return r.model !== undefined && r.model !== null && r.models !== undefined;
}

/** Whether a route lists a model (exactly or by a pattern that matches it). */
export function listsModel(r: RouteOutline, model: string): boolean {
  return r.models !== undefined && (r.models.exact.has(model) || r.models.prefixes.some((p) => model.startsWith(p)));
}

/** Model names as routes and families list them: exact names, and prefixes of the ones ending in `*`. */
export function modelSet(listed: readonly string[]): ModelSet {
  return Object.freeze({
    exact: new Set(listed.filter((m) => !m.endsWith('*'))),
    prefixes: listed.filter((m) => m.endsWith('*')).map((m) => m.slice(0, -1)),
  });
}

/** Whether a route serves some model a channel's prefix pattern could match (the two sets overlap). */
export function routeMayServePrefix(route: { readonly models: ModelSet }, prefix: string): boolean {
  return route.models.prefixes.some((p) => p.startsWith(prefix) || prefix.startsWith(p)) || [...route.models.exact].some((m) => m.startsWith(prefix));
}

/**
 * The draft as its kind's variant, with the parts its kind uses and no other; null when a part its
 * kind needs is missing or did not compile (an error issue says so already, and the load fails).
 */
export function typedRoute(d: RouteDraft): CompiledRoute | null {
  const base = {
    id: d.id,
    description: d.description,
    summary: d.summary,
    method: d.method,
    path: d.path,
    matcher: d.matcher,
    keySources: d.keySources,
    example: d.example,
    matchQuery: d.matchQuery,
    resource: d.resource,
    references: d.references,
    response: d.response,
    archive: d.archive,
  };
  const { body, model, task, answer, list } = d;
  switch (d.kind) {
    case 'sync':
      if (!model || !d.links) return null;
      return Object.freeze({ ...base, ...operationParts(d), kind: d.kind, body, model, stream: d.stream, links: d.links });
    case 'task-submit': {
      const kind = task?.kinds[0];
      if (!task?.answer || kind === undefined) return null;
      const submit = { kind, kinds: task.kinds, source: task.source, answer: task.answer };
      const route = { ...base, ...operationParts(d), kind: d.kind, body };
      if (model) return Object.freeze({ ...route, model, task: Object.freeze(submit) });
      // A remix that names no model takes its source task's.
      if (task.source) return Object.freeze({ ...route, model: null, task: Object.freeze({ ...submit, source: task.source }) });
      return null;
    }
    case 'task-query':
      if (!task?.id || !task.answer) return null;
      return Object.freeze({
        ...base,
        kind: d.kind,
        body,
        task: Object.freeze({ kinds: task.kinds, id: task.id, maxIds: task.maxIds, answer: task.answer }),
      });
    case 'task-content':
      if (!task?.id || body) return null;
      return Object.freeze({ ...base, kind: d.kind, body, task: Object.freeze({ kinds: task.kinds, id: task.id }) });
    case 'task-list':
      if (!task?.answer || !list || body) return null;
      return Object.freeze({ ...base, kind: d.kind, body, task: Object.freeze({ kinds: task.kinds, answer: task.answer }), list });
    case 'task-delete':
      if (!task?.id || !task.answer || body) return null;
      return Object.freeze({ ...base, kind: d.kind, body, task: Object.freeze({ kinds: task.kinds, id: task.id, answer: task.answer }) });
    case 'model-list':
      if (!answer || !list || body) return null;
      return Object.freeze({ ...base, kind: d.kind, body, answer, list });
    case 'model-get':
      if (!model || !answer || body) return null;
      return Object.freeze({ ...base, kind: d.kind, body, model, answer });
    case 'link-content':
      if (body || d.keySources.length > 0) return null;
      return Object.freeze({ ...base, kind: d.kind, body, keySources: [] as const });
  }
}

/** What a sync and a task-submit route share: the operation that serves them, their models, their mode. */
function operationParts(d: RouteDraft): { operation: string; models: ModelSet; mode: Mapping | null } {
  return { operation: d.operation, models: d.models, mode: d.mode };
}
