import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Files of any size made on the fly, for the download tests and bench/download: a vendor serving
 * a 1 GB video without a 1 GB buffer or a disk. The bytes are a function of their offset (each
 * 64 KiB block is one fixed pseudo-random block stamped with the file's seed and the block's
 * number), so a client can check any range it got, a resume included. The server honours `Range`
 * (one `bytes=` range) and `If-Range` the way a CDN does, writes only as fast as its reader takes
 * the bytes (it waits for `drain`), and counts what it has sent, so a test can see how far a
 * vendor got ahead of the client at the other end of the gateway.
 */

/** Bytes per block; every block starts with its stamp. */
export const BLOCK = 64 * 1024;

/** The block every block is made from: xorshift32 bytes, the same in every process. */
const BASE: Buffer = (() => {
  const out = Buffer.allocUnsafe(BLOCK);
  let x = 0x9e3779b9;
  for (let i = 0; i < BLOCK; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, i);
  }
  return out;
})();

/** Block `k` of the file of `seed`: the base block with the seed and `k` in its first 16 bytes. */
function block(seed: number, k: number): Buffer {
  const out = Buffer.allocUnsafe(BLOCK);
  BASE.copy(out);
  out.writeUInt32BE(seed >>> 0, 0);
  out.writeUInt32BE(0x66696c65, 4);
  out.writeBigUInt64BE(BigInt(k), 8);
  return out;
}

/** The bytes of the file of `seed` from `start` to `end` inclusive (for checks: allocates them). */
export function generatedBytes(seed: number, start: number, end: number): Buffer {
  const parts: Buffer[] = [];
  for (let pos = start; pos <= end; ) {
    const k = Math.floor(pos / BLOCK);
    const to = Math.min(end + 1, (k + 1) * BLOCK);
    parts.push(block(seed, k).subarray(pos - k * BLOCK, to - k * BLOCK));
    pos = to;
  }
  return Buffer.concat(parts);
}

/** A file to serve: its seed (which bytes), its size, and how its server treats `Range`. */
export interface GeneratedFile {
  readonly seed: number;
  readonly size: number;
  readonly contentType?: string;
  /** Answer every request with the whole file, 200, as a server that does not do ranges. */
  readonly ignoreRange?: boolean;
}

/** One answer of a generated file, while and after it is sent. */
export interface Transfer {
  readonly status: number;
  /** First and last byte offsets of the answer's body. */
  readonly start: number;
  readonly end: number;
  /** Bytes handed to the socket so far (written and no longer waiting in the response's own buffer). */
  sent(): number;
  /** The whole body was written and the answer finished. */
  done: boolean;
  /** The connection closed before the answer was finished (the reader went away). */
  aborted: boolean;
  /** Resolves once the answer has closed, finished or cut. */
  readonly closed: Promise<void>;
}

/** The file's validator: what `If-Range` must name for a range to be served. */
export function etagOf(file: GeneratedFile): string {
  return `"gen-${file.seed.toString(16)}-${file.size.toString(16)}"`;
}

/** The range a request asks of a file of `size` bytes: null for the whole file, 'unsatisfiable' for a 416. */
function wanted(req: IncomingMessage, file: GeneratedFile): { start: number; end: number } | null | 'unsatisfiable' {
  if (file.ignoreRange) return null;
  const range = req.headers.range;
  const m = typeof range === 'string' ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  const ifRange = req.headers['if-range'];
  if (typeof ifRange === 'string' && ifRange !== etagOf(file)) return null;
  const size = file.size;
  const start = m[1] === '' ? Math.max(0, size - Number(m[2])) : Number(m[1]);
  const end = m[1] === '' || m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  return start >= size || start > end ? 'unsatisfiable' : { start, end };
}

/**
 * Answers a GET of a generated file: 200 with the whole file, 206 with one range, 416 when the
 * range starts past the end. Written block by block, each only once the last one drained.
 */
export function serveGenerated(req: IncomingMessage, res: ServerResponse, file: GeneratedFile): Transfer {
  const common = {
    'content-type': file.contentType ?? 'video/mp4',
    etag: etagOf(file),
    ...(file.ignoreRange ? {} : { 'accept-ranges': 'bytes' }),
  };
  const range = wanted(req, file);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...common, 'content-range': `bytes */${file.size}` });
    res.end();
    return { status: 416, start: 0, end: -1, sent: () => 0, done: true, aborted: false, closed: Promise.resolve() };
  }
  const { start, end } = range ?? { start: 0, end: file.size - 1 };
  const status = range ? 206 : 200;
  res.writeHead(status, {
    ...common,
    'content-length': end - start + 1,
    ...(range ? { 'content-range': `bytes ${start}-${end}/${file.size}` } : {}),
  });
  let written = 0;
  let closed = (): void => undefined;
  const transfer: Transfer = {
    status,
    start,
    end,
    sent: () => written - (res.writableEnded && res.writableFinished ? 0 : res.writableLength),
    done: false,
    aborted: false,
    closed: new Promise<void>((r) => (closed = r)),
  };
  res.once('close', () => {
    if (!res.writableFinished) transfer.aborted = true;
    closed();
  });
  res.once('finish', () => {
    transfer.done = true;
  });
  let pos = start;
  const pump = (): void => {
    while (pos <= end) {
      if (res.destroyed) return;
      const k = Math.floor(pos / BLOCK);
      const to = Math.min(end + 1, (k + 1) * BLOCK);
      const chunk = block(file.seed, k).subarray(pos - k * BLOCK, to - k * BLOCK);
      pos = to;
      written += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  if (req.method === 'HEAD') res.end();
  else pump();
  return transfer;
}
