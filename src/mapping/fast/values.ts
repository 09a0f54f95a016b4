/**
 * jsonata's value model, synchronously: sequences (arrays flagged `sequence`, `keepSingleton`,
 * `cons`, `tupleStream`, `outerWrapper`), lookup, append, equality and truthiness, as jsonata 2.2.2's
 * jsonata.js defines them (createSequence, fn.lookup, fn.append, isDeepEqual, fn.boolean).
 */
import { FastBudgetExceeded, work } from './budget.js';

/** An array as jsonata flags it. */
export type Seq = unknown[] & { sequence?: boolean; keepSingleton?: boolean; cons?: boolean; tupleStream?: boolean; outerWrapper?: boolean };

/** Abandons a fast evaluation: jsonata evaluates instead (and reports its own error, if any). */
export class Bail extends Error {}
const BAIL_ERROR = new Bail('bail');

/** Thrown to leave an input to jsonata; one shared object, so throwing costs no stack trace. */
export function bail(): never {
  throw BAIL_ERROR;
}

/** jsonata's createSequence: a flagged array whose push keeps within the sequence limit. */
export function createSequence(...items: unknown[]): Seq {
  const s: Seq = [];
  s.sequence = true;
  for (const x of items) push(s, x);
  return s;
}

/** `createSequence()`, without the array of its rest parameter (issue 41). */
export function emptySequence(): Seq {
  const s: Seq = [];
  s.sequence = true;
  return s;
}

/** `createSequence(x)`, without the array of its rest parameter. */
export function sequenceOf(x: unknown): Seq {
  if (1 > work.maxSequence) throw new FastBudgetExceeded('sequence', work.maxSequence);
  const s: Seq = [x];
  s.sequence = true;
  return s;
}

/** jsonata's sequence push (D2015 there): over the limit, the evaluation ran over its budget. */
export function push(s: Seq, x: unknown): void {
  if (s.length + 1 > work.maxSequence) throw new FastBudgetExceeded('sequence', work.maxSequence);
  s.push(x);
}

/** True for an array jsonata flagged as its own sequence. */
export function isSequence(v: unknown): v is Seq {
  return Array.isArray(v) && (v as Seq).sequence === true;
}

/** jsonata's isNumeric: Infinity is an error there (D1001), so it bails here. */
export function isNumeric(n: unknown): n is number {
  if (typeof n !== 'number' || Number.isNaN(n)) return false;
  if (!Number.isFinite(n)) bail();
  return true;
}

/** jsonata's isArrayOfNumbers (an Infinity bails, as its D1001). */
export function isArrayOfNumbers(v: unknown): boolean {
  return Array.isArray(v) && v.every((x) => isNumeric(x));
}

/** jsonata's isArrayOfStrings. */
export function isArrayOfStrings(v: unknown): boolean {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

/** A function value: jsonata's natives and lambdas (and ours, which carry the same flags). */
export function isFunction(v: unknown): boolean {
  const o = v as { _jsonata_function?: unknown; _jsonata_lambda?: unknown } | null | undefined;
  return (!!o && (o._jsonata_function === true || o._jsonata_lambda === true)) || typeof v === 'function';
}

/** jsonata's fn.lookup: a key of an object, mapped over arrays (nested arrays flattened one level each). */
export function lookup(input: unknown, key: string): unknown {
  if (Array.isArray(input)) {
    const result = emptySequence();
    for (const item of input) {
      const res = lookup(item, key);
      if (res === undefined) continue;
      if (Array.isArray(res)) for (const v of res) push(result, v);
      else push(result, res);
    }
    return result;
  }
  if (input !== null && typeof input === 'object' && Object.hasOwn(input, key) && !isFunction(input)) {
    return (input as Record<string, unknown>)[key];
  }
  return undefined;
}

/** jsonata's fn.append. */
export function append(a: unknown, b: unknown): unknown {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const l: unknown[] = Array.isArray(a) ? a : sequenceOf(a);
  const r: unknown[] = Array.isArray(b) ? b : [b];
  if (l.length + r.length > work.maxSequence) throw new FastBudgetExceeded('sequence', work.maxSequence);
  // concat keeps the flags of neither (jsonata's result is a plain array too)
  return l.concat(r);
}

/** jsonata's isDeepEqual. */
export function deepEqual(l: unknown, r: unknown): boolean {
  if (l === r) return true;
  if (typeof l === 'object' && typeof r === 'object' && l !== null && r !== null) {
    if (Array.isArray(l) && Array.isArray(r)) {
      if (l.length !== r.length) return false;
      for (let i = 0; i < l.length; i++) if (!deepEqual(l[i], r[i])) return false;
      return true;
    }
    // an array against an object: compared by own property names, `length` included, as jsonata does
    const lk = Object.getOwnPropertyNames(l);
    const rk = Object.getOwnPropertyNames(r);
    if (lk.length !== rk.length) return false;
    lk.sort();
    rk.sort();
    for (let i = 0; i < lk.length; i++) if (lk[i] !== rk[i]) return false;
    for (const k of lk) if (!deepEqual((l as Record<string, unknown>)[k], (r as Record<string, unknown>)[k])) return false;
    return true;
  }
  return false;
}

/** jsonata's fn.boolean (undefined for undefined). */
export function boolean(v: unknown): boolean | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    if (v.length === 1) return boolean(v[0]);
    // every item, as jsonata's filter: an Infinity after a true one is still its error (D1001)
    if (v.length > 1) return v.filter((x) => boolean(x)).length > 0;
    return false;
  }
  if (typeof v === 'string') return v.length > 0;
  if (isNumeric(v)) return v !== 0;
  if (v !== null && typeof v === 'object' && !isFunction(v)) return Object.keys(v).length > 0;
  return v === true;
}

/** jsonata's boolize: undefined is false. */
export function truthy(v: unknown): boolean {
  return boolean(v) === true;
}
