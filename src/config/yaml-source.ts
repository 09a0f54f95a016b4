import { LineCounter, parseDocument, isCollection, isMap, isNode, isScalar, visit, type Alias, type Document } from 'yaml';
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

/** `file:line` of the value at `path`; through a merged source, of the file that value came from. */
export function placeOf(src: YamlSource, path: readonly (string | number)[]): string {
  // issue() knows which file a merged path belongs to; locate() alone would name the main file.
  const at = src.issue(path, '');
  return `${at.file}:${at.line}`;
}

/** Parses YAML text keeping positions; syntax errors and duplicate keys come back as issues. */
export function parseYaml(file: string, text: string): { source: YamlSource | null; issues: ConfigIssue[] } {
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: false });
  const issues: ConfigIssue[] = [];
  for (const e of [...doc.errors, ...doc.warnings]) {
    // An unclosed `[`, `{` or quote is only noticed where the next line starts; the mistake is where it opened.
    const opened = unclosedAt(doc, e.pos[0]);
    const pos = lineCounter.linePos(opened ?? e.pos[0]);
    const message = (e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    issues.push({ file, line: pos.line, column: pos.col, message: opened === null ? message : `${message} (opened here)`, severity: 'error' });
  }
  if (issues.length > 0) return { source: null, issues };

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // An alias to no anchor, or aliases that expand exponentially, throw here rather than in parsing.
    const pos = lineCounter.linePos(offendingAlias(doc)?.range?.[0] ?? 0);
    return { source: null, issues: [{ file, line: pos.line, column: pos.col, message: (err as Error).message, severity: 'error' }] };
  }

  const locate = (path: readonly (string | number)[]) => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) {
        const pos = lineCounter.linePos(node.range[0]);
        // A block map or list under `key:` starts on the next line; the key is the line to name.
        const last = path[n - 1];
        const key = last !== undefined ? keyNode(doc.getIn(path.slice(0, n - 1), true), last) : undefined;
        const keyPos = key?.range ? lineCounter.linePos(key.range[0]) : undefined;
        if (keyPos && keyPos.line < pos.line) return { line: keyPos.line, column: keyPos.col };
        return { line: pos.line, column: pos.col };
      }
    }
    return { line: 1, column: 1 };
  };
  const source: YamlSource = {
    file,
    value,
    locate,
    issue(path, message, severity = 'error') {
      return { file, ...locate(path), message, severity };
    },
  };
  return { source, issues };
}

/** The key node of `key` in `parent` when `parent` is a map. */
function keyNode(parent: unknown, key: string | number) {
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
  return isNode(pair?.key) ? pair.key : undefined;
}

/** The alias that has no anchor, else the first alias: where a failed alias resolution is reported. */
function offendingAlias(doc: Document): Alias | undefined {
  const aliases: Alias[] = [];
  visit(doc, { Alias: (_k, node) => void aliases.push(node) });
  return aliases.find((a) => a.resolve(doc) === undefined) ?? aliases[0];
}

/** Where the innermost flow collection or quoted scalar that runs on to `offset` opened, if it began before it. */
function unclosedAt(doc: Document, offset: number): number | null {
  let start: number | null = null;
  visit(doc, (_key, node) => {
    if (!isNode(node) || !node.range || node.range[0] >= offset || node.range[1] < offset) return;
    const open = (isCollection(node) && node.flow) || (isScalar(node) && (node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE'));
    if (open && (start === null || node.range[0] > start)) start = node.range[0];
  });
  return start;
}
