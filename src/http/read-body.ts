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
    const chunks: Buffer[] = [];
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
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
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
      chunks.push(chunk);
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
