/**
 * One raw HTTP/1.1 exchange on its own connection, for the fuzzer: the bytes go out exactly as
 * given, and the answer is read until the server closes (the request says `Connection: close`).
 * Says whether every byte was handed to the server, so a refusal that closed the connection early
 * is told apart from a request that got no answer at all.
 */
import { connect } from 'node:net';

/** What came back. `status` 0: no HTTP answer at all. */
export interface Exchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Every request byte was written before the connection ended. */
  readonly sent: boolean;
  /** No answer and no close within the time allowed. */
  readonly timedOut: boolean;
}

/** Sends `bytes` to 127.0.0.1:`port` and reads the answer until the connection closes. */
export function exchange(port: number, bytes: Buffer, timeoutMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ ...parseAnswer(Buffer.concat(chunks)), sent, timedOut });
    });
    socket.write(bytes, (err) => {
      if (!err) sent = true;
    });
  });
}

/** Status, headers and body of the first answer in `raw` (content-length, chunked, or to the end). */
export function parseAnswer(raw: Buffer): { status: number; headers: Record<string, string>; body: string } {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/.exec(text);
  if (!m || end === -1) return { status: 0, headers: {}, body: '' };
  const headers: Record<string, string> = {};
  for (const line of text.slice(m[0].length, end).split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = unchunk(body);
  return { status: Number(m[1]), headers, body: body.toString('utf8') };
}

function unchunk(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol === -1) break;
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}
