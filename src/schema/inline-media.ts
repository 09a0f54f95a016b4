/**
 * What a media string of a request body is: an http(s) URL (never fetched: the gateway does not
 * reach out to addresses a client names), or inline bytes as a `data:<type>;base64,…` URI or bare
 * base64, whose decoded size is counted from the text's length and padding without decoding it.
 * Shared by the `image` keyword (inline-image.ts) and the `media` keyword (media-keyword.ts).
 */
export type InlineMedia =
  | { readonly kind: 'url' }
  | {
      readonly kind: 'base64';
      /** Where the base64 starts in the string (after a data URI's comma) and where it ends (before any `=`). */
      readonly start: number;
      readonly end: number;
      /** The decoded size in bytes, exactly. */
      readonly size: number;
    }
  | { readonly kind: 'invalid' /** Says what the string is instead, as a clause: "is not base64". */; readonly why: string };

/**
 * How much of the base64 is checked against the alphabet. `whole` makes the size exact for any
 * string (a character outside the alphabet, a space or a line break included, is refused: the
 * size is counted from the length, and upstreams are sent the text as it is); it costs a regular
 * expression over the text, about 2 ms a megabyte. `head` checks the first 1,024 characters only,
 * for checks whose route schema checks the rest.
 */
export type Base64Check = 'head' | 'whole';

const URL_FORM = /^https?:\/\//i;
/** Standard base64 (RFC 4648 section 4), no padding, no white space: what upstreams decode without guessing. */
const BASE64_CHARS = /^[A-Za-z0-9+/]*$/;
const NOT_BASE64 = /[^A-Za-z0-9+/]/;
/** Characters of the payload checked up front under `head`, so text that is plainly not base64 is named as such. */
const CHECKED_UP_FRONT = 1024;
/** A data URI's media type and parameters are short; a comma further in is not the one that ends them. */
const MAX_DATA_HEADER = 256;

/** Classifies a media string and counts the bytes its base64 decodes to. */
export function inlineMedia(value: string, check: Base64Check): InlineMedia {
  if (URL_FORM.test(value)) return { kind: 'url' };
  let start = 0;
  if (value.startsWith('data:')) {
    const comma = value.slice(0, MAX_DATA_HEADER).indexOf(',');
    if (comma === -1) return { kind: 'invalid', why: 'is a data URI without its data' };
    if (!/;base64$/i.test(value.slice(5, comma))) return { kind: 'invalid', why: 'is a data URI that is not base64' };
    start = comma + 1;
  }
  const notBase64 = start > 0 ? 'is a data URI whose data is not base64' : 'is not base64';
  let end = value.length;
  if (value.endsWith('==')) end -= 2;
  else if (value.endsWith('=')) end -= 1;
  const chars = end - start;
  if (chars <= 0) return { kind: 'invalid', why: check === 'whole' ? `${notBase64} (it is empty)` : notBase64 };
  const checked = check === 'whole' ? end : Math.min(end, start + CHECKED_UP_FRONT);
  if (!BASE64_CHARS.test(value.slice(start, checked))) {
    return { kind: 'invalid', why: check === 'whole' ? `${notBase64} (${firstStray(value, start, checked)})` : notBase64 };
  }
  // Padded text comes in whole groups of four; unpadded text may not end with a lone character (6 bits).
  if (chars % 4 === 1 || (end !== value.length && (value.length - start) % 4 !== 0)) {
    return {
      kind: 'invalid',
      why: check === 'whole' ? `${notBase64} (its length, ${value.length - start} characters, is not one base64 can have)` : notBase64,
    };
  }
  // Four characters carry three bytes; a last group of 2 or 3 carries 1 or 2.
  return { kind: 'base64', start, end, size: Math.floor((chars * 3) / 4) };
}

/** "a line break at character 77": the first character of `s[start, end)` outside the alphabet, counted from 1 in the base64. */
function firstStray(s: string, start: number, end: number): string {
  const at = s.slice(start, end).search(NOT_BASE64);
  const c = s.charAt(start + at);
  const name = c === '\n' || c === '\r' ? 'a line break' : c === ' ' || c === '\t' ? 'white space' : JSON.stringify(c);
  return `${name} at character ${at + 1}`;
}
