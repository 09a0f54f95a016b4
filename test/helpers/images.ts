/**
 * Images of a chosen size for tests of the image check (src/schema/image-keyword.ts); PNGs come
 * whole from src/sim/png.ts. JPEG and WebP files are made by bytes up to and past the header the
 * gateway reads (a JPEG's frame header, a WebP's first chunk), then end: what the gateway looks at
 * is real, the picture data after it is not.
 */
function u16be(n: number): number[] {
  return [(n >> 8) & 0xff, n & 0xff];
}

function u16le(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff];
}

function u24le(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff];
}

function u32le(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
}

/** A JPEG segment: marker FF `marker`, then a length that counts itself, then `payload`. */
export function jpegSegment(marker: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xff, marker, ...u16be(payload.length + 2)]), payload]);
}

/**
 * A JPEG of `width` x `height`: SOI, a JFIF APP0, the `before` segments (metadata, tables), the
 * frame header (`sof`, default C0 baseline; three components), a quantisation table, an empty
 * scan and EOI.
 */
export function makeJpeg(width: number, height: number, opts: { before?: Buffer[]; sof?: number } = {}): Buffer {
  const app0 = jpegSegment(0xe0, Buffer.from([0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]));
  const frame = jpegSegment(opts.sof ?? 0xc0, Buffer.from([8, ...u16be(height), ...u16be(width), 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]));
  const dqt = jpegSegment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)]));
  const sos = jpegSegment(0xda, Buffer.from([3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]));
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, ...(opts.before ?? []), frame, dqt, sos, Buffer.from([0, 0, 0, 0, 0xff, 0xd9])]);
}

function riff(fourcc: string, chunk: Buffer): Buffer {
  const padded = chunk.length % 2 === 1 ? Buffer.concat([chunk, Buffer.alloc(1)]) : chunk;
  const body = Buffer.concat([Buffer.from('WEBP', 'ascii'), Buffer.from(fourcc, 'ascii'), Buffer.from(u32le(chunk.length)), padded]);
  return Buffer.concat([Buffer.from('RIFF', 'ascii'), Buffer.from(u32le(body.length)), body]);
}

/** A lossy WebP (`VP8 `): a key frame's tag, start code and 14-bit sizes. */
export function makeWebpLossy(width: number, height: number): Buffer {
  return riff('VP8 ', Buffer.from([0x50, 0x01, 0x00, 0x9d, 0x01, 0x2a, ...u16le(width), ...u16le(height), 0, 0, 0, 0, 0, 0]));
}

/** A lossless WebP (`VP8L`): signature 0x2f, then width-1 and height-1 in 14 bits each. */
export function makeWebpLossless(width: number, height: number): Buffer {
  const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14);
  return riff('VP8L', Buffer.from([0x2f, ...u32le(bits >>> 0), 0, 0, 0, 0, 0]));
}

/** An extended WebP (`VP8X`): flags, then the canvas as width-1 and height-1 in 24 bits each. */
export function makeWebpExtended(width: number, height: number): Buffer {
  return riff('VP8X', Buffer.from([0, 0, 0, 0, ...u24le(width - 1), ...u24le(height - 1)]));
}

/** `bytes` as a data URI of `type` (image/png, …). */
export function dataUri(type: string, bytes: Buffer): string {
  return `data:${type};base64,${bytes.toString('base64')}`;
}
