import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A PNG of `raw` scanlines (each led by its filter byte), deflated at `level`. */
function png(width: number, height: number, bitDepth: number, colourType: number, raw: Buffer, level: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = colourType;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A real, valid RGB PNG of the given size: a diagonal gradient tinted by `seed`, so images differ. */
export function makePng(width: number, height: number, seed = 0): Buffer {
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    raw[y * row] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const o = y * row + 1 + x * 3;
      raw[o] = (x * 255) / Math.max(1, width - 1);
      raw[o + 1] = (y * 255) / Math.max(1, height - 1);
      raw[o + 2] = (seed * 37) & 255;
    }
  }
  return png(width, height, 8, 2, raw, -1);
}

/**
 * An RGB PNG of random pixels: a photograph's entropy, so it weighs what a vendor's does (a
 * 1536x1024 one about 4.7 MB). Stored, not compressed: random bytes do not shrink.
 */
export function makeNoisePng(width: number, height: number): Buffer {
  const row = 1 + width * 3;
  const raw = randomBytes(row * height);
  for (let y = 0; y < height; y++) raw[y * row] = 0; // filter: none
  return png(width, height, 8, 2, raw, 0);
}

/**
 * A real, valid PNG of the given size in one shade of grey (1 bit per pixel, all black): it
 * compresses to a few dozen bytes whatever its size, so a test or a golden case can carry a
 * 640x128 image in one short line of base64.
 */
export function makeFlatPng(width: number, height: number): Buffer {
  // Each row: filter byte 0, then width bits rounded up to whole bytes, all zero.
  return png(width, height, 1, 0, Buffer.alloc((1 + Math.ceil(width / 8)) * height), 9);
}

/** Width and height of a PNG, read from its IHDR chunk; null when the bytes are not a PNG. */
export function pngSize(buf: Buffer): { width: number; height: number } | null {
  if (buf.length < 24 || buf.readUInt32BE(0) !== 0x89504e47 || buf.toString('ascii', 12, 16) !== 'IHDR') return null;
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}
