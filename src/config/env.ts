import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `${NAME}` and `${NAME:-default}` references in string values of channels.yaml. They are
 * resolved on the parsed values (never on the raw text), so an environment value can never change
 * the structure of the file, and each unresolved reference is reported at its own line.
 */
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * The variables the channel files of a config directory (channels.yaml and channels.d/*.yaml)
 * reference, with or without a default: for tests and benchmarks that must give each a value.
 */
export function channelEnvNames(dir: string): string[] {
  const fragments = join(dir, 'channels.d');
  const files = [
    join(dir, 'channels.yaml'),
    ...(existsSync(fragments)
      ? readdirSync(fragments)
          .filter((f) => f.endsWith('.yaml'))
          .map((f) => join(fragments, f))
      : []),
  ];
  const names = new Set<string>();
  for (const f of files) for (const [, name = ''] of readFileSync(f, 'utf8').matchAll(REF)) names.add(name);
  return [...names];
}

/** An environment reference that has no value and no default. */
export interface MissingEnv {
  readonly path: (string | number)[];
  readonly name: string;
}

/** Replaces references in every string of `value`, returning the new value and what is missing. */
export function interpolateEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path: (string | number)[] = [],
  missing: MissingEnv[] = [],
): { value: unknown; missing: MissingEnv[] } {
  if (typeof value === 'string') {
    const out = value.replace(REF, (_m, name: string, dflt: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (dflt !== undefined) return dflt;
      missing.push({ path, name });
      return '';
    });
    return { value: out, missing };
  }
  if (Array.isArray(value)) {
    return { value: value.map((v, i) => interpolateEnv(v, env, [...path, i], missing).value), missing };
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateEnv(v, env, [...path, k], missing).value;
    return { value: out, missing };
  }
  return { value, missing };
}
