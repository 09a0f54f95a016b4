import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { sendPlainHttpOnTls } from './error-boundary.js';

/**
 * Plain HTTP sent to the HTTPS port (GATEWAY_TLS_CERT): without this the TLS handshake fails on the
 * first byte and the client sees the connection closed with no answer, which reads like a crash.
 * The first byte tells them apart: a TLS record starts with its content type (0x14 to 0x17; an old
 * SSLv2 hello with a high bit), an HTTP/1 request with its method's first letter. A connection that
 * starts with an upper-case letter is answered a plain-text 400 saying to use https; any other goes
 * on to the TLS handshake as before, its first bytes handed back, so TLS sees the connection whole.
 */
export function answerPlainHttpOnTls(server: HttpsServer, firstByteMs: number): void {
  // The TLS server's own listener wraps the socket at once; it runs only once the first byte is known.
  const tls = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // A peer that sends nothing is let go, as a client that sends no headers is (headersTimeout).
    socket.setTimeout(firstByteMs, () => socket.destroy());
    const dropped = () => socket.destroy();
    socket.once('error', dropped);
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.setTimeout(0);
      socket.off('error', dropped);
      const byte = first[0] ?? 0;
      if (byte >= 0x41 && byte <= 0x5a) return sendPlainHttpOnTls(socket, hostOf(first));
      // The TLS socket reads what is buffered on the socket it wraps before anything new.
      socket.unshift(first);
      for (const listener of tls) listener.call(server, socket);
    });
  });
}

/** The Host header of the request's first bytes, when it is a plain host name or address (it is echoed in the answer). */
function hostOf(first: Buffer): string | null {
  const m = /\r\nhost:[ \t]*([A-Za-z0-9.\-:[\]]{1,255})[ \t]*\r\n/i.exec(first.toString('latin1'));
  return m?.[1] ?? null;
}
