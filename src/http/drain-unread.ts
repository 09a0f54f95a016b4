import type { IncomingMessage } from 'node:http';

/** Bytes of an unread body taken in (and dropped) after the answer, before the connection is cut. */
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
/** Time allowed for that, after which the connection is cut anyway. */
const DRAIN_MAX_MS = 10_000;

/**
 * After an answer that left the request's body unread (a refusal: too large, over the memory
 * budget, unauthenticated): what still arrives is read and dropped, within bounds, rather than
 * the connection being closed at once. Closing a socket with unread data makes the kernel send a
 * reset, and a client still uploading then loses the answer it was sent (RFC 9112, section 9.6,
 * "lingering close"). Nothing is kept, so this costs no memory; past the bounds the connection is
 * cut. A body that does end leaves the connection usable for the client's next request.
 */
export function drainUnread(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  // The answer kept the connection open for this (server.ts); a client that asked to close it
  // still gets that once its body is in, rather than an idle connection until keep-alive ends.
  const close = wantsClose(req);
  let dropped = 0;
  const cut = () => req.socket?.destroy();
  const timer = setTimeout(cut, DRAIN_MAX_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_MAX_BYTES) cut();
  });
  req.once('end', () => {
    if (close) req.socket?.end();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/** `Connection: close`, or HTTP/1.0 without `keep-alive`. */
function wantsClose(req: IncomingMessage): boolean {
  const tokens = String(req.headers.connection ?? '')
    .toLowerCase()
    .split(',')
    .map((t) => t.trim());
  return tokens.includes('close') || (req.httpVersion === '1.0' && !tokens.includes('keep-alive'));
}
