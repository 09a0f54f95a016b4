import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import type { ConfigIssue } from './issues.js';

/** A parsed YAML file that can say on which line any value of it stands. */
export interface YamlSource {
  readonly file: string;
  readonly value: unknown;
  /** Line and column of the value at `path`, or of its nearest existing parent. */
  locate(path: readonly (string | number)[]): { line: number; column: number };
  /** An issue located at `path`. */
  issue(path: readonly (string | number)[], message: string, severity?: 'error' | 'warning'): ConfigIssue;
}

/** Parses YAML text keeping positions; syntax errors and duplicate keys come back as issues. */
export function parseYaml(file: string, text: string): { source: YamlSource | null; issues: ConfigIssue[] } {
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: false });
  const issues: ConfigIssue[] = [];
  for (const e of [...doc.errors, ...doc.warnings]) {
    const pos = lineCounter.linePos(e.pos[0]);
    issues.push({ file, line: pos.line, column: pos.col, message: e.message.split('\n')[0]!, severity: 'error' });
  }
  if (issues.length > 0) return { source: null, issues };

  const locate = (path: readonly (string | number)[]) => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) {
        const pos = lineCounter.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return { line: 1, column: 1 };
  };
  const source: YamlSource = {
    file,
    value: doc.toJS({ maxAliasCount: 100 }),
    locate,
    issue(path, message, severity = 'error') {
      return { file, ...locate(path), message, severity };
    },
  };
  return { source, issues };
}
