import { compileMapping, type Mapping } from '../mapping/mapping.js';
import type { ConfigIssue } from './issues.js';
import type { YamlSource } from './yaml-source.js';

/** Compiles the expression at `path` of a config file; a syntax error becomes an issue there and null. */
export function compileMappingAt(src: YamlSource, expr: string, path: (string | number)[], issues: ConfigIssue[]): Mapping | null {
  // issue() knows which fragment a merged path came from; locate() alone would name the main file.
  const at = src.issue(path, '');
  try {
    return compileMapping(expr, `${at.file}:${at.line}`);
  } catch (err) {
    const e = err as { message?: string; position?: number };
    issues.push(src.issue(path, `JSONata syntax error${e.position !== undefined ? ` at character ${e.position}` : ''}: ${e.message ?? String(err)}`));
    return null;
  }
}
