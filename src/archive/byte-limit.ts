import { Transform, type TransformCallback } from 'node:stream';
import { ArchiveTooLarge } from './backend.js';

/** Passes bytes through, counting them; fails with `ArchiveTooLarge` as soon as more than `maxBytes` went by. */
export class ByteLimit extends Transform {
  #seen = 0;
  readonly #max: number;

  constructor(maxBytes: number) {
    super();
    this.#max = maxBytes;
  }

  /** Bytes passed so far. */
  get seen(): number {
    return this.#seen;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.#max) done(new ArchiveTooLarge(this.#max));
    else done(null, chunk);
  }
}
