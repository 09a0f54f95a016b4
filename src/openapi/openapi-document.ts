import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';
import type { CompiledRoute, Snapshot } from '../config/snapshot.js';
import { ERROR_SCHEMAS, HEADERS } from './error-responses.js';
import type { Components, HttpMethod, OpenApiDocument, Operation } from './openapi-types.js';
import { operationOf, TAGS, type Variant } from './route-operation.js';
import { SchemaComponents } from './schema-components.js';
import { WEBHOOK_EVENT_SCHEMA, webhooksSection } from './webhooks-section.js';

/**
 * The OpenAPI 3.1 document of a snapshot's public routes (routes.yaml, routes.d/ and the body
 * schemas): what `GET /openapi.json` serves and `gateway openapi` prints. It is made from the
 * routes alone, never from channels, so it holds no vendor address, channel or secret, and is the
 * same whatever the environment; and it holds nothing that changes between two builds of the same
 * config (no time, no digest), so the committed copy, docs/generated/openapi.json, can be compared (src/docs/generated-docs.ts).
 */

const DESCRIPTION = [
  "The public routes of this gateway, generated from its route configuration. Each operation's `security` says where it takes",
  'the API key (a bearer token, or the header or query parameter its route names); an operation whose `security` is empty takes none:',
  'the links synchronous answers hand out instead of vendor URLs are their own credential. Task routes answer only the tasks of the key that created them.',
  'Error answers are shape A, `{"error": {"message", "type": "svc_api_error", "param", "code"}}`, or, for',
  '`too_many_requests`, shape B, `{"code", "message", "data": null}`; each operation lists the codes it can answer.',
  "Bodies are checked against the schemas below before any vendor is called; a model's family may refuse",
  'further values (see docs/generated/catalogue.md). Operator routes (/admin, /metrics) are not part of this API.',
].join(' ');

/** The tag of the webhooks section. */
const WEBHOOKS_TAG = {
  name: 'webhooks',
  description: "What the gateway sends to the endpoints an operator registers and to a submission's callback_url when a task ends (docs/webhooks.md).",
};

/** Where the routes are: the gateway serving the document (the committed copy names no origin). */
const SERVERS = [{ url: '/', description: 'The gateway that serves this document (GET /openapi.json): its routes are on the same origin.' }];

let packageJson: { readonly version: string; readonly license?: string } | undefined;

/** The gateway's package.json (read once): its version and licence are the document's. */
function pkg(): { readonly version: string; readonly license?: string } {
  packageJson ??= JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string; license?: string };
  return packageJson;
}

/** The licence of package.json as OpenAPI states one: its name, and its SPDX identifier when it is one (not UNLICENSED or "SEE LICENSE IN …"). */
function license(): { name: string; identifier?: string } {
  const name = pkg().license ?? 'UNLICENSED';
  return /^[A-Za-z0-9.+-]+$/.test(name) && name !== 'UNLICENSED' ? { name, identifier: name } : { name };
}

/** The OpenAPI 3.1.0 document of the snapshot's routes. */
export function openApiDocument(snapshot: Pick<Snapshot, 'routes'>): OpenApiDocument {
  const components: Components = {
    schemas: {},
    responses: {},
    headers: { ...HEADERS },
    securitySchemes: {},
  };
  // Bodies first, then answers, each in the order of the routes.
  const files = [...snapshot.routes.flatMap((r) => (r.body ? [r.body] : [])), ...snapshot.routes.flatMap((r) => (r.response ? [r.response] : []))];
  const schemas = new SchemaComponents(files, Object.keys(ERROR_SCHEMAS));
  Object.assign(components.schemas, schemas.components, ERROR_SCHEMAS);
  const paths: Record<string, Partial<Record<HttpMethod, Operation>>> = {};
  for (const [template, byMethod] of pathItems(snapshot.routes)) {
    paths[template] = {};
    for (const [method, variants] of byMethod) paths[template][method] = operationOf(variants, { schemas, components });
  }
  const kinds = new Set(snapshot.routes.map((r) => r.kind));
  // Events of tasks: only where some route makes tasks.
  const tasks = kinds.has('task-submit');
  if (tasks) components.schemas.WebhookEvent = WEBHOOK_EVENT_SCHEMA;
  return {
    openapi: '3.1.0',
    info: { title: 'Generation Gateway', version: pkg().version, description: DESCRIPTION, license: license() },
    servers: SERVERS,
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    // Kinds may share a tag (the two model kinds): each tag is listed once.
    tags: [
      ...new Map((Object.keys(TAGS) as (keyof typeof TAGS)[]).filter((k) => kinds.has(k)).map((k) => [TAGS[k].name, TAGS[k]])).values(),
      ...(tasks ? [WEBHOOKS_TAG] : []),
    ],
    paths,
    ...(tasks ? { webhooks: webhooksSection() } : {}),
    components,
  };
}

/**
 * The routes by path item and method, in the order routes.yaml declares them. Templates that
 * differ only in parameter names are one path to OpenAPI (and to the gateway's matcher): the first
 * route's template names the path item, and later routes' parameters are renamed to its names.
 */
function pathItems(routes: readonly CompiledRoute[]): Map<string, Map<HttpMethod, Variant[]>> {
  const items = new Map<string, Map<HttpMethod, Variant[]>>();
  const templateOf = new Map<string, { template: string; params: readonly string[] }>();
  for (const route of routes) {
    const shape = route.path.replace(/\{[^{}]*\}/g, '{}');
    const first = templateOf.get(shape) ?? { template: route.path, params: route.matcher.params };
    templateOf.set(shape, first);
    const rename = new Map(route.matcher.params.map((p, i) => [p, first.params[i] ?? p]));
    const byMethod = items.get(first.template) ?? new Map<HttpMethod, Variant[]>();
    items.set(first.template, byMethod);
    const method = route.method.toLowerCase() as HttpMethod;
    byMethod.set(method, [...(byMethod.get(method) ?? []), { route, rename }]);
  }
  return items;
}

/** Renderings by snapshot: a reload makes a new snapshot, and so a new document. */
const rendered = new WeakMap<object, string>();

/** The document as docs/generated/openapi.json and `GET /openapi.json` hold it: two-space JSON and a final newline. */
export function renderOpenApi(snapshot: Pick<Snapshot, 'routes'>): string {
  let text = rendered.get(snapshot);
  if (text === undefined) {
    text = `${JSON.stringify(openApiDocument(snapshot), null, 2)}\n`;
    rendered.set(snapshot, text);
  }
  return text;
}
