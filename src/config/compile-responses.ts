import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bodyValidator, type BodySchema } from './compile-route-parts.js';
import type { RawRoute } from './compile-route-rules.js';
import type { SchemaCompiler } from './schema-compiler.js';
import type { CompiledResponse } from './snapshot.js';

/**
 * The answer schemas of routes.yaml (`response.schema`), compiled as body schemas are, so a schema
 * that does not compile fails the load at its route. They may refer to one another by `$id` (the
 * video list's items are the video object); ajv resolves such a reference only to a schema already
 * compiled in the load, and a failed compile leaves its `$id` taken, so each schema is compiled
 * once, after the schemas it refers to.
 */
export function compileResponses(
  raw: readonly RawRoute[],
  configDir: string,
  schemas: SchemaCompiler,
  validators: Map<string, BodySchema>,
  report: (index: number, message: string) => void,
): (CompiledResponse | null)[] {
  const out: (CompiledResponse | null)[] = raw.map(() => null);
  const declared = raw.flatMap((r, i) => (r.response ? [{ i, file: r.response.schema }] : []));
  for (const { i, file } of inDependencyOrder(declared, configDir)) {
    const compiled = bodyValidator(file, configDir, schemas, validators, (msg) => report(i, msg));
    if (compiled) out[i] = Object.freeze({ schemaFile: file, schema: compiled.schema, validate: compiled.validate });
  }
  return out;
}

/**
 * The routes' schema files ordered so that a file comes after the files it refers to by `$id`.
 * A file that cannot be read or parsed is left where it is: compiling it reports why.
 */
function inDependencyOrder<T extends { readonly file: string }>(items: readonly T[], configDir: string): T[] {
  const peeked = new Map<string, { id: string | null; refs: string[] }>();
  for (const { file } of items) {
    const path = resolve(configDir, file);
    if (!peeked.has(path)) peeked.set(path, peek(path));
  }
  const fileById = new Map<string, string>();
  for (const [path, p] of peeked) if (p.id) fileById.set(p.id, path);
  const rank = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (path: string): void => {
    if (rank.has(path) || visiting.has(path)) return;
    visiting.add(path);
    for (const ref of peeked.get(path)?.refs ?? []) {
      const target = fileById.get(ref);
      if (target) visit(target);
    }
    rank.set(path, rank.size);
  };
  for (const path of peeked.keys()) visit(path);
  const rankOf = (t: T) => rank.get(resolve(configDir, t.file)) ?? 0;
  return [...items].sort((a, b) => rankOf(a) - rankOf(b));
}

/** A schema file's `$id` and the documents (without fragment) its references outside itself name. */
function peek(path: string): { id: string | null; refs: string[] } {
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return { id: null, refs: [] };
  }
  const top = schema !== null && typeof schema === 'object' ? (schema as { $id?: unknown }).$id : undefined;
  const id = typeof top === 'string' ? top.replace(/#.*$/, '') : null;
  const refs: string[] = [];
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) {
        try {
          refs.push(new URL(v, id ?? undefined).href.replace(/#.*$/, ''));
        } catch {
          // Not a URL ajv could resolve either: compiling the file reports it.
        }
      } else stack.push(v);
    }
  }
  return { id, refs };
}
