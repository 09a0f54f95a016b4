import { isAscii } from 'node:buffer';
import { randomUUID } from 'node:crypto';

/**
 * A string literal at least this many bytes long (an inline base64 image) is decoded on its own.
 * Low, because a whole-body text is a heap copy of every byte, where the stand-in's parse of the
 * rest costs under one KB (issue 41: a 10 KB answer paid its text).
 */
export const LONG_LITERAL = 4 * 1024;

/** How many string literals the look for long ones reads before it leaves the body to JSON.parse. */
const LITERAL_BUDGET = 10_000;

/**
 * What a long literal is replaced by while the rest is parsed: a NUL (JSON text holds one only
 * escaped) and randomness drawn once per process, which nobody outside it sees, then the literal's
 * number. Once per process rather than per body: a UUID per body was half a KB of heap (issue 41),
 * and a string that looked like a stand-in would be caught by the count anyway (below).
 */
const STAND_IN = `\u0000${randomUUID()}:`;
/** STAND_IN as it is written inside a JSON string. */
const STAND_IN_TEXT = JSON.stringify(STAND_IN).slice(1, -1);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * Parses JSON from its bytes (a client's body, a vendor's answer): the same value as
 * `JSON.parse(raw.toString('utf8'))`, and the same SyntaxError for bytes that are not JSON. A long string literal made only of plain
 * ASCII (no escape, no control character) is decoded straight from the bytes into its string,
 * and the rest parsed with a short stand-in in its place: a 20 MB base64 image then becomes one
 * string, instead of a 20 MB text first and the string JSON.parse copies out of it (V8 copies;
 * it does not slice the source) (issue #14).
 */
export function parseJsonBytes(raw: Buffer, longLiteral = LONG_LITERAL): unknown {
  const spans = raw.length >= longLiteral ? longLiterals(raw, longLiteral) : [];
  if (spans.length === 0) return JSON.parse(raw.toString('utf8'));
  const longs: string[] = [];
  // The text around the long literals, each replaced by a stand-in: decoded piece by piece into
  // one string (no buffer of it is built first).
  let skeleton = '';
  let at = 0;
  for (const [start, end] of spans) {
    const s = raw.toString('latin1', start, end);
    // A control character is not JSON: left in place, for JSON.parse to refuse.
    if (/[\u0000-\u001f]/.test(s)) continue;
    // Cut only next to a quote, so decoding the pieces apart decodes every byte as the whole would.
    skeleton += raw.toString('utf8', at, start) + STAND_IN_TEXT + longs.length;
    longs.push(s);
    at = end;
  }
  skeleton += raw.toString('utf8', at);
  let value: unknown;
  try {
    value = JSON.parse(skeleton);
  } catch {
    // Not JSON: JSON.parse of the whole text says where, in the client's own offsets.
    return JSON.parse(raw.toString('utf8'));
  }
  // Every stand-in is a value (never a key), so each is met once; a string a client sent that
  // looks like one is met too, and then the count is off: the whole text is parsed instead.
  if (placeLongs(value, longs) !== longs.length) return JSON.parse(raw.toString('utf8'));
  return value;
}

/**
 * Puts each long literal where its stand-in is in the parsed value; returns how many stand-ins
 * were met. A walk of the value after JSON.parse rather than a reviver: a reviver is called for
 * every value with its key, and cost half a KB more for an images answer (issue 41). Iterative:
 * a vendor's answer can nest deeper than the stack.
 */
function placeLongs(root: unknown, longs: readonly string[]): number {
  let placed = 0;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const v = pending.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item === 'string') {
          if (item.startsWith(STAND_IN)) {
            v[i] = longs[Number(item.slice(STAND_IN.length))];
            placed++;
          }
        } else if (item !== null && typeof item === 'object') pending.push(item);
      }
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue;
      const item = o[k];
      if (typeof item === 'string') {
        if (item.startsWith(STAND_IN)) {
          const long = longs[Number(item.slice(STAND_IN.length))];
          // As JSON.parse makes it: an own data property, even one named __proto__ (which `=` would take for the prototype).
          if (k === '__proto__') Object.defineProperty(o, k, { value: long, writable: true, enumerable: true, configurable: true });
          else o[k] = long;
          placed++;
        }
      } else if (item !== null && typeof item === 'object') pending.push(item);
    }
  }
  return placed;
}

/**
 * (Exported for its test.) The [start, end) byte ranges of the contents of string literals of at least `min` bytes that
 * are values (not keys) and hold only ASCII with no escape. Quotes are paired as JSON pairs them:
 * outside a string a quote opens one, inside it the first quote not escaped closes it; so for a
 * body that is JSON these are its literals, and for one that is not, putting a valid literal in
 * place of another leaves it just as invalid.
 */
export function longLiterals(raw: Buffer, min: number): [number, number][] {
  const spans: [number, number][] = [];
  let open = raw.indexOf(QUOTE);
  for (let n = 0; open !== -1 && n < LITERAL_BUDGET; n++) {
    let close = raw.indexOf(QUOTE, open + 1);
    while (close !== -1 && escaped(raw, open, close)) close = raw.indexOf(QUOTE, close + 1);
    if (close === -1) break;
    if (close - open - 1 >= min && !isKey(raw, close + 1)) {
      const contents = raw.subarray(open + 1, close);
      if (contents.indexOf(BACKSLASH) === -1 && isAscii(contents)) spans.push([open + 1, close]);
    }
    open = raw.indexOf(QUOTE, close + 1);
  }
  // Past the budget the literals after are unknown; those found so far are still literals.
  return spans;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it, after `open`. */
function escaped(raw: Buffer, open: number, at: number): boolean {
  let n = 0;
  for (let i = at - 1; i > open && raw[i] === BACKSLASH; i--) n++;
  return n % 2 === 1;
}

/** Whether a literal ending before `from` is a key: a colon follows it, after any JSON whitespace. */
function isKey(raw: Buffer, from: number): boolean {
  let i = from;
  while (i < raw.length && (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0a || raw[i] === 0x0d)) i++;
  return raw[i] === COLON;
}
