import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createAjv } from '../../src/schema/ajv.js';

/**
 * What the SDK contract tests share: a pinned SDK extract (test/contract/specs/, hand-derived from the
 * vendor's official SDK, every rule citing its file and line) compiled once, and the upstream
 * requests a profile's golden cases expect.
 */

/** An upstream request as a golden case expects it. */
export interface GoldenUpstream {
  readonly file: string;
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** A check against one of the extract's definitions: the ajv errors as text, or [] when `value` fits. */
export type Check = (def: string, value: unknown) => string[];

/** Compiles the extract `name` (its `$defs` are checked by name) with the project's ajv. */
export function loadExtract(name: string): { readonly spec: Record<string, unknown>; readonly check: Check } {
  const spec = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/contract/specs', name), 'utf8')) as Record<string, unknown> & { $id: string };
  const ajv = createAjv({ allErrors: true });
  // Where each route is, for the reader; not a validation keyword.
  ajv.addKeyword('x-routes');
  ajv.addSchema(spec);
  const check: Check = (def, value) => {
    const validate = ajv.getSchema(`${spec.$id}#/$defs/${def}`);
    if (!validate) throw new Error(`${name} has no $defs/${def}`);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  };
  return { spec, check };
}

/** Every upstream request the golden cases of `profile` expect (single cases and each step). */
export function goldenUpstreams(profile: string): GoldenUpstream[] {
  const dir = join(PROJECT_ROOT, 'test/golden', profile);
  const out: GoldenUpstream[] = [];
  const walk = (node: unknown, file: string): void => {
    if (Array.isArray(node)) for (const x of node) walk(x, file);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        const u = v as Partial<GoldenUpstream> | null;
        if (k === 'upstream' && u && typeof u.method === 'string' && typeof u.path === 'string')
          out.push({ file, method: u.method, path: u.path, query: u.query ?? {}, headers: u.headers ?? {}, body: u.body ?? null });
        else walk(v, file);
      }
    }
  };
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort())
    walk(parse(readFileSync(join(dir, file), 'utf8')), file);
  return out;
}
