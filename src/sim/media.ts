import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Result bytes of the asynchronous simulators, and a file server for them that honours `Range`
 * the way a CDN does, so the gateway's streaming download can be tested byte for byte.
 */

function box(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + payload.length, 0);
  head.write(type, 4, 'ascii');
  return Buffer.concat([head, payload]);
}

/**
 * An ISO-BMFF (MP4) file: `ftyp`, an empty `moov`, and an `mdat` of deterministic bytes derived
 * from `seed`, `size` bytes in all (at least 64). Players accept the structure; tests compare bytes.
 */
export function makeMp4(seed: string, size = 64 * 1024): Buffer {
  const ftyp = box('ftyp', Buffer.concat([Buffer.from('isom', 'ascii'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41', 'ascii')]));
  const moov = box('moov', box('mvhd', Buffer.alloc(100)));
  const room = Math.max(0, size - ftyp.length - moov.length - 8);
  return Buffer.concat([ftyp, moov, box('mdat', filler(seed, room))]);
}

/** An MP3 file: an ID3v2 header and MPEG-1 Layer III frames of deterministic bytes, `size` bytes in all. */
export function makeMp3(seed: string, size = 32 * 1024): Buffer {
  const id3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]);
  const frames = filler(seed, Math.max(0, size - id3.length));
  // 128 kbit/s, 44.1 kHz frames of 417 bytes, each starting with its sync word.
  for (let i = 0; i + 4 <= frames.length; i += 417) frames.set([0xff, 0xfb, 0x90, 0x64], i);
  return Buffer.concat([id3, frames]);
}

function filler(seed: string, n: number): Buffer {
  const out = Buffer.alloc(n);
  let block = createHash('sha256').update(seed).digest();
  for (let i = 0; i < n; i += block.length) {
    block.copy(out, i, 0, Math.min(block.length, n - i));
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

/**
 * Answers a GET for a whole file, or one `bytes=` range of it with 206 (416 when unsatisfiable).
 * Multi-range requests are answered with the whole file, which RFC 9110 allows.
 */
export function serveBytes(req: IncomingMessage, res: ServerResponse, data: Buffer, contentType: string): void {
  const common = { 'content-type': contentType, 'accept-ranges': 'bytes', etag: `"${createHash('sha1').update(data).digest('hex').slice(0, 16)}"` };
  const range = req.headers.range;
  const m = typeof range === 'string' ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  if (m && (m[1] !== '' || m[2] !== '')) {
    let start: number;
    let end: number;
    if (m[1] === '') {
      start = Math.max(0, data.length - Number(m[2]));
      end = data.length - 1;
    } else {
      start = Number(m[1]);
      end = m[2] === '' ? data.length - 1 : Math.min(Number(m[2]), data.length - 1);
    }
    if (start >= data.length || start > end) {
      res.writeHead(416, { ...common, 'content-range': `bytes */${data.length}` });
      res.end();
      return;
    }
    res.writeHead(206, { ...common, 'content-range': `bytes ${start}-${end}/${data.length}`, 'content-length': end - start + 1 });
    res.end(req.method === 'HEAD' ? undefined : data.subarray(start, end + 1));
    return;
  }
  res.writeHead(200, { ...common, 'content-length': data.length });
  res.end(req.method === 'HEAD' ? undefined : data);
}
