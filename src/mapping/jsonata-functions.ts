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

/** The error code of a value that cannot stand in a vendor path (docs/channels-yaml.md, "Mapping functions"): the client's fault when the value is the client's. */
export const UNSAFE_PATH_VALUE = 'G0001';

/** Most characters one path segment may have. */
const MAX_SEGMENT = 1024;

/** `s` percent-decoded until it no longer changes (a proxy may decode twice); null when an escape is malformed. */
function decodedFully(s: string): string | null {
  let v = s;
  for (let i = 0; i < 4 && v.includes('%'); i++) {
    try {
      const next = decodeURIComponent(v);
      if (next === v) break;
      v = next;
    } catch {
      return null;
    }
  }
  return v;
}

/**
 * Why `value` (a segment as it will be written, or the text that will be encoded into one) cannot
 * be one segment of a vendor path: empty, `.` or `..` (also once decoded: `%2e%2e`), a slash or
 * backslash (also encoded), a control character (CR, LF, NUL…), a malformed escape, or too long. Null
 * when it is fine. A vendor, or a proxy before it, that normalises paths would otherwise turn our
 * signed `/assets/..` into `/` (`/api/v3/`), with our credentials.
 */
export function unsafeSegment(value: string): string | null {
  if (value === '') return 'is empty';
  if (value.length > MAX_SEGMENT) return `is longer than ${MAX_SEGMENT} characters`;
  const decoded = decodedFully(value);
  if (decoded === null) return 'holds a malformed percent-escape';
  if (decoded === '.' || decoded === '..') return 'is a dot-segment (. or ..)';
  if (/[/\\]/.test(decoded)) return 'holds a slash';
  if (/[\u0000-\u001f\u007f]/.test(decoded)) return 'holds a control character';
  return null;
}

/**
 * What is wrong with a vendor path (relative, `/…`, its query left out): the first segment after
 * the leading slash that `unsafeSegment` refuses; null when every one is fine (or the path is `/`).
 */
export function pathProblem(path: string): string | null {
  const q = path.indexOf('?');
  const bare = q === -1 ? path : path.slice(0, q);
  // The root itself ("/") is a path; an empty segment anywhere else is a missing value.
  if (bare === '/') return null;
  for (const seg of bare.split('/').slice(1)) {
    const why = unsafeSegment(seg);
    if (why !== null) return `a segment ${why}`;
  }
  return null;
}

/**
 * `$segment(value)`: the one encoder of values placed into a vendor path. A string or number is
 * percent-encoded as one segment; anything `unsafeSegment` refuses, or a value that is not a
 * string or number, fails the mapping with UNSAFE_PATH_VALUE (a 400 when the value is the client's).
 */
export function segment(value: unknown): string {
  const text = typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
  const why = text === null ? 'is missing or not a string' : unsafeSegment(text);
  if (text === null || why !== null) throw Object.assign(new Error(`a value for the vendor's path ${why}`), { code: UNSAFE_PATH_VALUE });
  return encodeURIComponent(text);
}

/**
 * The functions the gateway gives every mapping, by name (without `$`), with jsonata signatures:
 * its own, and built-ins replaced by faster ones. The load knows them as defined (known-functions.ts).
 */
export const GATEWAY_FUNCTIONS = {
  // The same signature as jsonata's own: a missing string takes the context value.
  substring: [substring, '<s-nn?:s>'],
  segment: [segment, '<x-:s>'],
} as const satisfies Record<string, readonly [(...args: never[]) => unknown, string]>;

/** Registers the gateway's own functions and replaces built-ins too slow for its inputs (one expression, at compile time). */
export function registerFastFunctions(expr: jsonata.Expression): void {
  for (const [name, [fn, signature]] of Object.entries(GATEWAY_FUNCTIONS)) expr.registerFunction(name, fn as (...args: unknown[]) => unknown, signature);
}
