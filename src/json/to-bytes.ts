import { randomUUID } from 'node:crypto';

/**
 * A string at least this long (an inline base64 image, say) is written into the bytes directly.
 * Low, because JSON.stringify's text of a string of a few KB costs the heap about three copies of
 * it (the builder's parts, the text they are flattened into, and the socket's join of the headers
 * with a text body), and the splice costs under one KB (issue 41).
 */
export const LONG_STRING = 4 * 1024;

/** How many values the look for a long string visits before it gives up and takes JSON.stringify. */
const LOOK_BUDGET = 1000;

/**
 * What a long string is written as first, before it is spliced in: a NUL (which JSON.stringify
 * writes as \u0000) and randomness drawn once per process, which nobody outside it sees. Once per
 * process rather than per value: a UUID per answer was half a KB of heap (issue 41), and a string
 * equal to the marker would be caught by the count of parts anyway.
 */
const MARKER = `\u0000${randomUUID()}`;
/** MARKER as JSON.stringify writes it, quotes included. */
const MARKER_TEXT = JSON.stringify(MARKER);

/** A character JSON.stringify writes other than as itself: the string's JSON is not `"` + it + `"`. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A value as JSON, byte for byte what `JSON.stringify` gives (encoded UTF-8). A value holding long
 * strings comes back as one Buffer into which each long string was written straight from the
 * value, so a 20 MB base64 field costs the bytes sent and nothing more: JSON.stringify would make
 * a 20 MB text first, and the HTTP client or socket another copy of it as bytes (issue #14). Any
 * other value comes back as JSON.stringify's text, which is fastest for small values.
 */
export function encodeJson(value: unknown, longString = LONG_STRING): string | Buffer {
  if (!holdsLongString(value, longString)) return JSON.stringify(value);
  // Each long string is stood in for by MARKER, so JSON.stringify itself still decides everything
  // else: toJSON, members left out, numbers, key order and escapes; only the long strings are spliced in.
  const longs: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'string' && v.length >= longString && !ESCAPED.test(v)) {
      longs.push(v);
      return MARKER;
    }
    return v;
  });
  const parts = typeof text === 'string' ? text.split(MARKER_TEXT) : [];
  // A string of the value that was the marker itself (nobody outside the process knows it) would
  // be one part too many: the plain text is still right.
  if (parts.length !== longs.length + 1) return JSON.stringify(value);
  // Only escaped long strings: nothing to splice, the text is the body.
  if (longs.length === 0) return text;
  let size = 0;
  for (const p of parts) size += Buffer.byteLength(p, 'utf8');
  // A string with no character escaped has no lone surrogate either: its UTF-8 is well defined.
  for (const s of longs) size += Buffer.byteLength(s, 'utf8') + 2;
  const out = Buffer.allocUnsafe(size);
  // The parts around the long strings: one more than them.
  let at = out.write(parts[0] ?? '', 0, 'utf8');
  let next = 1;
  for (const long of longs) {
    out[at++] = 0x22;
    at += out.write(long, at, 'utf8');
    out[at++] = 0x22;
    at += out.write(parts[next++] ?? '', at, 'utf8');
  }
  return out;
}

/**
 * Whether `value` holds a string of at least `min` characters among its first LOOK_BUDGET
 * values: a cheap look, so small bodies (and wide ones of small values) go to JSON.stringify at
 * once. Recursive, with no stack or values array made (issue 41); the budget bounds the depth.
 */
function holdsLongString(value: unknown, min: number): boolean {
  lookLeft = LOOK_BUDGET;
  return look(value, min);
}

/** Values the current look may still visit (looks are synchronous: one at a time). */
let lookLeft = 0;

function look(v: unknown, min: number): boolean {
  if (--lookLeft < 0) return false;
  if (typeof v === 'string') return v.length >= min;
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) {
    // an array wider than the budget left is not looked into
    if (v.length > lookLeft) return false;
    for (const item of v) if (look(item, min)) return true;
    return false;
  }
  // own enumerable values, as Object.values gives them
  for (const k in v) {
    if (lookLeft < 0) return false;
    if (Object.hasOwn(v, k) && look((v as Record<string, unknown>)[k], min)) return true;
  }
  return false;
}
