import { isModelRoute } from '../config/lookups.js';
import type { CompiledBody, CompiledRoute, KeySource, ModelRoute, RouteKind, TaskIdSource } from '../config/snapshot.js';
import { errorCodesOf, errorResponses } from './error-responses.js';
import type { Components, JsonSchema, MediaType, Operation, Parameter, RequestBody, SecurityScheme } from './openapi-types.js';
import type { SchemaComponents } from './schema-components.js';
import { successOf } from './success-responses.js';

/**
 * The OpenAPI operation of one method on one path. Usually one route; several when routes.yaml
 * tells routes on the same method and path apart by query values (`match_query`), which OpenAPI
 * cannot: they become one operation whose query parameters list the values, whose body is any of
 * theirs, and whose description says which values pick which route.
 */

/** A route of the operation, with its path parameter names as the document writes them. */
export interface Variant {
  readonly route: CompiledRoute;
  /** The route's path parameter → the document's (routes of one path shape may name them differently). */
  readonly rename: ReadonlyMap<string, string>;
}

/** What operations share: the schema files' components and the components they add to. */
export interface OperationContext {
  readonly schemas: SchemaComponents;
  readonly components: Components;
}

/** Tags by route kind; the document lists them in this order. */
export const TAGS: Readonly<Record<RouteKind, { readonly name: string; readonly description: string }>> = {
  sync: { name: 'generation', description: 'One vendor call, answered when it ends.' },
  'task-submit': { name: 'task submission', description: "Creates a task and answers the gateway's own task id at once; the task is followed until it ends." },
  'task-query': { name: 'task query', description: "Answers a task record of the caller's API key." },
  'task-content': {
    name: 'task download',
    description: "Streams a completed task's result through the gateway, from the result archive when it holds it (Range included).",
  },
  'task-list': { name: 'task list', description: "Pages through the caller's own tasks, newest first." },
  'task-delete': { name: 'task deletion', description: "Deletes one of the caller's finished tasks and its results." },
  'model-list': { name: 'models', description: "The models the caller's API key may use, from the gateway's configuration." },
  'model-get': { name: 'models', description: "The models the caller's API key may use, from the gateway's configuration." },
  'link-content': {
    name: 'links',
    description: 'Serves the files synchronous answers link to instead of vendor URLs, until the link expires; the link itself is the credential.',
  },
};

const MULTIPART_NOTE =
  'A multipart/form-data body is checked as the object its JSON form would be: text fields are strings (a value starting with `{` is parsed as JSON), ' +
  'an uploaded file becomes a `data:<type>;base64,…` string, a repeated name or `name[]` makes an array, and `name[key]` sets a key of an object.';

/** The operation of `variants` (one route, or several told apart by query values). */
export function operationOf(variants: readonly Variant[], ctx: OperationContext): Operation {
  const routes = variants.map((v) => v.route);
  const models = [...new Set(routes.flatMap(modelNames))];
  const body = requestBodyOf(routes, ctx);
  const parameters = mergeParameters(variants.map(parametersOf));
  const description = describe(routes);
  return {
    operationId: routes.map((r) => r.id).join('-or-'),
    summary: [...new Set(routes.map(summaryOf))].join(' / '),
    tags: [...new Set(routes.map((r) => TAGS[r.kind].name))],
    ...(description ? { description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { ...successOf(routes, ctx.schemas), ...errorResponses(errorCodesOf(routes), ctx.components.responses) },
    security: securityOf(routes, ctx.components.securitySchemes),
    'x-route-ids': routes.map((r) => r.id),
    ...(models.length > 0 ? { 'x-models': models } : {}),
  };
}

/** A route's summary: routes.yaml's, else the first sentence of its description, else its method and path. */
function summaryOf(r: CompiledRoute): string {
  if (r.summary) return r.summary;
  const first =
    r.description
      .trim()
      .split(/(?<=\.)\s/)[0]
      ?.replace(/\.$/, '') ?? '';
  return first !== '' && first.length <= 120 ? first : `${r.method} ${r.path}`;
}

function describe(routes: readonly CompiledRoute[]): string {
  const [only] = routes;
  if (only && routes.length === 1) return only.description.trim();
  const lines = routes.map((r) => `- ${queryOf(r) || '(no query values)'}: route \`${r.id}\`. ${r.description.trim()}`.trimEnd());
  return `The query values pick one of ${routes.length} routes:\n\n${lines.join('\n')}`;
}

const queryOf = (r: CompiledRoute) =>
  Object.entries(r.matchQuery)
    .map(([k, v]) => `\`${k}=${v}\``)
    .join(' ');

/** Models as routes.yaml lists them, for routes that read one from the request or serve a fixed one. */
function modelNames(r: CompiledRoute): string[] {
  return isModelRoute(r) ? [...r.models.exact, ...r.models.prefixes.map((p) => `${p}*`)] : [];
}

/** Where a route reads a task id: task queries, downloads and deletions. */
function taskIdRoute(r: CompiledRoute): { readonly task: { readonly id: TaskIdSource; readonly kinds: readonly string[] } } | null {
  return r.kind === 'task-query' || r.kind === 'task-content' || r.kind === 'task-delete' ? r : null;
}

/** Where a remix reads the id of the task it works on. */
const sourceOf = (r: CompiledRoute) => (r.kind === 'task-submit' ? r.task.source : null);

/** Where a route reads a model: sync and submit routes, and the model a model-get route is asked about. */
const modelSourceOf = (r: CompiledRoute) => ('model' in r ? r.model : null);

/** A string that is one of the route's models: an exact name or one starting with a listed prefix. */
function modelSchema(r: ModelRoute): JsonSchema {
  const exact = [...r.models.exact];
  const pattern = r.models.prefixes.length > 0 ? `^(?:${r.models.prefixes.map(escapeRegExp).join('|')})` : null;
  if (pattern === null) return { type: 'string', enum: exact };
  if (exact.length === 0) return { type: 'string', pattern };
  return {
    anyOf: [
      { type: 'string', enum: exact },
      { type: 'string', pattern },
    ],
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The parameters of one route, under the document's names. */
function parametersOf({ route: r, rename }: Variant): Parameter[] {
  const out: Parameter[] = r.matcher.params.map((p) => ({
    name: rename.get(p) ?? p,
    in: 'path' as const,
    required: true,
    ...describeParam(r, 'path', p),
    // A model-get route names any model id (the token's own list decides), not the route's models.
    schema: isModelRoute(r) && r.model?.from === 'path' && r.model.name === p ? modelSchema(r) : { type: 'string' },
  }));
  const inQuery = [taskIdRoute(r)?.task.id, sourceOf(r), r.resource?.id].flatMap((s) => (s?.from === 'query' ? [s.name] : []));
  for (const q of new Set(inQuery)) out.push({ name: q, in: 'query', required: true, ...describeParam(r, 'query', q), schema: { type: 'string' } });
  for (const [k, v] of Object.entries(r.matchQuery)) {
    out.push({ name: k, in: 'query', required: true, description: 'Picks the route (see the description).', schema: { type: 'string', enum: [v] } });
  }
  if (r.kind === 'task-list') {
    out.push(
      {
        name: 'after',
        in: 'query',
        required: false,
        description: 'The id of the last task of the previous page (its `last_id`): the page starts after it. It must be a task of this API key listed here.',
        schema: { type: 'string' },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'Most tasks on the page, 1 to 100 (default 20).',
        schema: { type: 'string', pattern: '^[0-9]{1,3}$' },
      },
      {
        name: 'order',
        in: 'query',
        required: false,
        description: 'By creation time: `desc` (newest first, the default) or `asc`.',
        schema: { type: 'string', enum: ['asc', 'desc'] },
      },
    );
  }
  if (r.kind === 'task-submit') {
    out.push({
      name: 'Gateway-Callback-Url',
      in: 'header',
      required: false,
      description:
        "A URL to send this task's webhook events to (the `webhooks` of this document), for a route whose body has no `callback_url`. Only within the origins the operator allows this API key; another is 400 `invalid_request` (param `callback_url`). Ignored for a key with no callback origins.",
      schema: { type: 'string', format: 'uri', maxLength: 2000 },
    });
  }
  if (r.kind === 'task-content') {
    out.push(
      {
        name: 'index',
        in: 'query',
        required: false,
        description: "Which result to download, in the order of the task's results (default 0).",
        schema: { type: 'string', pattern: '^[0-9]{1,3}$' },
      },
      {
        name: 'variant',
        in: 'query',
        required: false,
        description:
          'Download the first result of this type (`video`, `image`, `audio`, …) or variant (`thumbnail`, where the vendor makes one) instead of one by index; a completed task without it is `not_found`.',
        schema: { type: 'string' },
      },
      {
        name: 'Range',
        in: 'header',
        required: false,
        description: 'One `bytes=` range: served from the result archive when it holds the file, else passed to the vendor; a partial answer is 206.',
        schema: { type: 'string' },
      },
      {
        name: 'If-Range',
        in: 'header',
        required: false,
        description: 'An archived file: the `ETag` or `Last-Modified` the client has; another version is sent whole.',
        schema: { type: 'string' },
      },
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'An archived file: the `ETag` the client has; the same version is answered 304.',
        schema: { type: 'string' },
      },
    );
  }
  return out;
}

/** What a parameter of a route holds, when the route says. */
function describeParam(r: CompiledRoute, where: 'path' | 'query', name: string): { description?: string } {
  const is = (s: { from: string; name: string } | null | undefined) => s?.from === where && s.name === name;
  const idRoute = taskIdRoute(r);
  if (is(modelSourceOf(r)))
    return { description: r.kind === 'model-get' ? 'A model id, as the model list names it.' : 'The model, one of those the route serves.' };
  if (idRoute && is(idRoute.task.id))
    return { description: `The id of a ${idRoute.task.kinds.join(' or ')} task of this API key, as its submission answered it.` };
  if (is(sourceOf(r))) return { description: 'The id of a completed task of this API key to work on; the new task runs on its channel and model.' };
  if (r.resource?.id && is(r.resource.id)) {
    const prefix = r.resource.prefix ? ` (its \`${r.resource.prefix}\` form is taken too)` : '';
    return { description: `The id of a ${r.resource.kind} of this API key${prefix}.` };
  }
  return {};
}

/** Parameters of several routes of one operation: required where every route requires them, query values as one enum. */
function mergeParameters(lists: readonly Parameter[][]): Parameter[] {
  const merged = new Map<string, Parameter>();
  for (const list of lists) {
    for (const p of list) {
      const key = `${p.in} ${p.name}`;
      const known = merged.get(key);
      if (!known) {
        merged.set(key, p);
        continue;
      }
      const enums = [known.schema, p.schema].map((s) => (typeof s === 'object' && Array.isArray(s.enum) ? (s.enum as unknown[]) : null));
      const schema = enums[0] && enums[1] ? { ...(known.schema as object), enum: [...new Set([...enums[0], ...enums[1]])] } : known.schema;
      merged.set(key, { ...known, schema });
    }
  }
  return [...merged.values()].map((p) => (lists.every((l) => l.some((q) => q.in === p.in && q.name === p.name && q.required)) ? p : { ...p, required: false }));
}

/** The request body: each route's schema (with its models where the body names the model), per media type. */
function requestBodyOf(routes: readonly CompiledRoute[], ctx: OperationContext): RequestBody | null {
  const withBody = routes.flatMap((r) => (r.body ? [{ r, body: r.body }] : []));
  if (withBody.length === 0) return null;
  const types = [...new Set(withBody.flatMap(({ body }) => body.contentTypes))];
  const content: Record<string, MediaType> = {};
  for (const type of types) {
    const takers = withBody.filter(({ body }) => body.contentTypes.includes(type));
    const schemas = takers.map(({ r, body }) => bodySchemaOf(r, body, ctx));
    const examples =
      type === 'application/json'
        ? takers.flatMap(({ r }) => (r.example && r.example.body !== undefined ? [[r.id, { value: r.example.body }] as const] : []))
        : [];
    const [only] = schemas;
    content[type] = {
      schema: only && schemas.length === 1 ? only : { anyOf: schemas },
      ...(examples.length > 0 ? { examples: Object.fromEntries(examples) } : {}),
    };
  }
  return {
    ...(types.some((t) => t.startsWith('multipart/')) ? { description: MULTIPART_NOTE } : {}),
    required: withBody.length === routes.length,
    content,
  };
}

function bodySchemaOf(r: CompiledRoute, body: CompiledBody, ctx: OperationContext): JsonSchema {
  const ref = ctx.schemas.refOf(body);
  if (!isModelRoute(r) || r.model?.from !== 'body') return ref;
  // The model's place in the body, down its pointer, holds one of the route's models.
  const constraint = [...r.model.pointer].reverse().reduce<JsonSchema>((inner, key) => ({ type: 'object', properties: { [key]: inner } }), modelSchema(r));
  return { allOf: [ref, constraint] };
}

/** Where the routes read the API key: alternatives, each a security scheme added to the components. */
function securityOf(routes: readonly CompiledRoute[], schemes: Components['securitySchemes']): Operation['security'] {
  const names: string[] = [];
  for (const source of routes.flatMap((r) => r.keySources)) {
    const [name, scheme] = schemeOf(source);
    schemes[name] ??= scheme;
    if (!names.includes(name)) names.push(name);
  }
  return names.map((n) => ({ [n]: [] }));
}

function schemeOf(s: KeySource): [string, SecurityScheme] {
  if (s.from === 'bearer') return ['bearer', { type: 'http', scheme: 'bearer', description: 'The API key as `Authorization: Bearer <key>`.' }];
  if (s.from === 'header')
    return [`header-${s.name}`, { type: 'apiKey', in: 'header', name: s.name, description: `The API key as the whole value of the \`${s.name}\` header.` }];
  return [
    `query-${s.name}`,
    { type: 'apiKey', in: 'query', name: s.name, description: `The API key as the \`${s.name}\` query parameter (never passed on to a vendor or logged).` },
  ];
}
