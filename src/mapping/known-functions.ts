import { boundNames } from './fast/compile.js';
import { GATEWAY_FUNCTIONS } from './jsonata-functions.js';

/**
 * jsonata 2.2.2's built-in functions (its `staticFrame.bind(…)` calls, and `$now`, `$millis` that
 * each evaluation binds). jsonata has no way to list them, so they are written here; a unit test
 * compares this list with jsonata's own source, so an upgrade that adds or drops one fails there.
 */
export const JSONATA_FUNCTIONS: readonly string[] = Object.freeze([
  'sum',
  'count',
  'max',
  'min',
  'average',
  'string',
  'substring',
  'substringBefore',
  'substringAfter',
  'lowercase',
  'uppercase',
  'length',
  'trim',
  'pad',
  'match',
  'contains',
  'replace',
  'split',
  'join',
  'formatNumber',
  'formatBase',
  'formatInteger',
  'parseInteger',
  'number',
  'floor',
  'ceil',
  'round',
  'abs',
  'sqrt',
  'power',
  'random',
  'boolean',
  'not',
  'map',
  'zip',
  'filter',
  'single',
  'reduce',
  'sift',
  'keys',
  'lookup',
  'append',
  'exists',
  'spread',
  'merge',
  'reverse',
  'each',
  'error',
  'assert',
  'type',
  'sort',
  'shuffle',
  'distinct',
  'base64encode',
  'base64decode',
  'encodeUrlComponent',
  'encodeUrl',
  'decodeUrlComponent',
  'decodeUrl',
  'eval',
  'toMillis',
  'fromMillis',
  'clone',
  'now',
  'millis',
]);

/** Every function a mapping may call without binding it: jsonata's and the gateway's own (without `$`). */
export const KNOWN_FUNCTIONS: ReadonlySet<string> = new Set([...JSONATA_FUNCTIONS, ...Object.keys(GATEWAY_FUNCTIONS)]);

/** What an expression calls that nothing defines, and the names it binds itself (for "did you mean"). */
export interface FunctionCheck {
  /** Names (without `$`) called but neither built in nor bound in the expression, in the order first called. */
  readonly unknown: readonly string[];
  /** Names the expression binds (`:=`, parameters, `@$v`, `#$i`). */
  readonly bound: readonly string[];
}

interface Node {
  readonly type?: string;
  readonly value?: unknown;
  readonly procedure?: Node;
  readonly rhs?: Node;
}

const NONE: FunctionCheck = Object.freeze({ unknown: Object.freeze([]), bound: Object.freeze([]) });

/**
 * The functions a jsonata AST calls that neither jsonata, the gateway nor the expression itself
 * defines: `$f(…)`, `$f(?, …)` and `… ~> $f`. jsonata would only find them when it evaluates the call
 * (T1006, "attempted to invoke a non-function"), on every request. A name bound anywhere in the
 * expression counts as defined everywhere in it: scopes are not followed, so this never refuses an
 * expression jsonata runs. A variable read without a call is left alone (an unset one is undefined).
 */
export function checkFunctionCalls(ast: unknown): FunctionCheck {
  const bound = boundNames(ast);
  const unknown = new Set<string>();
  const called = (n: Node | undefined) => {
    if (n?.type !== 'variable' || typeof n.value !== 'string') return;
    // `$` and `$$` are the context and the input, never a function of ours.
    if (n.value === '' || n.value === '$' || KNOWN_FUNCTIONS.has(n.value) || bound.has(n.value)) return;
    unknown.add(n.value);
  };
  // jsonata's AST is a tree (boundNames walks it the same way); its regexes are objects with no nodes in them.
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || v instanceof RegExp) return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    const n = v as Node;
    if (n.type === 'function' || n.type === 'partial') called(n.procedure);
    if (n.type === 'apply') called(n.rhs);
    for (const x of Object.values(n)) visit(x);
  };
  visit(ast);
  if (unknown.size === 0 && bound.size === 0) return NONE;
  return Object.freeze({ unknown: Object.freeze([...unknown]), bound: Object.freeze([...bound]) });
}
