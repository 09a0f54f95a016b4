import type { CompiledRoute, Snapshot, TaskContentRoute, TaskQueryRoute, TaskSubmitRoute } from '../config/snapshot.js';

/**
 * What `gateway demo` prints once it listens: the keys, and a request to paste for every route that
 * has an `example` in routes.yaml. A task's example is followed by the commands that follow that
 * task, each made from the query and download routes serving the task's own family (an audio task
 * is not found on a video route), so each works as printed once the task's id is put for `<id>`.
 * An answer that would carry its image as base64 is cut short in the terminal, unless the route can
 * answer a link instead (`response_format: url`), which the example then asks for.
 */

/** What the banner says besides the routes' examples. */
export interface DemoBannerFacts {
  readonly snapshot: Snapshot;
  /** The URL the examples call (a usable one, never a wildcard address). */
  readonly base: string;
  /** The address and port really bound (`0.0.0.0:8080`: every interface). */
  readonly bound: string;
  readonly apiKey: string;
  readonly adminKey: string | null;
  /** Each simulator serving a channel that lacks credentials, as `profile at url`. */
  readonly simulators: readonly string[];
  /** Where the demo's keys are derived from; null when they are new at every start. */
  readonly secretFile: string | null;
}

/** Characters of each answer line the terminal is shown, for examples whose answer carries base64. */
export const CUT_WIDTH = 300;

/** The demo's whole banner, ending with a newline. */
export function demoBanner(f: DemoBannerFacts): string {
  const examples = exampleLines(f.snapshot, f.base, f.apiKey);
  const cut = examples.some((l) => l.endsWith(`| cut -c1-${CUT_WIDTH}`));
  return `${[
    '',
    `Generation Gateway demo listening on ${f.base}${f.base.endsWith(`//${f.bound}`) ? '' : ` (bound to ${f.bound})`}`,
    `Simulated vendors: ${f.simulators.join(', ') || 'none'}`,
    `API key: ${f.apiKey}`,
    `Admin key: ${f.adminKey}`,
    `Admin console: ${f.base}/admin/ (sign in with the admin key)`,
    f.secretFile
      ? `The demo's keys stay the same at every start on this store (derived from ${f.secretFile}; delete it for new ones); GATEWAY_DEMO_KEY and GATEWAY_ADMIN_KEY override them.`
      : 'The demo makes new keys at every start: its store is not a file (GATEWAY_DEMO_KEY and GATEWAY_ADMIN_KEY name keys to keep).',
    '',
    ...(examples.length > 0 ? ['Try:', ...examples] : []),
    ...(cut
      ? ['', `(An answer that carries its image as base64 is cut to ${CUT_WIDTH} characters a line by the \`| cut\`: drop it to see the whole answer.)`]
      : []),
    '',
    'Operators: channel state, the configuration, and a reload after editing channels.yaml (saving reloads too):',
    `  curl -s ${f.base}/admin/channels -H "Authorization: Bearer ${f.adminKey}"`,
    `  curl -s ${f.base}/admin/config -H "Authorization: Bearer ${f.adminKey}"`,
    `  curl -s -X POST ${f.base}/admin/reload -H "Authorization: Bearer ${f.adminKey}"`,
    '',
  ].join('\n')}\n`;
}

/** Single-quoted for the shell: an example's query (`?Action=…&Version=…`) would otherwise end the command at `&`. */
function quoted(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** One curl command, its continuation lines indented by `indent`. */
function curl(method: string, url: string, key: string, body: unknown, indent: string, tail = ''): string {
  const verb = method === 'GET' ? '' : `-X ${method} `;
  const data = body === undefined ? '' : ` \\\n${indent}  -H "Content-Type: application/json" -d ${quoted(JSON.stringify(body))}`;
  return `${indent}curl -s ${verb}${quoted(url)} \\\n${indent}  -H "Authorization: Bearer ${key}"${data}${tail}`;
}

/** The example commands, each task's followed by its follow-up commands (indented, with a comment line). */
export function exampleLines(snapshot: Snapshot, base: string, key: string): string[] {
  const out: string[] = [];
  for (const route of snapshot.routes) {
    if (!route.example) continue;
    const body = asksForLink(route, route.example.body);
    // A generation's sync answer carries its file unless it asked for a link; a task answers its
    // id, and a resource route (an asset) its record.
    const cut = route.kind === 'sync' && route.resource === null && !wantsLink(body) ? ` | cut -c1-${CUT_WIDTH}` : '';
    out.push(curl(route.method, `${base}${route.example.path}`, key, body, '  ', cut));
    if (route.kind === 'task-submit') out.push(...followUp(snapshot, route, base, key, body));
  }
  return out;
}

/** The example body, asking for a link where the route's body takes `response_format: url` and the example says nothing of it. */
function asksForLink(route: CompiledRoute, body: unknown): unknown {
  if (route.kind !== 'sync' || !isObject(body) || 'response_format' in body) return body;
  const schema = route.body?.schema;
  const format = isObject(schema) && isObject(schema.properties) ? schema.properties.response_format : undefined;
  const values = isObject(format) && Array.isArray(format.enum) ? format.enum : [];
  return values.includes('url') ? { ...body, response_format: 'url' } : body;
}

function wantsLink(body: unknown): boolean {
  return isObject(body) && body.response_format === 'url';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The query and download commands of a submitted task, from the routes serving its family. */
function followUp(snapshot: Snapshot, submit: TaskSubmitRoute, base: string, key: string, exampleBody: unknown): string[] {
  const family = submit.task.kind;
  const serving = <R extends TaskQueryRoute | TaskContentRoute>(kind: R['kind']) =>
    snapshot.routes.filter((r): r is R => r.kind === kind && (r as R).task.kinds.includes(family));
  // One id a request (a batch route's body takes an array of them: not what a newcomer pastes).
  const query = nearest(
    submit.path,
    serving<TaskQueryRoute>('task-query').filter((r) => r.task.id.from !== 'body' || r.task.maxIds === 1),
  );
  const content = nearest(submit.path, serving<TaskContentRoute>('task-content'));
  if (!query) return [];
  const lines = [`    # answers a task id (task_…): put it for <id> to follow the task${content ? ', and download the result once it is completed' : ''}:`];
  lines.push(requestFor(query, submit, base, key, exampleBody));
  if (content) lines.push(requestFor(content, submit, base, key, undefined, ` -o ${family}-<id>`));
  return lines;
}

/** The route whose path shares the most leading segments with the submission's (a vendor-format submission to that vendor's own query route); the first declared on a tie. */
function nearest<R extends CompiledRoute>(path: string, routes: readonly R[]): R | null {
  const mine = segments(path);
  let best: R | null = null;
  let bestShared = -1;
  for (const r of routes) {
    const theirs = segments(r.path);
    let shared = 0;
    while (shared < mine.length && shared < theirs.length && mine[shared] === theirs[shared]) shared++;
    if (shared > bestShared) [best, bestShared] = [r, shared];
  }
  return best;
}

function segments(path: string): string[] {
  return (path.split('?')[0] ?? '').split('/').filter((s) => s !== '');
}

/**
 * A request to a task route for `<id>`: the id where the route reads it; another path parameter from
 * the submission's path at the same place (a `{kind}` segment: `text2video`); a body with the id at
 * its pointer and the example's fields the route's body also names (the model's `req_key`).
 */
function requestFor(route: TaskQueryRoute | TaskContentRoute, submit: TaskSubmitRoute, base: string, key: string, exampleBody: unknown, tail = ''): string {
  const id = route.task.id;
  const submitted = segments(submit.path);
  const path = segments(route.path)
    .map((seg, i) => {
      const param = /^\{(.+)\}$/.exec(seg)?.[1];
      if (param === undefined) return seg;
      if (id.from === 'path' && param === id.name) return '<id>';
      return submitted[i] ?? seg;
    })
    .join('/');
  const query = new URLSearchParams(route.matchQuery);
  if (id.from === 'query') query.set(id.name, '<id>');
  const search = query.size > 0 ? `?${query.toString().replaceAll('%3Cid%3E', '<id>')}` : '';
  let body: unknown;
  if (id.from === 'body') {
    const schema = route.body?.schema;
    const named = isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
    const carried = isObject(exampleBody) ? Object.fromEntries(Object.entries(exampleBody).filter(([k]) => named.includes(k))) : {};
    body = withPointer(carried, id.pointer, '<id>');
  }
  return curl(route.method, `${base}/${path}${search}`, key, body, '    ', tail);
}

/** A copy of `obj` with `value` at the JSON pointer `pointer` (as segments). */
function withPointer(obj: Record<string, unknown>, pointer: readonly string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = pointer;
  if (head === undefined) return obj;
  const inner = obj[head];
  return { ...obj, [head]: rest.length === 0 ? value : withPointer(isObject(inner) ? inner : {}, rest, value) };
}
