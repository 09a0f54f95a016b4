import type { CompiledRoute, RouteKind } from '../config/snapshot.js';
import { catalogue, type ErrorCode } from '../errors/catalogue.js';
import type { Components, Header, JsonSchema, Ref } from './openapi-types.js';

/**
 * The error answers of the document, from the one error catalogue (src/errors/catalogue.ts): which
 * codes a route can answer, and one response component per status and set of codes, whose body is
 * shape A or B of docs/spec/interface.md section 7 with `code` narrowed to those codes.
 */

/** Shape A and shape B, as src/http/error-boundary.ts writes them. */
export const ERROR_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  'error-shape-a': {
    type: 'object',
    description: 'Error shape A (docs/spec/interface.md section 7).',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: {
          message: { type: 'string' },
          type: { const: 'svc_api_error' },
          param: { type: 'string', description: 'The field at fault as a dotted path; may be empty.' },
          code: { type: 'string' },
        },
      },
    },
  },
  'error-shape-b': {
    type: 'object',
    description: 'Error shape B (docs/spec/interface.md section 7).',
    required: ['code', 'message', 'data'],
    properties: { code: { type: 'string' }, message: { type: 'string' }, data: { type: 'null' } },
  },
};

/** Headers of answers, named in the responses that carry them. */
export const HEADERS: Readonly<Record<string, Header>> = {
  'x-request-id': { description: 'The id of this request in the gateway log.', schema: { type: 'string' } },
  'retry-after': { description: 'Seconds after which a retry makes sense.', schema: { type: 'integer', minimum: 1 } },
  warning: { description: "Present when the generation mode asked is served but not recommended for the model's family.", schema: { type: 'string' } },
};

/** What any route can fail with: the URL or body, a client too slow, the store away (every route reads it: the key, the task, the link), a fault of ours. */
const EVERY_ROUTE: readonly ErrorCode[] = ['invalid_request', 'request_timeout', 'store_unavailable', 'internal_error'];
/** Reading a body: too large for the route or for the memory budget, or of a type the route does not take. */
const WITH_BODY: readonly ErrorCode[] = ['payload_too_large', 'unsupported_media_type', 'server_busy'];
/** A vendor call: the token's quota and models, the routing limits, the vendor's failures. */
const VENDOR_CALL: readonly ErrorCode[] = [
  'insufficient_user_quota',
  'model_not_allowed',
  'model_not_found',
  'too_many_requests',
  'bad_response',
  'upstream_unavailable',
  'upstream_timeout',
];
const BY_KIND: Readonly<Record<RouteKind, readonly ErrorCode[]>> = {
  sync: VENDOR_CALL,
  'task-submit': VENDOR_CALL,
  'task-query': ['task_not_found'],
  // A download streams the vendor's bytes: the task must be the caller's and completed, the variant
  // asked must exist (a thumbnail the vendor never made is not_found), and the vendor must answer.
  'task-content': ['not_found', 'task_not_found', 'task_not_ready', 'bad_response', 'upstream_unavailable', 'upstream_timeout'],
  // A page of the caller's own tasks; a cursor not among them is invalid_request (in EVERY_ROUTE).
  'task-list': [],
  // Only the caller's own task, and only once it ended.
  'task-delete': ['task_not_found', 'task_not_ready'],
  'model-list': [],
  // A model that does not exist and one the token may not use are answered alike.
  'model-get': ['model_not_found'],
  // A link unknown or expired is not_found; one that stands for a vendor URL needs the vendor.
  'link-content': ['not_found', 'bad_response', 'upstream_unavailable', 'upstream_timeout'],
};

/** The codes any of the routes can answer with, in catalogue order. */
export function errorCodesOf(routes: readonly CompiledRoute[]): ErrorCode[] {
  const codes = new Set<ErrorCode>(EVERY_ROUTE);
  for (const route of routes) {
    // A route that asks for a key refuses a wrong one; a link asks for none.
    if (route.keySources.length > 0) codes.add('invalid_api_key');
    for (const c of BY_KIND[route.kind]) codes.add(c);
    if (route.body) for (const c of WITH_BODY) codes.add(c);
    // Work on an earlier task (a remix): it must be the caller's own, and completed.
    if (route.kind === 'task-submit' && route.task.source) for (const c of ['task_not_found', 'task_not_ready'] as const) codes.add(c);
    // A resource read by id (an asset): another key's is unknown.
    if (route.resource?.id) codes.add('not_found');
  }
  return (Object.keys(catalogue) as ErrorCode[]).filter((c) => codes.has(c));
}

/**
 * The error responses of an operation by status, as references; each response is added to
 * `responses` once (named by its status and codes) and shared by the operations that answer it.
 */
export function errorResponses(codes: readonly ErrorCode[], responses: Components['responses']): Record<string, Ref> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(catalogue[c].status, [...(byStatus.get(catalogue[c].status) ?? []), c]);
  const out: Record<string, Ref> = {};
  for (const [status, these] of [...byStatus].sort(([a], [b]) => a - b)) {
    const name = `error-${status}-${these.join('.')}`;
    responses[name] ??= {
      description: these.map((c) => `\`${c}\`: ${catalogue[c].when}`).join('\n\n'),
      headers: {
        'X-Request-Id': { $ref: '#/components/headers/x-request-id' },
        ...(status === 429 || status === 503 ? { 'Retry-After': { $ref: '#/components/headers/retry-after' } } : {}),
      },
      content: { 'application/json': { schema: bodyOf(these) } },
    };
    out[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

/** The body of an error answer with one of `codes`: its shape with `code` narrowed to them. */
function bodyOf(codes: readonly ErrorCode[]): JsonSchema {
  const a = codes.filter((c) => catalogue[c].shape === 'A');
  const b = codes.filter((c) => catalogue[c].shape === 'B');
  const shapes: JsonSchema[] = [];
  if (a.length > 0) {
    shapes.push({
      allOf: [
        { $ref: '#/components/schemas/error-shape-a' },
        { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string', enum: a } } } } },
      ],
    });
  }
  if (b.length > 0)
    shapes.push({ allOf: [{ $ref: '#/components/schemas/error-shape-b' }, { type: 'object', properties: { code: { type: 'string', enum: b } } }] });
  const [only] = shapes;
  return only && shapes.length === 1 ? only : { anyOf: shapes };
}
