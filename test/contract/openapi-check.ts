/**
 * A pinned OpenAPI extract (test/contract/specs/) as ajv validators: the document's schemas, as the
 * vendor wrote them, converted to JSON Schema 2020-12 once, then one validator per request body or
 * answer an operation describes. The conversion: `$ref` to `#/components/schemas/X` points at the
 * converted components; `nullable: true` (OpenAPI 3.0) adds "null" to `type` and `enum`, or wraps a
 * schema without a type in `anyOf [schema, {type: null}]`; OpenAPI 3.1 `type: [..., "null"]` is JSON
 * Schema already; `discriminator` is dropped (the `oneOf`/`anyOf` beside it still decides), as are
 * `example`, `examples` and every `x-` extension; `format: binary` (a file) and `unixtime` accept
 * anything of their type.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createAjv } from '../../src/schema/ajv.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const addFormats = createRequire(import.meta.url)('ajv-formats') as (ajv: Ajv) => Ajv;
const DROPPED = new Set(['discriminator', 'example', 'examples', 'xml', 'externalDocs']);
const SPEC_ID = 'spec';

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An OpenAPI schema as JSON Schema 2020-12 (see the module comment). */
export function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!isObj(node)) return node;
  const out: Obj = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROPPED.has(k) || k.startsWith('x-') || k === 'nullable') continue;
    if (k === '$ref' && typeof v === 'string') {
      const m = /^#\/components\/schemas\/(.+)$/.exec(v);
      if (!m) throw new Error(`unsupported $ref ${v}`);
      out.$ref = `${SPEC_ID}#/$defs/${m[1]}`;
    } else if (k === 'properties' && isObj(v)) {
      out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, toJsonSchema(s)]));
    } else out[k] = toJsonSchema(v);
  }
  if (node.nullable !== true) return out;
  if (typeof out.type === 'string' || Array.isArray(out.type)) {
    const types = Array.isArray(out.type) ? out.type : [out.type];
    if (!types.includes('null')) out.type = [...types, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

/** One failed check: where in the value, which keyword, what the schema said. */
export interface Problem {
  readonly path: string;
  readonly keyword: string;
  readonly message: string;
}

/** Validates a value; the problems found, none when it conforms. */
export type Check = (value: unknown) => Problem[];

/** An operation of the extract found by method and concrete path (`/v1/videos/abc`). */
export interface Operation {
  readonly id: string;
  readonly template: string;
  readonly method: string;
  readonly spec: Obj;
}

/** The validators of one pinned extract. */
export interface SpecChecks {
  /** The operation a method and a concrete path (with the server's `/v1`) name, or null. */
  operation(method: string, path: string): Operation | null;
  /** The check of a request body of `media` type, or null when the operation takes none. */
  request(op: Operation, media: string): Check | null;
  /** The check of a 2xx answer of `media` type, or null when the operation gives no such answer. */
  answer(op: Operation, status: number, media: string): Check | null;
  /** The check of a component schema by name (`ErrorResponse`). */
  component(name: string): Check;
  /** The media types the operation's 2xx answers may have. */
  answerTypes(op: Operation, status: number): string[];
}

/** Loads `test/contract/specs/<file>` and prepares its checks; `prefix` is the servers' path (`/v1`). */
export function loadSpec(file: string, prefix: string): SpecChecks {
  const doc = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/contract/specs', file), 'utf8')) as Obj;
  const components = ((doc.components as Obj).schemas ?? {}) as Obj;
  const defs = { $id: SPEC_ID, $defs: Object.fromEntries(Object.entries(components).map(([n, s]) => [n, toJsonSchema(s)])) };
  // JSON as the gateway's own ajv reads it; a form's text parts are typed by the schema (a form has
  // only strings: `n` "2" is the integer 2), as the OpenAPI encoding of multipart bodies says.
  const json = createAjv({ allErrors: true });
  const form = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, coerceTypes: true });
  addFormats(form as unknown as Ajv);
  for (const ajv of [json, form]) {
    ajv.addFormat('binary', true);
    ajv.addFormat('unixtime', true);
    ajv.addSchema(defs);
  }
  const compiled = new Map<string, ValidateFunction>();
  const check = (schema: Json, forForm = false): Check => {
    const key = `${forForm}:${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = (forForm ? form : json).compile(toJsonSchema(schema) as Obj);
      compiled.set(key, validate);
    }
    const v = validate;
    // A form is checked on a copy: coercion rewrites what it checks.
    return (value) => (v(forForm ? structuredClone(value) : value) ? [] : (v.errors ?? []).map(problem));
  };
  const paths = doc.paths as Record<string, Record<string, Obj>>;
  const templates = Object.keys(paths).map((t) => ({ t, re: new RegExp(`^${prefix}${t.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
  return {
    operation(method, path) {
      const bare = path.split('?')[0] ?? '';
      const m = method.toLowerCase();
      const hit = templates.find(({ t, re }) => re.test(bare) && paths[t]?.[m]);
      if (!hit) return null;
      const spec = paths[hit.t]![m]!;
      return { id: String(spec.operationId), template: hit.t, method: m, spec };
    },
    request(op, media) {
      const schema = ((op.spec.requestBody as Obj | undefined)?.content as Obj | undefined)?.[media];
      return isObj(schema) && schema.schema !== undefined ? check(schema.schema, media === 'multipart/form-data') : null;
    },
    answer(op, status, media) {
      const answers = op.spec.responses as Obj;
      const a = (answers[String(status)] ?? answers.default) as Obj | undefined;
      const content = (a?.content as Obj | undefined)?.[media];
      return isObj(content) && content.schema !== undefined ? check(content.schema) : null;
    },
    component(name) {
      if (!(name in components)) throw new Error(`no component ${name}`);
      return check({ $ref: `#/components/schemas/${name}` });
    },
    answerTypes(op, status) {
      const answers = op.spec.responses as Obj;
      const a = (answers[String(status)] ?? answers.default) as Obj | undefined;
      return Object.keys((a?.content as Obj | undefined) ?? {});
    },
  };
}

function problem(e: ErrorObject): Problem {
  return { path: e.instancePath, keyword: e.keyword, message: `${e.instancePath || '/'} ${e.message ?? e.keyword}` };
}

/**
 * A multipart form as the object its schema describes: text parts as strings (JSON-looking values
 * of bracketed names such as `input_reference[image_url]` nest), file parts as the string "<file>"
 * (`format: binary`), a name given several times as an array.
 */
export function formObject(parts: readonly { name: string; value?: string; filename?: string }[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (target: Record<string, unknown>, key: string, value: unknown) => {
    if (!(key in target)) target[key] = value;
    else target[key] = Array.isArray(target[key]) ? [...(target[key] as unknown[]), value] : [target[key], value];
  };
  for (const p of parts) {
    const value = p.filename !== undefined ? '<file>' : (p.value ?? '');
    const m = /^([^[\]]+)\[([^[\]]+)\]$/.exec(p.name);
    if (m) {
      const inner = (isObj(out[m[1]!] as Json) ? out[m[1]!] : (out[m[1]!] = {})) as Record<string, unknown>;
      put(inner, m[2]!, value);
    } else put(out, p.name.replace(/\[\]$/, ''), value);
  }
  return out;
}
