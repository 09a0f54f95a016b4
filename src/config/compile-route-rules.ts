import type { RawResources } from './compile-resources.js';
import type { RawRouteArchive } from './compile-route-archive.js';
import type { PathMatcher, RouteKind } from './snapshot.js';

/** The raw shape of a route, as routes.schema.json admits it. */
export interface RawRoute extends RawResources {
  id: string;
  description?: string;
  summary?: string;
  method: string;
  path: string;
  kind: RouteKind;
  operation?: string;
  auth?: ('bearer' | { header: string } | { query: string })[];
  model?: { path?: string; body?: string; value?: string };
  models?: string[];
  body?: { schema: string; max_bytes?: number | string; max_depth?: number; content_types?: string[]; max_files?: number };
  response?: { schema: string };
  task?: {
    kind?: string;
    kinds?: string[];
    id?: { path?: string; query?: string; body?: string };
    source?: { path?: string; query?: string; body?: string };
    max_ids?: number;
    answer?: string;
  };
  example?: { params: Record<string, string>; body?: unknown };
  match_query?: Record<string, string>;
  mode?: string;
  /** `sse`: the route always streams, through its own operation; else when and how it streams. */
  stream?: 'sse' | RawRouteStream;
  answer?: string;
  list?: string;
  links?: string[];
  pass_vendor_url?: boolean;
  archive?: RawRouteArchive;
}

/** routes.yaml `stream` in its long form (docs/routes-yaml.md). */
export interface RawRouteStream {
  when?: string;
  operation?: string;
  links?: string[];
  error?: string;
}

/** What each kind of route must and must not declare. */
const KIND_RULES: Record<RouteKind, { needs: string[]; refuses: string[]; task: string[]; taskRefuses: string[] }> = {
  sync: { needs: ['operation', 'model', 'models'], refuses: ['task', 'answer', 'list'], task: [], taskRefuses: [] },
  // Only a sync answer is streamed: a task's answer is its id at once, a download streams bytes already.
  // Only a sync answer hands out links: a task's files are served by its content route.
  'task-submit': {
    needs: ['operation', 'models', 'task'],
    refuses: ['stream', 'answer', 'list', 'links', 'pass_vendor_url'],
    task: ['kind', 'answer'],
    taskRefuses: ['kinds', 'id', 'max_ids'],
  },
  'task-query': {
    needs: ['task'],
    refuses: ['operation', 'model', 'models', 'mode', 'stream', 'answer', 'list', 'links', 'pass_vendor_url'],
    task: ['kinds', 'id', 'answer'],
    taskRefuses: ['kind', 'source'],
  },
  'task-content': {
    needs: ['task'],
    refuses: ['operation', 'model', 'models', 'body', 'response', 'mode', 'stream', 'answer', 'list', 'links', 'pass_vendor_url'],
    task: ['kinds', 'id'],
    taskRefuses: ['kind', 'answer', 'max_ids', 'source'],
  },
  // A page of the caller's tasks: `task.answer` builds each item, `list` the page around them.
  'task-list': {
    needs: ['task', 'list'],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'answer', 'stream', 'links', 'pass_vendor_url'],
    task: ['kinds', 'answer'],
    taskRefuses: ['kind', 'id', 'max_ids', 'source'],
  },
  'task-delete': {
    needs: ['task'],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'answer', 'list', 'stream', 'links', 'pass_vendor_url'],
    task: ['kinds', 'id', 'answer'],
    taskRefuses: ['kind', 'max_ids', 'source'],
  },
  // The models a token may use, read from the snapshot: `answer` builds one model, `list` the list.
  'model-list': {
    needs: ['answer', 'list'],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'task', 'stream', 'links', 'pass_vendor_url'],
    task: [],
    taskRefuses: [],
  },
  'model-get': {
    needs: ['model', 'answer'],
    refuses: ['operation', 'models', 'body', 'mode', 'task', 'list', 'stream', 'links', 'pass_vendor_url'],
    task: [],
    taskRefuses: [],
  },
  // The link is its own credential (a presigned URL's stand-in): no key is asked for.
  'link-content': {
    needs: [],
    refuses: ['operation', 'model', 'models', 'body', 'response', 'mode', 'task', 'list', 'answer', 'stream', 'auth', 'links', 'pass_vendor_url'],
    task: [],
    taskRefuses: [],
  },
};

/** What each kind of route must and must not declare (KIND_RULES), and where its model comes from. */
export function checkKindRules(r: RawRoute, matcher: PathMatcher | undefined, report: (at: (string | number)[], msg: string) => void): void {
  const rules = KIND_RULES[r.kind];
  for (const key of rules.needs) {
    if (r[key as keyof RawRoute] === undefined) report([], `a ${r.kind} route needs ${key}`);
  }
  for (const key of rules.refuses) {
    if (r[key as keyof RawRoute] !== undefined) report([key], `a ${r.kind} route has no ${key}`);
  }
  if (r.task) {
    for (const key of rules.task) {
      if (r.task[key as keyof typeof r.task] === undefined) report(['task'], `the task block of a ${r.kind} route needs ${key}`);
    }
    for (const key of rules.taskRefuses) {
      if (r.task[key as keyof typeof r.task] !== undefined) report(['task', key], `the task block of a ${r.kind} route has no ${key}`);
    }
  }
  // A task-submit route reads the model from the request, or else from its source task (a remix).
  if (r.kind === 'task-submit' && !r.model && !r.task?.source) report([], 'a task-submit route needs model (or task.source, whose model it then uses)');
  if (r.model?.path !== undefined && matcher && !matcher.params.includes(r.model.path)) {
    report(['model', 'path'], `path parameter {${r.model.path}} does not appear in ${r.path}`);
  }
  if (r.model?.body !== undefined && !r.body) report(['model', 'body'], 'the model is read from the body but the route declares no body');
  // The model a client asks about is named in the URL, as GET /v1/models/{model} names it.
  if (r.kind === 'model-get' && r.model && r.model.path === undefined)
    report(['model'], 'a model-get route reads the model id from a path parameter: model: {path: <param>}');
}
