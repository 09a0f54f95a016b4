import type { ByteSource } from './image-header.js';

/**
 * What an image string of a request body is: a URL (never fetched: the gateway does not reach out
 * to addresses a client names), or inline bytes as a `data:…;base64,…` URI or bare base64, read in
 * place without decoding the whole string.
 */
export type InlineImage =
  | { readonly kind: 'url' }
  | { readonly kind: 'bytes'; readonly source: ByteSource }
  | { readonly kind: 'invalid'; /** Says what the string is instead, as a clause: "is not base64". */
      readonly why: string };

const URL_FORM = /^https?:\/\//i;
const BASE64_CHARS = /^[A-Za-z0-9+/]*$/;
/** Characters of the payload checked up front, so text that is plainly not base64 is named as such. */
const CHECKED_UP_FRONT = 1024;
/** A data URI's media type and parameters are short; a comma further in is not the one that ends them. */
const MAX_DATA_HEADER = 256;

/** Classifies an image string; the payload of inline bytes is read lazily through `source`. */
export function inlineImage(value: string): InlineImage {
  if (URL_FORM.test(value)) return { kind: 'url' };
  let start = 0;
  if (value.startsWith('data:')) {
    const comma = value.slice(0, MAX_DATA_HEADER).indexOf(',');
    if (comma === -1) return { kind: 'invalid', why: 'is a data URI without its data' };
    if (!/;base64$/i.test(value.slice(5, comma))) return { kind: 'invalid', why: 'is a data URI that is not base64' };
    start = comma + 1;
  }
  const source = base64Source(value, start);
  if (source) return { kind: 'bytes', source };
  return { kind: 'invalid', why: start > 0 ? 'is a data URI whose data is not base64' : 'is not base64' };
}

/**
 * The bytes of the base64 text `s` from `start`, decoded four characters (three bytes) at a time
 * around the offsets read. The whole text is not scanned: a character that is not base64 where
 * nothing is read goes unseen here (a route's schema checks the whole string by its pattern or
 * `format: base64`), but the length must be one base64 can have, since the size is counted from it.
 */
function base64Source(s: string, start: number): ByteSource | null {
  let end = s.length;
  if (s.endsWith('==')) end -= 2;
  else if (s.endsWith('=')) end -= 1;
  const chars = end - start;
  // Padded text comes in whole quads; unpadded text may not end with a lone character (6 bits).
  if (chars <= 0 || chars % 4 === 1 || (end !== s.length && (s.length - start) % 4 !== 0)) return null;
  if (!BASE64_CHARS.test(s.slice(start, Math.min(end, start + CHECKED_UP_FRONT)))) return null;
  const size = Math.floor((chars * 3) / 4);
  return {
    size,
    read(offset, length) {
      const from = Math.min(Math.max(0, offset), size);
      const to = Math.min(size, from + Math.max(0, length));
      if (to <= from) return new Uint8Array(0);
      const quad = Math.floor(from / 3);
      const text = s.slice(start + quad * 4, Math.min(end, start + Math.ceil(to / 3) * 4));
      if (!BASE64_CHARS.test(text)) return null;
      const skip = from - quad * 3;
      return Buffer.from(text, 'base64').subarray(skip, skip + (to - from));
    },
  };
}
