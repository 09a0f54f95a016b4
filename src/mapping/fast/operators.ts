/**
 * jsonata 2.2.2's operators (evaluateBinary, evaluateUnary, evaluateGroupExpression), synchronously,
 * over compiled operands. An operand jsonata rejects with an error bails, so jsonata reports it.
 */
import { FastBudgetExceeded, work } from './budget.js';
import { builtin } from './builtins.js';
import { type Fn, frameFromTuple } from './frame.js';
import { append, bail, deepEqual, sequenceOf, isNumeric, truthy, type Seq } from './values.js';

const string = builtin('string');

/** A binary operator over compiled operands; null when jsonata has no such operator. */
export function binaryOp(op: string, l: Fn, r: Fn): Fn | null {
  switch (op) {
    case 'and':
      return (input, env) => truthy(l(input, env)) && truthy(r(input, env));
    case 'or':
      return (input, env) => truthy(l(input, env)) || truthy(r(input, env));
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
      return (input, env) => numeric(l(input, env), r(input, env), op);
    case '=':
      return (input, env) => equal(l(input, env), r(input, env), true);
    case '!=':
      return (input, env) => equal(l(input, env), r(input, env), false);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return (input, env) => compare(l(input, env), r(input, env), op);
    case '&':
      return (input, env) => concat(l(input, env), r(input, env));
    case 'in':
      return (input, env) => includes(l(input, env), r(input, env));
    case '..':
      return (input, env) => range(l(input, env), r(input, env));
    default:
      return null;
  }
}

function numeric(a: unknown, b: unknown, op: string): unknown {
  if ((a !== undefined && !isNumeric(a)) || (b !== undefined && !isNumeric(b))) bail(); // T2001, T2002
  if (a === undefined || b === undefined) return undefined;
  const x = a as number;
  const y = b as number;
  return op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '/' ? x / y : x % y;
}

function equal(a: unknown, b: unknown, eq: boolean): boolean {
  if (a === undefined || b === undefined) return false;
  return deepEqual(a, b) === eq;
}

function compare(a: unknown, b: unknown, op: string): unknown {
  const ta = typeof a;
  const tb = typeof b;
  const ok = (t: string) => t === 'undefined' || t === 'string' || t === 'number';
  if (!ok(ta) || !ok(tb)) bail(); // T2010
  if (a === undefined || b === undefined) return undefined;
  if (ta !== tb) bail(); // T2009
  const x = a as string | number;
  const y = b as string | number;
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
}

function concat(a: unknown, b: unknown): string {
  return (a === undefined ? '' : (string(a) as string)) + (b === undefined ? '' : (string(b) as string));
}

function includes(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return false;
  if (!Array.isArray(b)) return b === a;
  // strict equality, as jsonata: NaN is never in (and a hole is undefined, never `a`)
  for (let i = 0; i < b.length; i++) if (b[i] === a) return true;
  return false;
}

function range(a: unknown, b: unknown): unknown {
  if ((a !== undefined && !Number.isInteger(a)) || (b !== undefined && !Number.isInteger(b))) bail(); // T2003, T2004
  if (a === undefined || b === undefined) return undefined;
  const lo = a as number;
  const hi = b as number;
  if (lo > hi) return undefined;
  const size = hi - lo + 1;
  if (size > 1e7) bail(); // D2014
  if (size > work.maxSequence) throw new FastBudgetExceeded('sequence', work.maxSequence);
  const out: Seq = new Array<unknown>(size);
  for (let i = 0, item = lo; i < size; i++, item++) out[i] = item; // from lo itself: -0 stays -0, as in jsonata
  out.sequence = true;
  return out;
}

/** Unary minus. */
export function negate(e: Fn): Fn {
  return (input, env) => {
    const v = e(input, env);
    if (v === undefined) return undefined;
    if (!isNumeric(v)) bail(); // D1002
    return -v;
  };
}

/** An array constructor: nested constructors kept whole, other values appended (sequences spread). */
export function arrayConstructor(items: readonly { f: Fn; nested: boolean }[], cons: boolean): Fn {
  return (input, env) => {
    let result: unknown[] = [];
    for (const { f, nested } of items) {
      const v = f(input, env);
      if (v === undefined) continue;
      if (nested) result.push(v);
      else if (Array.isArray(v)) result = append(result, v) as unknown[];
      else {
        // what append gives for one value that is not an array, without its two new arrays
        if (result.length + 1 > work.maxSequence) throw new FastBudgetExceeded('sequence', work.maxSequence);
        result.push(v);
      }
    }
    if (cons) Object.defineProperty(result, 'cons', { enumerable: false, configurable: false, value: true });
    return result;
  };
}

/**
 * jsonata's evaluateGroupExpression: an object constructor over its input (grouping when it is a
 * sequence). With `literalKeys` (distinct plain strings) and one context, grouping has one group per
 * key: the values are evaluated on the context directly.
 */
export function groupBy(pairs: readonly [Fn, Fn][], literalKeys: readonly string[] | null): (input: unknown, env: Parameters<Fn>[1]) => unknown {
  // Each literal key with the value it names, zipped once when the mapping compiles.
  const literal = literalKeys && literalKeys.length === pairs.length ? pairs.map(([, pairValue], p): [string, Fn] => [literalKeys[p] ?? '', pairValue]) : null;
  // jsonata's objects have no prototype. Object.create(null) makes one in V8's dictionary mode, some
  // 400 bytes for a few keys; one built as `{}` and then given no prototype keeps its compact
  // layout, about 60 (issue 41). Only where no key is `__proto__`, which `{}` would take as its prototype.
  const compact = literal?.every(([key]) => key !== '__proto__');
  return (input0, env) => {
    if (literal && !Array.isArray(input0) && !(input0 && (input0 as Seq).tupleStream)) {
      const out = (compact ? {} : Object.create(null)) as Record<string, unknown>;
      for (const [key, pairValue] of literal) {
        const value = pairValue(input0, env);
        if (value !== undefined) out[key] = value;
      }
      return compact ? Object.setPrototypeOf(out, null) : out;
    }
    const result = Object.create(null) as Record<string, unknown>;
    const groups = Object.create(null) as Record<string, { data: unknown; exprIndex: number; valueOf: Fn }>;
    const reduce = !!(input0 && (input0 as Seq).tupleStream);
    const input: unknown[] = Array.isArray(input0) ? input0 : sequenceOf(input0);
    if (input.length === 0 && !reduce) input.push(undefined);
    for (const item of input) {
      const ctx = reduce ? (item as Record<string, unknown>)['@'] : item;
      const e = reduce ? frameFromTuple(env, item as Record<string, unknown>) : env;
      let p = -1;
      for (const [keyOf, pairValue] of pairs) {
        p++;
        const key = keyOf(ctx, e);
        if (key === undefined) continue;
        if (typeof key !== 'string') bail(); // T1003
        if (key === '_jsonata_lambda' || key === '_jsonata_function') bail(); // D1013
        const group = groups[key];
        if (group) {
          if (group.exprIndex !== p) bail(); // D1009
          group.data = append(group.data, item);
        } else groups[key] = { data: item, exprIndex: p, valueOf: pairValue };
      }
    }
    for (const [key, entry] of Object.entries(groups)) {
      let context = entry.data;
      let e = env;
      if (reduce) {
        const tuple = reduceTuples(entry.data);
        context = tuple['@'];
        delete tuple['@'];
        e = frameFromTuple(env, tuple);
      }
      const value = entry.valueOf(context, e);
      if (value !== undefined) result[key] = value;
    }
    return result;
  };
}

function reduceTuples(stream: unknown): Record<string, unknown> {
  if (!Array.isArray(stream)) return stream as Record<string, unknown>;
  const result = Object.create(null) as Record<string, unknown>;
  Object.assign(result, stream[0]);
  for (let i = 1; i < stream.length; i++) {
    const t = stream[i] as Record<string, unknown>;
    for (const k of Object.keys(t)) result[k] = append(result[k], t[k]);
  }
  return result;
}
