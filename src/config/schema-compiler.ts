import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { createAjv } from '../schema/ajv.js';
import { COMPILE_CACHE_LIMITS, CompileCache } from '../mapping/compile-cache.js';

/** The ajv options a validator depends on besides its schema (createAjv fixes the rest). */
export interface SchemaOptions {
  readonly allErrors: boolean;
  readonly verbose?: boolean;
}

/** What compile-routes and compile-families need: ajv's compile, nothing of its registry. */
export interface SchemaCompiler {
  compile(schema: object): ValidateFunction;
}

/**
 * Validators by ajv options and schema text, shared by every load of the process. Only schemas
 * whose references all point inside themselves are kept: such a validator depends on nothing but
 * its key.
 */
export const schemaCache = new CompileCache<ValidateFunction>(COMPILE_CACHE_LIMITS.schemas);

const REF_KEYS = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

/**
 * The `$id`s a schema would register and whether any reference leaves it. Every nested object is
 * looked at, also data under `const` or `examples`: a false alarm only costs a fresh compile.
 */
function scan(schema: unknown): { ids: string[]; selfContained: boolean } {
  const ids: string[] = [];
  let selfContained = true;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === '$id' && typeof v === 'string') ids.push(v);
      else if (REF_KEYS.has(k) && typeof v === 'string' && !v.startsWith('#')) selfContained = false;
      else stack.push(v);
    }
  }
  return { ids, selfContained };
}

/**
 * A SchemaCompiler for one load that reuses validators of earlier loads when the schema text and the
 * ajv options are the same. What a load compiles afresh goes to one new ajv of its own, as before
 * the cache; whenever that ajv's registry matters (a reference out of the schema, an `$id` this load
 * already used) the schemas this load took from the cache are first compiled into it too, so ajv
 * resolves and refuses exactly as it did when every schema of the load went through it.
 */
export function cachedSchemaCompiler(options: SchemaOptions): SchemaCompiler {
  const prefix = `allErrors=${options.allErrors} verbose=${options.verbose ?? false}\n`;
  let ajv: Ajv2020 | null = null;
  const fresh = () => (ajv ??= createAjv(options));
  /** Schemas of this load answered from the cache, not yet given to this load's ajv. */
  const unregistered: object[] = [];
  const usedIds = new Set<string>();

  return {
    compile(schema: object): ValidateFunction {
      const key = prefix + JSON.stringify(schema);
      const { ids, selfContained } = scan(schema);
      const clash = ids.some((id) => usedIds.has(id));
      for (const id of ids) usedIds.add(id);
      if (selfContained && !clash) {
        const hit = schemaCache.get(key);
        if (hit) {
          unregistered.push(schema);
          return hit;
        }
      }
      const own = fresh();
      // compile(), not addSchema(): it registers a schema the way the load without the cache did.
      if (!selfContained || clash) for (const s of unregistered.splice(0)) own.compile(s);
      const validate = own.compile(schema);
      if (selfContained) schemaCache.set(key, validate);
      return validate;
    },
  };
}
