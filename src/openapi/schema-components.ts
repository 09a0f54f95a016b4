import { basename } from 'node:path';
import type { JsonSchema, Ref } from './openapi-types.js';

/** A schema file of the config as the document publishes it: a route's body or answer schema. */
export interface SchemaFile {
  /** The file as routes.yaml names it: the component is named after it. */
  readonly schemaFile: string;
  readonly schema: Readonly<Record<string, unknown>> | boolean;
}

/**
 * The schema files of the routes (bodies and answers) as components of the OpenAPI document: one
 * component per file, however many routes name it, named after the file. A schema's own `$id` and
 * `$schema` are left out (many OpenAPI tools resolve `#` against the document rather than against
 * an `$id`, and the document states the dialect once, `jsonSchemaDialect`), and its top-level
 * `$defs` become components of their own, `<file>.<name>`: a component that refers into itself
 * makes a type that refers to itself, which generated clients refuse (TypeScript's TS2502). Its
 * references are rewritten to match: into its `$defs`, to theirs; elsewhere into itself, to its
 * component; to another of these files by `$id`, to that file's. Any other reference is kept as
 * written.
 */
export class SchemaComponents {
  /** Components by name: each file in the order the routes first name it, followed by its `$defs`. */
  readonly components: Record<string, JsonSchema> = {};
  readonly #names = new Map<SchemaFile['schema'], string>();
  /** Names by top-level `$id`, for references between files. */
  readonly #byId = new Map<string, string>();
  /** The components of each file's hoisted definitions, by the file's name and the definition's. */
  readonly #defs = new Map<string, Map<string, string>>();

  /** `reserved`: names the document gives other components. */
  constructor(files: readonly SchemaFile[], reserved: readonly string[] = []) {
    // Names first, so a reference can point at a schema that a later route brings in.
    const taken = new Set<string>(reserved);
    for (const file of files) {
      if (this.#names.has(file.schema)) continue;
      const name = freeName(componentName(file.schemaFile), taken);
      this.#names.set(file.schema, name);
      if (typeof file.schema !== 'object') continue;
      if (typeof file.schema.$id === 'string') this.#byId.set(stripHash(file.schema.$id), name);
      const defs = new Map<string, string>();
      for (const key of DEFS) for (const def of Object.keys(definitions(file.schema, key))) defs.set(`${key}/${def}`, freeName(`${name}.${safe(def)}`, taken));
      this.#defs.set(name, defs);
    }
    for (const [schema, name] of this.#names) this.#publish(schema, name);
  }

  /** A reference to the component of a schema file. */
  refOf(file: SchemaFile): Ref {
    const name = this.#names.get(file.schema);
    if (name === undefined) throw new Error(`the schema ${file.schemaFile} is not one of the document's routes`);
    return { $ref: `#/components/schemas/${name}` };
  }

  /** The file's component and its definitions' components: no `$id`/`$schema` at the top, references rewritten. */
  #publish(schema: SchemaFile['schema'], name: string): void {
    if (typeof schema === 'boolean') {
      this.components[name] = schema;
      return;
    }
    const { $id, $schema: _dialect, $defs: _defs, definitions: _definitions, ...rest } = schema;
    const base = typeof $id === 'string' ? $id : null;
    this.components[name] = this.#rewrite(rest, name, base) as JsonSchema;
    for (const key of DEFS) {
      for (const [def, body] of Object.entries(definitions(schema, key))) {
        const component = this.#defs.get(name)?.get(`${key}/${def}`);
        if (component) this.components[component] = this.#rewrite(body, name, base) as JsonSchema;
      }
    }
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

  /** Where a reference of the file `name` points in the document. */
  #target(ref: string, name: string, base: string | null): string {
    if (ref === '#' || ref.startsWith('#/')) return this.#inside(name, ref.slice(1));
    if (ref.startsWith('#')) return ref;
    let url: URL;
    try {
      url = base ? new URL(ref, base) : new URL(ref);
    } catch {
      return ref;
    }
    const other = this.#byId.get(stripHash(url.href));
    // Kept escaped: it goes into the document as a URI fragment again.
    const fragment = url.hash.slice(1);
    if (other === undefined || (fragment !== '' && !fragment.startsWith('/'))) return ref;
    return this.#inside(other, fragment);
  }

  /** The document's reference for a JSON pointer into the file `name`: into a hoisted definition, or into its component. */
  #inside(name: string, pointer: string): string {
    const [, key, def, ...rest] = pointer.split('/');
    const component = key !== undefined && def !== undefined ? this.#defs.get(name)?.get(`${key}/${unescapeSegment(def)}`) : undefined;
    if (component) return `#/components/schemas/${component}${rest.map((s) => `/${s}`).join('')}`;
    return `#/components/schemas/${name}${pointer}`;
  }
}

/** Where a schema keeps definitions for its references (`definitions`: the name before draft 2019-09). */
const DEFS = ['$defs', 'definitions'] as const;
/** Keywords whose values are instances, not schemas. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
/** Keywords whose values map names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** A schema's definitions under `key`, or none. */
function definitions(schema: Readonly<Record<string, unknown>>, key: (typeof DEFS)[number]): Record<string, unknown> {
  const defs = schema[key];
  return defs !== null && typeof defs === 'object' && !Array.isArray(defs) ? (defs as Record<string, unknown>) : {};
}

/** A component name from the schema file's name (letters, digits, `.`, `-`, `_`, as OpenAPI allows). */
function componentName(file: string): string {
  const stem = safe(basename(file).replace(/\.json$/i, ''));
  return stem === '' ? 'schema' : stem;
}

/** Characters OpenAPI allows in a component name; others become `-`. */
function safe(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '-');
}

/** `wanted`, or `wanted-2`, `wanted-3`… when taken; the name is then taken. */
function freeName(wanted: string, taken: Set<string>): string {
  let name = wanted;
  for (let n = 2; taken.has(name); n++) name = `${wanted}-${n}`;
  taken.add(name);
  return name;
}

/** A JSON pointer segment of a URI fragment, unescaped (a malformed percent-escape is left as it is). */
function unescapeSegment(segment: string): string {
  let s = segment;
  try {
    s = decodeURIComponent(segment);
  } catch {
    // Not an escape: the segment as written.
  }
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

function stripHash(url: string): string {
  const i = url.indexOf('#');
  return i === -1 ? url : url.slice(0, i);
}
