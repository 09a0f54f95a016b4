/**
 * A synchronous fast path for a subset of JSONata. jsonata 2.x evaluates every AST node through an
 * async function (a promise per node), which made the profile mappings the largest cost of a
 * proxied request. Here the AST jsonata already parsed is turned into plain closures once.
 *
 * The contract: a fast mapping gives exactly the value jsonata would give for the same input, or
 * BAIL, and then the caller asks jsonata. Whatever jsonata would reject with an error bails too, so
 * jsonata reports its own error. When in doubt, bail: a bail costs only the time jsonata takes anyway.
 *
 * Subset (mirrors jsonata 2.2's evaluator; re-check on a jsonata upgrade, the differential test helps):
 * literals; `$`, `$$`; `$v` bound by `:=` directly inside a block; paths of name steps whose first
 * step may be a variable, with `[]` on the last step only; `{ "literal key": expr }`; `[ ... ]`;
 * `? :` (and the `??`, `?:` jsonata rewrites into it); `and or = != < <= > >= + - * / % &`; unary
 * minus; `$string $exists $not $boolean $number $encodeUrlComponent $segment` with one argument.
 * Name steps over arrays map and flatten as jsonata's evaluateStep and lookup do (see overArray); a
 * variable that holds an array bails at run time, as jsonata's sequence flags are not visible here.
 */

import { segment, unsafeSegment } from './jsonata-functions.js';

/** What a fast mapping returns when the input needs more than the subset: evaluate with jsonata. */
export const BAIL: unique symbol = Symbol('mapping-fast.bail');

/** A compiled expression: the value jsonata would give for the input, or BAIL. */
export type FastMapping = (input: unknown) => unknown;

interface Node {
  readonly type: string;
  readonly value?: unknown;
  readonly [key: string]: unknown;
}
type Fn = (root: object, vars: unknown[]) => unknown;
interface Scope {
  readonly names: Map<string, number>;
  readonly parent: Scope | null;
}
interface State {
  slots: number;
  /** jsonata's limit on sequence length: a longer array constructor fails there (D2015). */
  readonly maxSequence: number;
}

/** Deeper ASTs could hit jsonata's stack limit (300 nested evaluations) where closures would not. */
const MAX_DEPTH = 100;

class Unsupported extends Error {}
/** Thrown (never escapes) to abandon an evaluation; a symbol, so throwing captures no stack trace. */
const STOP = Symbol('mapping-fast.stop');

function stop(): never {
  throw STOP;
}
function unsupported(what: string): never {
  throw new Unsupported(what);
}

/** jsonata flags its function objects with these keys and treats such objects as opaque. */
function isJsonataFunction(v: object): boolean {
  const o = v as { _jsonata_function?: unknown; _jsonata_lambda?: unknown };
  return o._jsonata_function === true || o._jsonata_lambda === true;
}

/**
 * jsonata treats an array carrying its flags as its own sequence (unwrapping, not flattening): such
 * arrays are never JSON input, but could be an earlier evaluation's output handed back in.
 */
function plainArray(a: unknown[]): void {
  const t = a as unknown as { sequence?: unknown; cons?: unknown; outerWrapper?: unknown };
  if (t.sequence !== undefined || t.cons !== undefined || t.outerWrapper !== undefined) stop();
}

/** Own property of a non-array value, like jsonata's lookup (inherited keys such as `constructor` are not seen). */
function lookup(obj: unknown, key: string): unknown {
  if (obj === null || typeof obj !== 'object') return undefined;
  if (Array.isArray(obj) || isJsonataFunction(obj)) stop(); // arrays go through lookupItems
  if (!Object.prototype.hasOwnProperty.call(obj, key)) return undefined;
  const v = (obj as Record<string, unknown>)[key];
  if (Array.isArray(v)) plainArray(v);
  return v;
}

/** jsonata's $boolean, for an argument that is not undefined. */
function truthy(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
      return v.length > 0;
    case 'number':
      if (v === Infinity || v === -Infinity) stop(); // jsonata: D1001; NaN is simply false
      return v !== 0 && !Number.isNaN(v);
    case 'boolean':
      return v;
    case 'object': {
      if (v === null) return false;
      if (Array.isArray(v)) {
        // one item: its value; an undefined item (then $boolean gives undefined) stops below
        if (v.length === 1) return truthy(v[0]);
        let any = false;
        for (const x of v) if (x !== undefined && truthy(x)) any = true; // every item, as jsonata's filter
        return any;
      }
      if (isJsonataFunction(v)) stop();
      return Object.keys(v).length > 0;
    }
    default:
      return stop(); // undefined (a caller's job), functions
  }
}

/** jsonata's $string for scalars: non-integers are rounded to 15 significant digits first. */
function str(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      if (!Number.isFinite(v)) stop();
      return JSON.stringify(Number.isInteger(v) ? v : Number(v.toPrecision(15)));
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      return v === null ? 'null' : stop(); // objects go through JSON.stringify with a replacer: not modelled
  }
}

/** An operand of arithmetic: a finite number or undefined; anything else is a jsonata error. */
function num(v: unknown): number | undefined {
  if (v === undefined || (typeof v === 'number' && Number.isFinite(v))) return v;
  return stop();
}

const DECIMAL = /^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$/;

/** Built-ins with one argument; each gives undefined for undefined as jsonata does. */
const BUILTINS: ReadonlyMap<string, (v: unknown) => unknown> = new Map<string, (v: unknown) => unknown>([
  ['string', (v) => (v === undefined ? undefined : str(v))],
  ['exists', (v) => v !== undefined],
  ['boolean', (v) => (v === undefined ? undefined : truthy(v))],
  ['not', (v) => (v === undefined ? undefined : !truthy(v))],
  ['encodeUrlComponent', (v) => (v === undefined ? undefined : typeof v === 'string' ? encodeURIComponent(v) : stop())],
  // The gateway's path encoder: a value it refuses goes to jsonata, which raises the refusal itself.
  ['segment', (v) => ((typeof v === 'string' && unsafeSegment(v) === null) || (typeof v === 'number' && Number.isFinite(v)) ? segment(v) : stop())],
  [
    'number',
    (v) => {
      if (v === undefined) return undefined;
      if (typeof v === 'boolean') return v ? 1 : 0;
      // hex/octal/binary strings take another, odd branch in jsonata: not modelled
      const n = typeof v === 'number' ? v : typeof v === 'string' && DECIMAL.test(v) ? parseFloat(v) : NaN;
      return Number.isFinite(n) ? n : stop();
    },
  ],
]);

/**
 * Refuses a node carrying any flag not listed: predicates, grouping, focus and the like hide in such
 * keys. The parser leaves some keys undefined (`name` on calls); jsonata tests these two by presence.
 */
function shape(n: Node, allowed: readonly string[]): void {
  for (const k of Object.keys(n)) {
    const present = n[k] !== undefined || k === 'predicate' || k === 'group';
    if (present && k !== 'type' && k !== 'position' && !allowed.includes(k)) unsupported(`${n.type}.${k}`);
  }
}

function resolve(sc: Scope | null, name: string): number | undefined {
  for (; sc; sc = sc.parent) {
    const slot = sc.names.get(name);
    if (slot !== undefined) return slot;
  }
  return undefined;
}

function variable(n: Node, sc: Scope): Fn {
  shape(n, ['value']);
  // `$` is the context and `$$` the input; nothing in the subset moves the context off the input
  if (n.value === '' || n.value === '$') return (root) => root;
  const slot = resolve(sc, String(n.value));
  // unbound names are jsonata's functions or undefined: not modelled
  if (slot === undefined) unsupported(`$${String(n.value)}`);
  return (_, vars) => vars[slot];
}

function path(n: Node, sc: Scope, st: State, depth: number): Fn {
  shape(n, ['steps', 'keepSingletonArray', 'keepArray']);
  const steps = n.steps as Node[];
  if (!Array.isArray(steps) || steps.length === 0) unsupported('path');
  const last = steps.length - 1;
  const keep = steps[last]!.keepArray === true;
  if ((n.keepSingletonArray === true) !== keep || (n.keepArray !== undefined && !(keep && n.keepArray === true))) unsupported('path flags');
  steps.forEach((s, i) => {
    if (s.type === 'variable' && i === 0 && last > 0) shape(s, ['value']);
    else if (s.type === 'name' && typeof s.value === 'string') shape(s, i === last && keep ? ['value', 'keepArray'] : ['value']);
    else unsupported('path step');
  });
  const first = steps[0]!;
  // the input sequence of the first name step: the variable's value, or the context (the input)
  const start: Fn = first.type === 'variable' ? variable(first, sc) : (root) => root;
  const names = (first.type === 'variable' ? steps.slice(1) : steps).map((s) => s.value as string);
  if (depth + steps.length > MAX_DEPTH) unsupported('depth');
  const lastName = names.length - 1;
  const budget = Math.min(PATH_BUDGET, st.maxSequence);
  return (root, vars) => {
    let v = start(root, vars);
    if (v === undefined) return undefined;
    // a variable may hold one of jsonata's sequences, whose flags (keepSingleton, cons) decide how it flattens
    if (Array.isArray(v)) stop();
    // one item at a time until an array turns up: the common case, without building sequences
    for (let i = 0; i <= lastName; i++) {
      v = lookup(v, names[i]!);
      if (v === undefined) return undefined;
      // an array on the last step is returned as is (the same array, never unwrapped)
      if (Array.isArray(v)) return i === lastName ? v : overArray(v, names, i + 1, keep, budget);
    }
    return keep ? [v] : v;
  };
}

/** Items one path may touch over arrays; more is left to jsonata. Kept within its sequence limit (D2015), and far below its timeout. */
const PATH_BUDGET = 4096;
/** Arrays nested deeper in the data than this are left to jsonata, whose lookup recurses per level. */
const MAX_NESTING = 32;

/** What is left of a path evaluation's PATH_BUDGET. */
interface Walk {
  left: number;
}

/** Appends one sequence item; an undefined item (a hole, never JSON) is jsonata-specific enough to leave to it. */
function put(w: Walk, out: unknown[], x: unknown): void {
  if (x === undefined || --w.left < 0) stop();
  if (Array.isArray(x)) plainArray(x);
  out.push(x);
}

/** The items of an array appended one level deep, as jsonata flattens a step's results. */
function spread(w: Walk, out: unknown[], a: readonly unknown[]): void {
  for (let i = 0; i < a.length; i++) put(w, out, a[i]);
}

/** jsonata's lookup over an array: each item's value (nested arrays searched alike), array values spread one level. */
function lookupItems(w: Walk, out: unknown[], a: unknown[], key: string, nesting: number): void {
  plainArray(a);
  if (nesting > MAX_NESTING) stop();
  for (let i = 0; i < a.length; i++) {
    const item = a[i];
    if (item === undefined || --w.left < 0) stop();
    if (Array.isArray(item)) {
      lookupItems(w, out, item, key, nesting + 1); // its sequence, spread into this one: the same items in order
      continue;
    }
    const v = lookup(item, key);
    if (v === undefined) continue;
    if (Array.isArray(v)) spread(w, out, v);
    else put(w, out, v);
  }
}

/**
 * The rest of a path once a step before the last gave the data array `a`: jsonata 2.2's evaluatePath
 * and evaluateStep, for name steps from `names[from]` on. Each step looks its name up in every item of
 * the sequence (an array item gives a sequence: empty is nothing, one item is unwrapped unless the step
 * keeps arrays), then flattens the results one level, except that the last step's only result, when
 * it is a data array rather than a sequence, is the answer as is. An empty sequence ends the path
 * (undefined); a final sequence of one is unwrapped unless the path ends in `[]`.
 */
function overArray(a: unknown[], names: readonly string[], from: number, keep: boolean, budget: number): unknown {
  const w: Walk = { left: budget };
  let seq: unknown[] = [];
  spread(w, seq, a);
  for (let i = from; i < names.length; i++) {
    if (seq.length === 0) return undefined;
    const key = names[i]!;
    const last = i === names.length - 1;
    const results: unknown[] = [];
    for (const x of seq) {
      let res: unknown;
      if (Array.isArray(x)) {
        const found: unknown[] = [];
        lookupItems(w, found, x, key, 0);
        if (found.length === 0) continue;
        res = found.length === 1 && !(last && keep) ? found[0] : found;
      } else {
        res = lookup(x, key);
        if (res === undefined) continue;
      }
      put(w, results, res);
    }
    // jsonata returns a data array here and flattens a sequence; a sequence built here (`found`) would
    // flatten into the same items, and then stay as it is (two or more, or one kept by `[]`)
    if (last && results.length === 1 && Array.isArray(results[0])) return results[0];
    const next: unknown[] = [];
    for (const r of results) {
      if (Array.isArray(r)) spread(w, next, r);
      else put(w, next, r);
    }
    seq = next;
  }
  if (seq.length === 0) return undefined;
  return seq.length === 1 && !keep ? seq[0] : seq;
}

function binary(n: Node, sc: Scope, st: State, depth: number): Fn {
  shape(n, ['value', 'lhs', 'rhs']);
  const l = compile(n.lhs as Node, sc, st, depth + 1);
  const r = compile(n.rhs as Node, sc, st, depth + 1);
  switch (n.value) {
    case 'and':
      return (root, vars) => truthyOrFalse(l(root, vars)) && truthyOrFalse(r(root, vars));
    case 'or':
      return (root, vars) => truthyOrFalse(l(root, vars)) || truthyOrFalse(r(root, vars));
    case '=':
    case '!=': {
      const eq = n.value === '=';
      return (root, vars) => {
        const a = l(root, vars);
        const b = r(root, vars);
        if (a === undefined || b === undefined) return false; // for != too
        if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') stop(); // deep equality: not modelled
        return (a === b) === eq;
      };
    }
    case '+':
    case '-':
    case '*':
    case '/':
    case '%': {
      const op = n.value;
      return (root, vars) => {
        const a = num(l(root, vars));
        const b = num(r(root, vars));
        if (a === undefined || b === undefined) return undefined;
        // the result may be Infinity or NaN: jsonata returns it too and only fails when it is used
        return op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : op === '/' ? a / b : a % b;
      };
    }
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const op = n.value;
      return (root, vars) => {
        const a = l(root, vars);
        const b = r(root, vars);
        const ta = typeof a;
        const tb = typeof b;
        if ((ta !== 'undefined' && ta !== 'string' && ta !== 'number') || (tb !== 'undefined' && tb !== 'string' && tb !== 'number')) stop();
        if (a === undefined || b === undefined) return undefined;
        if (ta !== tb) stop();
        const x = a as string | number;
        const y = b as string | number;
        return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
      };
    }
    case '&':
      return (root, vars) => {
        const a = l(root, vars);
        const b = r(root, vars);
        return (a === undefined ? '' : str(a)) + (b === undefined ? '' : str(b));
      };
    default:
      return unsupported(`operator ${String(n.value)}`);
  }
}

function truthyOrFalse(v: unknown): boolean {
  return v !== undefined && truthy(v);
}

function unary(n: Node, sc: Scope, st: State, depth: number): Fn {
  const max = st.maxSequence;
  if (n.value === '-') {
    shape(n, ['value', 'expression']);
    const e = compile(n.expression as Node, sc, st, depth + 1);
    return (root, vars) => {
      const v = num(e(root, vars));
      return v === undefined ? undefined : -v;
    };
  }
  if (n.value === '[') {
    shape(n, ['value', 'expressions']);
    const items = (n.expressions as Node[]).map((e) => ({ f: compile(e, sc, st, depth + 1), nested: e.type === 'unary' && e.value === '[' }));
    return (root, vars) => {
      const out: unknown[] = [];
      for (const { f, nested } of items) {
        const v = f(root, vars);
        if (v === undefined) continue;
        // a nested constructor is kept whole; any other array value is spliced in (jsonata's append)
        if (nested) out.push(v);
        else if (Array.isArray(v)) {
          if (out.length + v.length > max) stop();
          for (const x of v) out.push(x);
        } else {
          if (out.length + 1 > max) stop();
          out.push(v);
        }
      }
      return out;
    };
  }
  if (n.value === '{') {
    shape(n, ['value', 'lhs']);
    const pairs = n.lhs as [Node, Node][];
    const keys: string[] = [];
    for (const [k] of pairs) {
      shape(k, ['value']);
      const key = k.value;
      // computed, repeated (D1009) and reserved (D1013) keys are left to jsonata
      if (k.type !== 'string' || typeof key !== 'string' || keys.includes(key)) unsupported('object key');
      if (key === '_jsonata_function' || key === '_jsonata_lambda' || key === '__proto__') unsupported('object key');
      keys.push(key);
    }
    const values = pairs.map(([, v]) => compile(v, sc, st, depth + 1));
    return (root, vars) => {
      // jsonata builds objects without a prototype; keys keep source order (integer-like ones first, as any object)
      const out = Object.create(null) as Record<string, unknown>;
      for (let i = 0; i < keys.length; i++) {
        const v = values[i]!(root, vars);
        if (v !== undefined) out[keys[i]!] = v;
      }
      return out;
    };
  }
  return unsupported(`unary ${String(n.value)}`);
}

function block(n: Node, sc: Scope, st: State, depth: number): Fn {
  shape(n, ['expressions']);
  const inner: Scope = { names: new Map(), parent: sc };
  // compiled in order, so a reference sees exactly the bindings made before it, as at run time
  const fns = (n.expressions as Node[]).map((e) => (e.type === 'bind' ? bind(e, inner, st, depth + 1) : compile(e, inner, st, depth + 1)));
  if (fns.length === 0) return () => undefined;
  if (fns.length === 1) return fns[0]!;
  return (root, vars) => {
    let v: unknown;
    for (const f of fns) v = f(root, vars);
    return v;
  };
}

/** Only directly in a block: elsewhere (an object value, a condition) jsonata's binding order gets subtle. */
function bind(n: Node, sc: Scope, st: State, depth: number): Fn {
  shape(n, ['value', 'lhs', 'rhs']);
  const lhs = n.lhs as Node;
  if (lhs.type !== 'variable' || typeof lhs.value !== 'string' || lhs.value === '' || lhs.value === '$') unsupported('bind');
  shape(lhs, ['value']);
  const rhs = compile(n.rhs as Node, sc, st, depth + 1);
  // a fresh slot per binding: blocks run at most once per evaluation (no loops, no function definitions)
  const slot = st.slots++;
  sc.names.set(lhs.value, slot);
  return (root, vars) => (vars[slot] = rhs(root, vars));
}

function call(n: Node, sc: Scope, st: State, depth: number): Fn {
  shape(n, ['value', 'arguments', 'procedure']);
  const proc = n.procedure as Node;
  const args = n.arguments as Node[];
  if (n.value !== '(' || proc.type !== 'variable' || typeof proc.value !== 'string' || args.length !== 1) unsupported('call');
  shape(proc, ['value']);
  const builtin = BUILTINS.get(proc.value);
  // a block may rebind a built-in's name; `$f()` with no argument takes the context
  if (!builtin || resolve(sc, proc.value) !== undefined) unsupported(`$${proc.value}`);
  const a = compile(args[0]!, sc, st, depth + 1);
  return (root, vars) => {
    const v = a(root, vars);
    // jsonata wraps a function argument in a closure, and crashes on an object that only looks like one
    if (v !== null && typeof v === 'object' && isJsonataFunction(v)) stop();
    return builtin(v);
  };
}

function compile(n: Node, sc: Scope, st: State, depth: number): Fn {
  if (depth > MAX_DEPTH || n === null || typeof n !== 'object') unsupported('node');
  switch (n.type) {
    case 'string':
    case 'number':
    case 'value': {
      shape(n, ['value']);
      const v = n.value;
      if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') unsupported('literal');
      return () => v;
    }
    case 'variable':
      return variable(n, sc);
    case 'path':
      return path(n, sc, st, depth);
    case 'binary':
      return binary(n, sc, st, depth);
    case 'unary':
      return unary(n, sc, st, depth);
    case 'condition': {
      shape(n, ['condition', 'then', 'else']);
      const c = compile(n.condition as Node, sc, st, depth + 1);
      const t = compile(n.then as Node, sc, st, depth + 1);
      const e = n.else === undefined ? undefined : compile(n.else as Node, sc, st, depth + 1);
      return (root, vars) => (truthyOrFalse(c(root, vars)) ? t(root, vars) : e?.(root, vars));
    }
    case 'block':
      return block(n, sc, st, depth);
    case 'function':
      return call(n, sc, st, depth);
    default:
      return unsupported(n.type);
  }
}

/** Compiles a jsonata AST (`expr.ast()`) into a FastMapping, or null when it uses anything outside the subset. */
export function compileFast(ast: unknown, limits: { readonly sequence: number }): FastMapping | null {
  const st: State = { slots: 0, maxSequence: limits.sequence };
  let fn: Fn;
  try {
    fn = compile(ast as Node, { names: new Map(), parent: null }, st, 0);
  } catch {
    return null; // Unsupported, or an AST shape we did not expect
  }
  const slots = st.slots;
  return (input) => {
    // jsonata wraps an array input in a sequence, and paths over scalars differ: objects only. It also
    // reads these two keys on the context as its own flags (`$` and object constructors change).
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return BAIL;
    const flags = input as { outerWrapper?: unknown; tupleStream?: unknown };
    if (flags.outerWrapper || flags.tupleStream) return BAIL;
    try {
      return fn(input, slots === 0 ? [] : new Array<unknown>(slots));
    } catch {
      return BAIL; // STOP, or anything unexpected (a RangeError, a URIError): jsonata decides
    }
  };
}
