import type { ByteSource } from './image-header.js';
import { inlineMedia } from './inline-media.js';

/**
 * What an image string of a request body is: a URL (never fetched: the gateway does not reach out
 * to addresses a client names), or inline bytes as a `data:…;base64,…` URI or bare base64, read in
 * place without decoding the whole string.
 */
export type InlineImage =
  | { readonly kind: 'url' }
  | { readonly kind: 'bytes'; readonly source: ByteSource }
  | { readonly kind: 'invalid' /** Says what the string is instead, as a clause: "is not base64". */; readonly why: string };

const BASE64_CHARS = /^[A-Za-z0-9+/]*$/;

/** Classifies an image string; the payload of inline bytes is read lazily through `source`. */
export function inlineImage(value: string): InlineImage {
  // Only the head is checked against the alphabet: a header is all an image check reads, and the
  // route's schema checks the whole string by its pattern or `format: base64`.
  const media = inlineMedia(value, 'head');
  if (media.kind !== 'base64') return media;
  return { kind: 'bytes', source: base64Source(value, media.start, media.end, media.size) };
}

/**
 * The `size` bytes of the base64 text `s[start, end)`, decoded four characters (three bytes) at a
 * time around the offsets read. A character that is not base64 where nothing is read goes unseen
 * here (inline-media.ts checked the head and the length).
 */
function base64Source(s: string, start: number, end: number, size: number): ByteSource {
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
