/**
 * Small valid WebP pictures for the zeta-openai simulator's `thumbnail` and `spritesheet` variants,
 * which OpenAI's specification serves as `image/webp` (test/contract/specs/openai-openapi.json).
 * A lossless (VP8L) picture of one colour: each of its five prefix codes is a "simple" code of one
 * symbol, which costs no bits per pixel, so the picture is a header whatever its size.
 */

/** Bits written least significant first, as VP8L reads them. */
class Bits {
  readonly bytes: number[] = [];
  #acc = 0;
  #n = 0;
  put(value: number, count: number): void {
    for (let i = 0; i < count; i++) {
      this.#acc |= ((value >> i) & 1) << this.#n;
      if (++this.#n === 8) this.flush();
    }
  }
  flush(): void {
    if (this.#n === 0) return;
    this.bytes.push(this.#acc);
    this.#acc = 0;
    this.#n = 0;
  }
}

/** A simple prefix code of one 8-bit symbol (or the 1-bit symbol 0 or 1). */
function oneSymbol(bits: Bits, symbol: number): void {
  bits.put(1, 1); // simple code
  bits.put(0, 1); // one symbol
  if (symbol < 2) {
    bits.put(0, 1);
    bits.put(symbol, 1);
  } else {
    bits.put(1, 1);
    bits.put(symbol, 8);
  }
}

/** A `width` × `height` WebP of one opaque colour chosen by `seed`. */
export function makeFlatWebp(width: number, height: number, seed = 0): Buffer {
  const bits = new Bits();
  bits.put(0x2f, 8); // VP8L signature
  bits.put(width - 1, 14);
  bits.put(height - 1, 14);
  bits.put(0, 1); // alpha not used
  bits.put(0, 3); // version 0
  bits.put(0, 1); // no transform
  bits.put(0, 1); // no colour cache
  bits.put(0, 1); // no meta prefix codes
  const [r, g, b] = [(seed * 67 + 40) & 0xff, (seed * 131 + 90) & 0xff, (seed * 29 + 160) & 0xff];
  for (const symbol of [g, r, b, 0xff, 0]) oneSymbol(bits, symbol); // green, red, blue, alpha, distance
  bits.flush();
  const data = Buffer.from(bits.bytes);
  const padded = data.length % 2 === 1 ? Buffer.concat([data, Buffer.alloc(1)]) : data;
  const chunk = Buffer.alloc(8);
  chunk.write('VP8L', 0, 'ascii');
  chunk.writeUInt32LE(data.length, 4);
  const head = Buffer.alloc(12);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(4 + chunk.length + padded.length, 4);
  head.write('WEBP', 8, 'ascii');
  return Buffer.concat([head, chunk, padded]);
}

/** The size of a lossless WebP (as makeFlatWebp makes), or null when `buf` is not one. */
export function webpSize(buf: Buffer): { width: number; height: number } | null {
  if (buf.length < 25 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 16) !== 'WEBPVP8L' || buf[20] !== 0x2f) return null;
  const v = buf.readUInt32LE(21);
  return { width: (v & 0x3fff) + 1, height: ((v >> 14) & 0x3fff) + 1 };
}
