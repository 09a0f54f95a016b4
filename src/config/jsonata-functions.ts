import type jsonata from 'jsonata';

/** JSONata's integer conversion of slice arguments (ToIntegerOrInfinity): NaN is 0, fractions are truncated. */
function toInteger(n: number): number {
  return Number.isNaN(n) ? 0 : Math.trunc(n);
}

/** Code points in `s` (a surrogate pair is one), counted without building an array. */
function codePointCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The UTF-16 offset of code point `k` of `s`, walking from `from` (an offset at code point `at`); `s.length` past the end. */
function offsetOf(s: string, k: number, from = 0, at = 0): number {
  let i = from;
  for (let n = at; n < k && i < s.length; n++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff ? 2 : 1;
  }
  return i;
}

/**
 * JSONata's `$substring(str, start[, length])`, with the same results (code points, negative starts
 * from the end, fractions truncated), in time proportional to `start + length` instead of the whole
 * string: jsonata 2.2.2 first turns the string into an array of code points, so the mappings'
 * common `$substring($s, 0, 5) = "data:"` on a 20 MB image took seconds and ran out of the mapping
 * time limit (a 500 for a legal request). Only a negative start or end counts the whole string.
 */
export function substring(str: string | undefined, start: number, length?: number): string | undefined {
  if (str === undefined) return undefined;
  let len: number | null = null;
  const count = () => (len ??= codePointCount(str));
  // As jsonata: a start before the beginning is the beginning; the end follows from the start.
  let from = start;
  if (from < 0 && count() + from < 0) from = 0;
  let to: number | undefined;
  if (length !== undefined) {
    if (length <= 0) return '';
    to = from >= 0 ? from + length : count() + from + length;
  }
  // Array.prototype.slice on the code points, with its relative (negative) indexes.
  const index = (x: number) => {
    const k = toInteger(x);
    return k < 0 ? Math.max(count() + k, 0) : k;
  };
  const a = index(from);
  const b = to === undefined ? Infinity : index(to);
  if (b <= a) return '';
  const begin = offsetOf(str, a);
  return b === Infinity ? str.slice(begin) : str.slice(begin, offsetOf(str, b, begin, a));
}

/** Replaces built-ins whose jsonata implementation is too slow for the gateway's inputs (one expression, at compile time). */
export function registerFastFunctions(expr: jsonata.Expression): void {
  // The same signature as jsonata's own: a missing string takes the context value.
  expr.registerFunction('substring', substring, '<s-nn?:s>');
}
