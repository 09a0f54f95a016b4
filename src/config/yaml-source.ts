import { LineCounter, parseDocument, isCollection, isMap, isNode, isScalar, visit, type Alias, type Document, type YAMLError } from 'yaml';
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
  // One fault of indentation confuses the parser for the lines after it: its first complaint is
  // the fault, the others (up to half a dozen) are echoes of it. Only the first is reported.
  const faults = [...doc.errors, ...doc.warnings].sort((a, b) => a.pos[0] - b.pos[0]);
  if (faults[0]) return { source: null, issues: [syntaxIssue(file, text, doc, lineCounter, faults)] };

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
  return { source, issues: [] };
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

/** The parser's messages that say "wrong indentation" in its own terms, in an operator's words. */
const PLAIN_WORDS: Readonly<Record<string, string>> = {
  'All mapping items must start at the same column': 'wrong indentation: this key does not line up with the keys above it',
  'All sequence items must start at the same column': 'wrong indentation: this list item does not line up with the items above it',
  'Sequence item without - indicator': 'wrong indentation: this line is indented less than the keys above it (or it lacks the "- " of a new list item)',
  'A block sequence may not be used as an implicit map key': 'wrong indentation: a list item ("- ") where a key was expected',
  'Implicit keys need to be on a single line': 'a key runs over more than one line (wrong indentation, or a missing ":")',
  'Implicit map keys need to be followed by map values': 'a key without a value: a missing ":" (or wrong indentation)',
  'Nested mappings are not allowed in compact mappings': 'a second "key:" on the same line: quote a value that holds ": "',
  'Tabs are not allowed as indentation': 'a tab in the indentation: indent with spaces',
  // Reported where the bracket or the quote opened (unclosedAt).
  'Flow sequence in block collection must be sufficiently indented and end with a ]':
    'this "[" has no "]" (a list in brackets must close, and the lines it runs on to be indented)',
  'Flow map in block collection must be sufficiently indented and end with a }':
    'this "{" has no "}" (a mapping in braces must close, and the lines it runs on to be indented)',
  'Missing closing "quote': "this '\"' has no closing '\"'",
  "Missing closing 'quote": 'this "\'" has no closing "\'"',
};

/** The parser's first error (of `faults`, in the order of the text) as one issue: where the mistake is, in plain words, with the parser's code. */
function syntaxIssue(file: string, text: string, doc: Document, lineCounter: LineCounter, faults: readonly YAMLError[]): ConfigIssue {
  const [e, ...rest] = faults as [YAMLError, ...YAMLError[]];
  const at = (offset: number, message: string, code: string): ConfigIssue => {
    const pos = lineCounter.linePos(offset);
    return { file, line: pos.line, column: pos.col, message: `${message} (YAML ${code})`, severity: 'error' };
  };
  // `b: 1` followed by a line indented further (`    c: 2`): the value runs on into that line, and
  // the parser blames the value. The line indented too far is the mistake.
  const runOn = e.code === 'BLOCK_AS_IMPLICIT_KEY' ? rest.find((r) => r.code === 'MULTILINE_IMPLICIT_KEY' && r.pos[0] === e.pos[0]) : undefined;
  if (runOn) {
    const lineStart = text.lastIndexOf('\n', runOn.pos[1] - 1) + 1;
    return at(
      significantFrom(text, lineStart),
      'wrong indentation: this key is indented further than the keys above it, so it reads as part of the value before it',
      runOn.code,
    );
  }
  // An unclosed `[`, `{` or quote is only noticed where the next line starts; the mistake is where it opened.
  const opened = unclosedAt(doc, e.pos[0]);
  const said = (e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  let message = PLAIN_WORDS[said] ?? said;
  if (e.code === 'DUPLICATE_KEY') message = `key ${keyAt(text, e.pos[0])} appears twice in the same mapping`;
  if (opened !== null) return at(opened, PLAIN_WORDS[said] ? message : `${message} (opened here)`, e.code);
  // A tab is itself the mistake; other faults are often reported at the blank before the line at fault.
  return at(e.code === 'TAB_AS_INDENT' ? e.pos[0] : significantFrom(text, e.pos[0]), message, e.code);
}

/**
 * The first offset at or after `offset` that is not blank and not in a comment. The parser often
 * reports a fault of indentation at the whitespace (or the comment lines) before the line at fault.
 */
function significantFrom(text: string, offset: number): number {
  let i = offset;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ''))) {
      const end = text.indexOf('\n', i);
      if (end === -1) return offset;
      i = end + 1;
    } else return i;
  }
  return offset;
}

/** The key written at `offset`, quoted for a message. */
function keyAt(text: string, offset: number): string {
  const m = /^("(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|[^:\n]*?)\s*:/.exec(text.slice(offset, offset + 1100));
  const key = m?.[1]?.trim() ?? '';
  return key.startsWith('"') || key.startsWith("'") ? key : JSON.stringify(key);
}
