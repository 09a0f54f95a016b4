import { KNOWN_FUNCTIONS } from '../mapping/known-functions.js';
import { compileMapping, type Mapping } from '../mapping/mapping.js';
import { nearestName } from './did-you-mean.js';
import type { ConfigIssue } from './issues.js';
import type { YamlSource } from './yaml-source.js';

/** The start of the warning for a mapping that runs on jsonata instead of the fast path (tests look for it). */
export const FALLBACK_WARNING = 'mapping falls back to jsonata';

/** Compiles the expression at `path` of a config file; a syntax error or a call of an unknown function becomes an issue there and null. */
export function compileMappingAt(src: YamlSource, expr: string, path: (string | number)[], issues: ConfigIssue[]): Mapping | null {
  // issue() knows which fragment a merged path came from; locate() alone would name the main file.
  const at = src.issue(path, '');
  let mapping: Mapping;
  try {
    mapping = compileMapping(expr, `${at.file}:${at.line}`);
  } catch (err) {
    const e = err as { message?: string; position?: number };
    issues.push(src.issue(path, `JSONata syntax error${e.position !== undefined ? ` at character ${e.position}` : ''}: ${e.message ?? String(err)}`));
    return null;
  }
  // jsonata finds a call of nothing only when it evaluates it: on every request, as a 500.
  const { unknown, bound } = mapping.functions;
  for (const name of unknown) {
    const near = nearestName(name, [...bound, ...KNOWN_FUNCTIONS]);
    issues.push(src.issue(path, `unknown function $${name}${near === null ? '' : ` (did you mean $${near}?)`}`));
  }
  if (unknown.length > 0) return null;
  // Slower (a promise per AST node), not wrong: a warning naming the construct the fast path lacks.
  if (mapping.slowBecause !== null) issues.push(src.issue(path, `${FALLBACK_WARNING} (${mapping.slowBecause})`, 'warning'));
  return mapping;
}
