/**
 * The image header reader (src/schema/image-header.ts) and the inline image reader
 * (src/schema/inline-image.ts): sizes of real PNGs and of JPEG and WebP headers made by bytes,
 * truncated and hostile input (null, never a throw, bounded reads), and base64 read in place.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { bufferSource, readImageHeader, type ByteSource } from '../../src/schema/image-header.js';
import { inlineImage } from '../../src/schema/inline-image.js';
import { makePng } from '../../src/sim/png.js';
import { dataUri, jpegSegment, makeJpeg, makeWebpExtended, makeWebpLossless, makeWebpLossy } from '../helpers/images.js';

const header = (bytes: Buffer) => readImageHeader(bufferSource(bytes));

/** A ByteSource that counts what is asked of it. */
function counting(bytes: Buffer): ByteSource & { reads: number; bytesRead: number } {
  const src = {
    size: bytes.length,
    reads: 0,
    bytesRead: 0,
    read(offset: number, length: number) {
      src.reads++;
      const out = bytes.subarray(offset, offset + length);
      src.bytesRead += out.length;
      return out;
    },
  };
  return src;
}

describe('readImageHeader', () => {
  test('PNG: width and height of real PNGs from their IHDR', () => {
    for (const [w, h] of [
      [1, 1],
      [64, 36],
      [300, 200],
      [128, 512],
    ] as const) {
      assert.deepEqual(header(makePng(w, h)), { format: 'png', width: w, height: h });
    }
  });

  test('JPEG: the frame header after APP0, after long metadata segments, after fill bytes, and for progressive frames', () => {
    assert.deepEqual(header(makeJpeg(640, 480)), { format: 'jpeg', width: 640, height: 480 });
    // EXIF and ICC segments of nearly 64 KB each: stepped over, not read.
    const exif = jpegSegment(0xe1, Buffer.alloc(65_000, 0x45));
    const icc = jpegSegment(0xe2, Buffer.alloc(65_000, 0x49));
    const big = makeJpeg(4000, 3000, { before: [exif, icc, exif] });
    const src = counting(big);
    assert.deepEqual(readImageHeader(src), { format: 'jpeg', width: 4000, height: 3000 });
    assert.ok(src.bytesRead < 100, `read ${src.bytesRead} of ${big.length} bytes`);
    // Fill bytes (FF FF …) before a marker, and a huffman table (C4, in the SOF range) before the frame.
    const dht = jpegSegment(0xc4, Buffer.from([0, ...Array(16).fill(0)]));
    const filled = makeJpeg(200, 100, { before: [Buffer.from([0xff, 0xff, 0xff]), dht] });
    assert.deepEqual(header(filled), { format: 'jpeg', width: 200, height: 100 });
    assert.deepEqual(header(makeJpeg(129, 130, { sof: 0xc2 })), { format: 'jpeg', width: 129, height: 130 });
  });

  test('WebP: lossy (VP8), lossless (VP8L) and extended (VP8X) headers', () => {
    assert.deepEqual(header(makeWebpLossy(640, 128)), { format: 'webp', width: 640, height: 128 });
    assert.deepEqual(header(makeWebpLossless(1, 16384)), { format: 'webp', width: 1, height: 16384 });
    assert.deepEqual(header(makeWebpLossless(300, 77)), { format: 'webp', width: 300, height: 77 });
    assert.deepEqual(header(makeWebpExtended(20_000, 128)), { format: 'webp', width: 20_000, height: 128 });
  });

  test('not an image, a zero size, or a scan before any frame header: null', () => {
    assert.equal(header(Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1')), null);
    assert.equal(header(Buffer.alloc(0)), null);
    assert.equal(header(makePng(0, 5)), null);
    assert.equal(header(makeJpeg(0, 5)), null);
    const noFrame = Buffer.concat([Buffer.from([0xff, 0xd8]), jpegSegment(0xda, Buffer.from([1, 1, 0, 0, 63, 0])), Buffer.from([0xff, 0xd9])]);
    assert.equal(header(noFrame), null);
    const png = makePng(4, 4);
    png.write('IHDX', 12, 'ascii');
    assert.equal(header(png), null, 'the first chunk must be IHDR');
    const riff = makeWebpLossy(4, 4);
    riff.write('VP9 ', 12, 'ascii');
    assert.equal(header(riff), null);
  });

  test('every truncation of every kind of image gives null or the true size, never a throw', () => {
    const images: [Buffer, number, number][] = [
      [makePng(130, 140), 130, 140],
      [makeJpeg(150, 160, { before: [jpegSegment(0xe1, Buffer.alloc(300, 1))] }), 150, 160],
      [makeWebpLossy(170, 180), 170, 180],
      [makeWebpLossless(190, 200), 190, 200],
      [makeWebpExtended(210, 220), 210, 220],
    ];
    for (const [bytes, w, h] of images) {
      let seen = false;
      for (let n = 0; n <= bytes.length; n++) {
        const got = header(bytes.subarray(0, n));
        if (got) {
          assert.equal(got.width, w);
          assert.equal(got.height, h);
          seen = true;
        }
      }
      assert.ok(seen, 'the whole image is read');
    }
  });

  test('hostile JPEG chains are cut off after a bounded number of reads', () => {
    // 100,000 empty comment segments, then a frame: the walk gives up long before.
    const comments = Buffer.concat(Array.from({ length: 100_000 }, () => Buffer.from([0xff, 0xfe, 0x00, 0x02])));
    const src = counting(Buffer.concat([Buffer.from([0xff, 0xd8]), comments, makeJpeg(300, 300).subarray(2)]));
    assert.equal(readImageHeader(src), null);
    assert.ok(src.reads <= 1024, `${src.reads} reads`);
    // A million fill bytes: as bounded.
    const fill = counting(Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(1_000_000, 0xff)]));
    assert.equal(readImageHeader(fill), null);
    assert.ok(fill.reads <= 1024, `${fill.reads} reads`);
    // A segment length below 2 would walk backwards or stand still.
    assert.equal(header(Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0x00, 0x01, 0xff, 0xc0])), null);
  });

  test('random bytes behind each signature: null or a positive size, never a throw', () => {
    const signatures = [
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from([0xff, 0xd8, 0xff]),
      Buffer.from('RIFF\0\0\0\0WEBP', 'latin1'),
      Buffer.alloc(0),
    ];
    fc.assert(
      fc.property(fc.constantFrom(...signatures), fc.uint8Array({ maxLength: 200 }), (sig, rest) => {
        const got = header(Buffer.concat([sig, rest]));
        return got === null || (got.width >= 1 && got.height >= 1);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('inlineImage', () => {
  test('http(s) URLs are URLs, whatever their case', () => {
    for (const u of ['https://img.example/a.png', 'http://127.0.0.1:1/x.png', 'HTTPS://IMG.EXAMPLE/A.PNG']) assert.deepEqual(inlineImage(u), { kind: 'url' });
  });

  test('a data URI and bare base64 are read in place: the header and the decoded size', () => {
    const png = makePng(200, 100, 3);
    for (const text of [dataUri('image/png', png), png.toString('base64'), dataUri('image/png', png).replace(/=+$/, '')]) {
      const img = inlineImage(text);
      assert.equal(img.kind, 'bytes', text.slice(0, 40));
      if (img.kind !== 'bytes') continue;
      assert.equal(img.source.size, png.length);
      assert.deepEqual(readImageHeader(img.source), { format: 'png', width: 200, height: 100 });
      assert.deepEqual(Buffer.from(img.source.read(5, 17)!), png.subarray(5, 22), 'any window reads as the bytes there');
      assert.deepEqual(Buffer.from(img.source.read(png.length - 2, 10)!), png.subarray(png.length - 2));
    }
  });

  test("a JPEG's long segments are stepped over in the base64 text: what is skipped is never decoded", () => {
    const exif = jpegSegment(0xe1, Buffer.alloc(60_000, 0x45));
    const jpeg = makeJpeg(1024, 768, { before: [exif] });
    const b64 = jpeg.toString('base64');
    // Spoil the text inside the EXIF payload (whole quads, past the 1,024 characters checked up front,
    // clear of the next marker): were it decoded, the reader would see characters that are not base64.
    const from = 1100;
    const to = Math.floor((2 + 18 + 4 + 60_000 - 12) / 3) * 4;
    const spoiled = `${b64.slice(0, from)}${'*'.repeat(to - from)}${b64.slice(to)}`;
    const img = inlineImage(`data:image/jpeg;base64,${spoiled}`);
    assert.equal(img.kind, 'bytes');
    if (img.kind === 'bytes') assert.deepEqual(readImageHeader(img.source), { format: 'jpeg', width: 1024, height: 768 });
  });

  test('what is not an image string is named: not base64, a data URI without base64 or without data', () => {
    const why = (s: string) => {
      const r = inlineImage(s);
      return r.kind === 'invalid' ? r.why : r.kind;
    };
    assert.equal(why('a lighthouse at dawn'), 'is not base64');
    assert.equal(why(''), 'is not base64');
    assert.equal(why('ftp://img.example/a.png'), 'is not base64');
    assert.equal(why('AAAAA'), 'is not base64', 'a length base64 cannot have');
    assert.equal(why('AAA=A'), 'is not base64');
    assert.equal(why('data:image/png,%89PNG'), 'is a data URI that is not base64');
    assert.equal(why(`data:image/png;base64${'x'.repeat(300)}`), 'is a data URI without its data');
    assert.equal(why('data:image/png;base64,'), 'is a data URI whose data is not base64');
    assert.equal(why('data:image/png;base64,iVBO\nRw0K'), 'is a data URI whose data is not base64');
    // Outside what is read, a bad character goes unseen here (the route's schema checks the whole string).
    assert.equal(why(`${'A'.repeat(2000)}!!!!`), 'bytes');
  });
});
