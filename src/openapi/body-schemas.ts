import { basename } from 'node:path';
import type { CompiledBody, CompiledRoute } from '../config/snapshot.js';
import type { JsonSchema, Ref } from './openapi-types.js';

/**
 * The body schemas of the routes as components of the OpenAPI document: one component per schema
 * file, however many routes name it, named after the file. A schema's own `$id` and `$schema` are
 * left out and its references into itself (`#/$defs/…`) are rewritten to point at its component:
 * many OpenAPI tools resolve `#` against the document rather than against an `$id`, and the
 * document states the dialect once (`jsonSchemaDialect`). A reference to another body schema by its
 * `$id` is rewritten to that schema's component; any other reference is kept as written.
 */
export class BodySchemas {
  /** Components by name, in the order the routes first name them. */
  readonly components: Record<string, JsonSchema> = {};
  readonly #names = new Map<CompiledBody['schema'], string>();
  /** Names by top-level `$id`, for references between body schemas. */
  readonly #byId = new Map<string, string>();

  constructor(routes: readonly CompiledRoute[]) {
    // Names first, so a reference can point at a schema that a later route brings in.
    const bodies = routes.flatMap((r) => (r.body ? [r.body] : []));
    for (const body of bodies) {
      if (this.#names.has(body.schema)) continue;
      const name = this.#freeName(componentName(body.schemaFile));
      this.#names.set(body.schema, name);
      const id = typeof body.schema === 'object' ? body.schema.$id : undefined;
      if (typeof id === 'string') this.#byId.set(stripHash(id), name);
    }
    for (const [schema, name] of this.#names) this.components[name] = this.#publishable(schema, name);
  }

  /** A reference to the component of a route's body schema. */
  refOf(body: CompiledBody): Ref {
    const name = this.#names.get(body.schema);
    if (name === undefined) throw new Error(`the body schema ${body.schemaFile} is not one of the document's routes`);
    return { $ref: `#/components/schemas/${name}` };
  }

  #freeName(wanted: string): string {
    const taken = new Set(this.#names.values());
    if (!taken.has(wanted)) return wanted;
    let n = 2;
    while (taken.has(`${wanted}-${n}`)) n++;
    return `${wanted}-${n}`;
  }

  /** A copy of the schema as its component: no `$id`/`$schema` at the top, references rewritten. */
  #publishable(schema: CompiledBody['schema'], name: string): JsonSchema {
    if (typeof schema === 'boolean') return schema;
    const { $id, $schema: _dialect, ...rest } = schema;
    const base = typeof $id === 'string' ? $id : null;
    return this.#rewrite(rest, name, base) as JsonSchema;
  }

  #rewrite(node: unknown, name: string, base: string | null): unknown {
    if (Array.isArray(node)) return node.map((n) => this.#rewrite(n, name, base));
    if (node === null || typeof node !== 'object') return node;
    // An embedded resource with its own `$id`: its references are relative to it, and it keeps them.
    if (typeof (node as { $id?: unknown }).$id === 'string') return structuredClone(node);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if ((k === '$ref' || k === '$dynamicRef') && typeof v === 'string') out[k] = this.#target(v, name, base);
      // Values, not schemas: a "$ref" string in them is data.
      else if (DATA_KEYWORDS.has(k)) out[k] = structuredClone(v);
      // Names to schemas: a name here ("const", "$ref") is a property's, not a keyword.
      else if (SCHEMA_MAPS.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)) {
        out[k] = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, this.#rewrite(s, name, base)]));
      } else out[k] = this.#rewrite(v, name, base);
    }
    return out;
  }

  /** Where a reference of the schema `name` points in the document. */
  #target(ref: string, name: string, base: string | null): string {
    if (ref === '#' || ref.startsWith('#/')) return `#/components/schemas/${name}${ref.slice(1)}`;
    if (ref.startsWith('#')) return ref;
    let url: URL;
    try {
      url = base ? new URL(ref, base) : new URL(ref);
    } catch {
      return ref;
    }
    const other = this.#byId.get(stripHash(url.href));
    const fragment = decodeURIComponent(url.hash.slice(1));
    if (other === undefined || (fragment !== '' && !fragment.startsWith('/'))) return ref;
    return `#/components/schemas/${other}${fragment}`;
  }
}

/** Keywords whose values are instances, not schemas. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
/** Keywords whose values map names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** A component name from the schema file's name (letters, digits, `.`, `-`, `_`, as OpenAPI allows). */
function componentName(file: string): string {
  const stem = basename(file)
    .replace(/\.json$/i, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-');
  return stem === '' ? 'body' : stem;
}

function stripHash(url: string): string {
  const i = url.indexOf('#');
  return i === -1 ? url : url.slice(0, i);
}
