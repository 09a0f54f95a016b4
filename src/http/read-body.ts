import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import type { Admission } from './body-budget.js';

/**
 * Reads a request body into one Buffer, refusing it as soon as it passes `maxBytes`: up front from
 * Content-Length when declared, otherwise while streaming. On refusal the unread rest is dropped
 * after the answer, within bounds (src/http/drain-unread.ts), never kept. The bytes read
 * are held within `admission` (the process's body budget); a chunked body that outgrows it is refused.
 */
export function readBody(req: IncomingMessage, maxBytes: number, admission?: Admission): Promise<Buffer> {
  const tooLarge = () => new GatewayError('payload_too_large', `the request body is larger than the ${maxBytes} bytes this route accepts`);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.reject(tooLarge());

  return new Promise((resolve, reject) => {
    // Never more than the route takes, whatever the header says (it was refused above if larger).
    const expected = declaredLength(req);
    const into = new Collector(expected !== null && expected <= maxBytes ? expected : null);
    let size = 0;
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) reject(err);
      else resolve(into.bytes());
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        finish(tooLarge());
        return;
      }
      const refused = admission?.cover(size);
      if (refused) {
        req.pause();
        finish(refused);
        return;
      }
      into.add(chunk);
    };
    const onEnd = () => finish(null);
    // The connection is unusable after a broken body; `connection: close` makes Node close it
    // once the answer is written, so a half-closed socket is not left behind.
    const onError = (e: Error) =>
      finish(new GatewayError('invalid_request', 'the request body could not be read', { cause: e, headers: { connection: 'close' } }));
    const onAborted = () => finish(new GatewayError('invalid_request', 'the client aborted the request body', { headers: { connection: 'close' } }));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** Below this a declared body is collected as chunks: one concat of a small body costs nothing worth saving. */
const PREALLOCATE_FROM = 64 * 1024;

/**
 * The bytes of one body as they arrive. A body that declares its length (at most the route's
 * maxBytes, and already reserved in the body budget) is copied into one Buffer of that size as it
 * arrives, so the chunks can go at once and no second whole copy is made at the end (issue #14:
 * chunks + concat held a 20 MB body twice). Node's parser delivers exactly the declared bytes or
 * fails the request; should more arrive all the same, the collector goes on in chunks, and a body
 * that ends short is what it is, as when everything was collected in chunks.
 */
class Collector {
  #buf: Buffer | null;
  #filled = 0;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(declared: number | null) {
    // Unsafe is fine: only the bytes written are ever handed out (bytes() cuts at #filled).
    this.#buf = declared !== null && declared >= PREALLOCATE_FROM ? Buffer.allocUnsafe(declared) : null;
  }

  add(chunk: Buffer): void {
    const buf = this.#buf;
    if (buf !== null && this.#filled + chunk.length <= buf.length) {
      this.#filled += chunk.copy(buf, this.#filled);
      return;
    }
    if (buf !== null) {
      // More than declared: keep what is filled, as a chunk, and carry on as an undeclared body.
      this.#chunks.push(buf.subarray(0, this.#filled));
      this.#size = this.#filled;
      this.#buf = null;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  bytes(): Buffer {
    if (this.#buf !== null) return this.#filled === this.#buf.length ? this.#buf : this.#buf.subarray(0, this.#filled);
    const [only] = this.#chunks;
    return only && this.#chunks.length === 1 ? only : Buffer.concat(this.#chunks, this.#size);
  }
}

/** The declared Content-Length, or null when the body is not declared (chunked). */
function declaredLength(req: IncomingMessage): number | null {
  const raw = req.headers['content-length'];
  if (raw === undefined) return null;
  const n = Number(raw);
  // Node's parser has already refused a malformed Content-Length; this only guards the type.
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}
