/**
 * Width and height of a PNG, JPEG or WebP image from its header alone. Images reach the gateway as
 * base64 text of up to tens of megabytes; the size a limit needs sits in a few bytes near the start
 * (a JPEG's frame header behind its metadata segments), so only those bytes are read. Hostile or
 * truncated input gives null, never an exception, and the work is bounded whatever the input.
 */

/** The image formats whose headers are read. */
export type ImageFormat = 'png' | 'jpeg' | 'webp';

/** What a header says. */
export interface ImageHeader {
  readonly format: ImageFormat;
  readonly width: number;
  readonly height: number;
}

/**
 * An image's bytes, read where needed: base64 text is decoded only around the offsets asked for
 * (inline-image.ts), so a JPEG's long metadata segments are stepped over, not decoded.
 */
export interface ByteSource {
  /** The size of the whole image in bytes. */
  readonly size: number;
  /** Up to `length` bytes from `offset` (fewer at the end of the image); null when they are not readable (not base64). */
  read(offset: number, length: number): Uint8Array | null;
}

/** A ByteSource over bytes in memory. */
export function bufferSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/** Format, width and height of the image, or null when its header is not one of a PNG, JPEG or WebP with a size. */
export function readImageHeader(src: ByteSource): ImageHeader | null {
  const head = src.read(0, 30);
  if (!head) return null;
  if (startsWith(head, PNG_SIGNATURE)) return png(head);
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return jpeg(src);
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP') return webp(head);
  return null;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** PNG sizes are at most 2^31 - 1 (PNG spec, 11.2.2). */
const PNG_MAX = 0x7fffffff;

/** The IHDR chunk comes first in every PNG: width and height at offsets 16 and 20. */
function png(b: Uint8Array): ImageHeader | null {
  if (b.length < 24 || ascii(b, 12, 16) !== 'IHDR') return null;
  return sized('png', u32be(b, 16), u32be(b, 20), PNG_MAX);
}

/**
 * A JPEG is a chain of marker segments; the frame header (SOFn) holds the size and must come before
 * the first scan. Most images have it within a few segments; a cap on the segments walked bounds
 * the work on a hostile chain of tiny ones.
 */
const MAX_JPEG_STEPS = 512;

function jpeg(src: ByteSource): ImageHeader | null {
  let pos = 2;
  for (let step = 0; step < MAX_JPEG_STEPS; step++) {
    // Marker (FF xx), the segment's length, and what a frame header needs: precision, height, width.
    const b = src.read(pos, 9);
    if (!b || b.length < 2 || b[0] !== 0xff) return null;
    const marker = at(b, 1);
    // A run of FF is fill before a marker (ITU T.81 B.1.1.2): step over one byte.
    if (marker === 0xff) {
      pos += 1;
      continue;
    }
    // Markers without a segment: TEM and the restart markers.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      pos += 2;
      continue;
    }
    // Start of scan, end of image, or a second start of image before any frame header: no size here.
    if (marker === 0xda || marker === 0xd9 || marker === 0xd8) return null;
    if (b.length < 4) return null;
    const length = (at(b, 2) << 8) | at(b, 3);
    if (length < 2) return null;
    if (isFrameHeader(marker)) {
      if (b.length < 9 || length < 8) return null;
      // Height before width; a height of 0 is defined later by a DNL segment, which is not read.
      return sized('jpeg', (at(b, 7) << 8) | at(b, 8), (at(b, 5) << 8) | at(b, 6), 0xffff);
    }
    pos += 2 + length;
  }
  return null;
}

/** SOF0 to SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range. */
function isFrameHeader(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/**
 * A WebP is a RIFF file whose first chunk says how it is coded: `VP8 ` (lossy: the key frame's
 * 14-bit sizes), `VP8L` (lossless: 14-bit sizes minus one after its signature byte) or `VP8X`
 * (extended: the canvas, 24-bit sizes minus one).
 */
function webp(b: Uint8Array): ImageHeader | null {
  if (b.length < 30) return null;
  switch (ascii(b, 12, 16)) {
    case 'VP8 ':
      if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
      return sized('webp', u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff, 0x3fff);
    case 'VP8L': {
      if (b[20] !== 0x2f) return null;
      const bits = (at(b, 21) | (at(b, 22) << 8) | (at(b, 23) << 16) | (at(b, 24) << 24)) >>> 0;
      return sized('webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1, 0x4000);
    }
    case 'VP8X':
      return sized('webp', u24le(b, 24) + 1, u24le(b, 27) + 1, 0x1000000);
    default:
      return null;
  }
}

function sized(format: ImageFormat, width: number, height: number, max: number): ImageHeader | null {
  if (width < 1 || height < 1 || width > max || height > max) return null;
  return { format, width, height };
}

function startsWith(b: Uint8Array, prefix: readonly number[]): boolean {
  return b.length >= prefix.length && prefix.every((v, i) => b[i] === v);
}

function ascii(b: Uint8Array, from: number, to: number): string {
  return b.length < to ? '' : String.fromCharCode(...b.subarray(from, to));
}

/** The byte at `i`; past the end 0, as a bitwise operator reads a missing byte (callers check the length first). */
const at = (b: Uint8Array, i: number) => b[i] ?? 0;
const u16le = (b: Uint8Array, i: number) => at(b, i) | (at(b, i + 1) << 8);
const u24le = (b: Uint8Array, i: number) => at(b, i) | (at(b, i + 1) << 8) | (at(b, i + 2) << 16);
const u32be = (b: Uint8Array, i: number) => ((at(b, i) << 24) | (at(b, i + 1) << 16) | (at(b, i + 2) << 8) | at(b, i + 3)) >>> 0;
