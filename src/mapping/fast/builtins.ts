/**
 * The built-in functions on the fast path. The pure, synchronous ones are jsonata 2.2.2's own
 * implementations (with the gateway's $substring and $segment), taken once from a jsonata
 * expression, so their results and their argument validation (signatures) are jsonata's by
 * construction. jsonata's higher-order and pattern functions are async there; they are rewritten
 * here synchronously, line for line, under jsonata's own signatures.
 */
import jsonata from 'jsonata';
import { registerFastFunctions } from '../jsonata-functions.js';
import { FastBudgetExceeded, work } from './budget.js';
import { contains, match, replace, split } from './patterns.js';
import { compileSignature, type Validate } from './signature.js';
import { bail, boolean, createSequence, emptySequence, isArrayOfNumbers, isArrayOfStrings, isFunction, push, type Seq } from './values.js';

/** A function value as jsonata represents a native one. */
export interface Native {
  readonly _jsonata_function: true;
  readonly implementation: (...args: unknown[]) => unknown;
  readonly signature?: { readonly definition?: string; validate(args: unknown[], context: unknown): unknown[] };
  /** The signature's validate as the fast path runs it (signature.ts): jsonata's result, its plan kept per argument types. */
  readonly validate?: Validate;
}

/** A lambda of the fast path, flagged as jsonata flags its own. */
export interface Lambda {
  readonly _jsonata_lambda: true;
  /** Its parameters, for the arity higher-order functions look at. */
  readonly arguments: readonly unknown[];
  /** Its body evaluated once in a new frame: a value, or the TailCall its tail position made. */
  once(args: unknown[], context: unknown): unknown;
}

/**
 * A call in a lambda's tail position, its procedure and arguments evaluated, made by the lambda's
 * caller: jsonata's thunks and apply() trampoline (tail-call optimisation), so a tail recursion
 * runs in a loop, at constant depth, there and here.
 */
export class TailCall {
  constructor(
    readonly proc: unknown,
    readonly args: unknown[],
  ) {}
}

/**
 * True for a function value the fast path made (a lambda, a regex, a built-in); false for data that
 * merely carries jsonata's function flags, which jsonata itself mistakes for a function.
 */
export function isOwnFunction(v: unknown): boolean {
  if (typeof v === 'function') return (v as { regex?: boolean }).regex === true;
  const o = v as Partial<Lambda & Native> | null;
  return !!o && typeof o === 'object' && (typeof o.once === 'function' || typeof o.implementation === 'function');
}

/** Calls a function value with arguments (jsonata's apply); anything else bails to jsonata's error. */
export function applyFunction(proc: unknown, args: unknown[], input: unknown): unknown {
  let result = applyOnce(proc, args, input);
  while (result instanceof TailCall) result = applyOnce(result.proc, result.args, input);
  return result;
}

function applyOnce(proc: unknown, args: unknown[], input: unknown): unknown {
  const p = proc as Partial<Native & Lambda> | undefined;
  if (p && p._jsonata_lambda === true && p.once) return p.once(args, input);
  if (p && p._jsonata_function === true && p.implementation) {
    const validated = p.validate ? p.validate(args, input) : p.signature ? p.signature.validate(args, input) : args;
    // jsonata's own natives would see a function argument wrapped in a closure: not modelled
    if (!REWRITTEN_IMPLEMENTATIONS.has(p.implementation) && validated.some((a) => isFunction(a))) bail();
    try {
      return p.implementation.apply(focus(input), validated);
    } catch (err) {
      // jsonata's own sequence limit ($append): a runaway, as in any other sequence built here
      if ((err as { code?: unknown } | null)?.code === 'D2015') throw new FastBudgetExceeded('sequence', work.maxSequence);
      throw err;
    } finally {
      FOCUS.input = undefined; // holds no request's data between calls
    }
  }
  return bail();
}

/**
 * What jsonata passes as `this` to a native: the sequence factory, the context and the sequence
 * limit. One object, set before each call: a native reads it while it runs and keeps nothing of
 * it (only $eval reads `input`, and it is left to jsonata), and a call runs to its end before the
 * next one starts.
 */
const FOCUS = { input: undefined as unknown, createSequence, options: { sequence: 0 } };
function focus(input: unknown): object {
  FOCUS.input = input;
  FOCUS.options.sequence = work.maxSequence;
  return FOCUS;
}

/** jsonata's getFunctionArity, for a function passed to a higher-order function. */
function arity(f: unknown): number {
  const o = f as { arguments?: unknown[]; implementation?: { length: number } };
  return o.implementation ? o.implementation.length : (o.arguments?.length ?? 0);
}

function hofArgs(f: unknown, a: unknown, i: number, arr: unknown): unknown[] {
  const n = arity(f);
  return n >= 3 ? [a, i, arr] : n >= 2 ? [a, i] : [a];
}

function map(arr: unknown, func: unknown): unknown {
  if (arr === undefined) return undefined;
  const a = arr as unknown[];
  const result = emptySequence();
  for (let i = 0; i < a.length; i++) {
    const res = applyFunction(func, hofArgs(func, a[i], i, a), null);
    if (res !== undefined) push(result, res);
  }
  return result;
}

function filter(arr: unknown, func: unknown): unknown {
  if (arr === undefined) return undefined;
  const a = arr as unknown[];
  const result = emptySequence();
  for (let i = 0; i < a.length; i++) {
    if (boolean(applyFunction(func, hofArgs(func, a[i], i, a), null))) push(result, a[i]);
  }
  return result;
}

function foldLeft(sequence: unknown, func: unknown, init: unknown): unknown {
  if (sequence === undefined) return undefined;
  const s = sequence as unknown[];
  const n = arity(func);
  if (n < 2) bail(); // D3050
  let result: unknown;
  let index: number;
  if (init === undefined && s.length > 0) {
    result = s[0];
    index = 1;
  } else {
    result = init;
    index = 0;
  }
  for (; index < s.length; index++) {
    const args = [result, s[index]];
    if (n >= 3) args.push(index);
    if (n >= 4) args.push(s);
    result = applyFunction(func, args, null);
  }
  return result;
}

/** jsonata's merge sort: `comp(a, b)` true puts b first; ties keep their order. */
export function mergeSort(arr: unknown[], comp: (a: unknown, b: unknown) => boolean): unknown[] {
  if (arr.length <= 1) return arr;
  const middle = Math.floor(arr.length / 2);
  const left = mergeSort(arr.slice(0, middle), comp);
  const right = mergeSort(arr.slice(middle), comp);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) out.push(comp(left[i], right[j]) ? right[j++] : left[i++]);
  while (i < left.length) out.push(left[i++]);
  while (j < right.length) out.push(right[j++]);
  return out;
}

function sort(arr: unknown, comparator: unknown): unknown {
  if (arr === undefined) return undefined;
  const a = arr as Seq;
  if (a.length <= 1) return a;
  if (comparator === undefined) {
    if (!isArrayOfNumbers(a) && !isArrayOfStrings(a)) bail(); // D3070
    return mergeSort(a, (x, y) => (x as number) > (y as number));
  }
  return mergeSort(a, (x, y) => applyFunction(comparator, [x, y], null) as boolean);
}

/** Our synchronous versions of jsonata's async built-ins (same parameter counts: arity counts them). */
const REWRITTEN: Record<string, (...args: never[]) => unknown> = { contains, match, replace, split, map, filter, reduce: foldLeft, sort };
const REWRITTEN_IMPLEMENTATIONS = new Set<unknown>(Object.values(REWRITTEN));

/** jsonata's own synchronous built-ins the fast path calls as they are (their errors, $error's too, bail: jsonata reports them; $now, $millis, $random, $eval are left to jsonata). */
const PURE = [
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
  'boolean',
  'not',
  'zip',
  'keys',
  'lookup',
  'append',
  'exists',
  'spread',
  'merge',
  'reverse',
  'type',
  'distinct',
  'base64encode',
  'base64decode',
  'encodeUrlComponent',
  'encodeUrl',
  'decodeUrlComponent',
  'decodeUrl',
  'toMillis',
  'fromMillis',
  'segment',
  'error',
  'assert',
];

/** Built-in functions by name (without `$`). */
export const BUILTINS: ReadonlyMap<string, Native> = await (async () => {
  const probe = jsonata(`{ ${[...PURE, ...Object.keys(REWRITTEN)].map((n) => `"${n}": $${n}`).join(', ')} }`);
  registerFastFunctions(probe);
  const found = (await probe.evaluate({})) as Record<string, Native>;
  const out = new Map<string, Native>();
  const native = (implementation: Native['implementation'], signature: Native['signature']): Native =>
    Object.freeze({
      _jsonata_function: true,
      implementation,
      signature,
      validate: signature?.definition === undefined ? undefined : compileSignature(signature.definition),
    });
  for (const name of PURE) {
    const fn = found[name];
    if (fn) out.set(name, native(fn.implementation, fn.signature));
  }
  for (const [name, impl] of Object.entries(REWRITTEN)) out.set(name, native(impl as Native['implementation'], found[name]?.signature));
  return out;
})();

/** A built-in's implementation; the load fails when jsonata has none of that name (its version is pinned). */
export function builtin(name: string): Native['implementation'] {
  const fn = BUILTINS.get(name);
  if (!fn) throw new Error(`jsonata has no built-in $${name}`);
  return fn.implementation;
}
