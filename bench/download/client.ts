/**
 * The downloading clients of bench/download: node:http GETs on a connection of their own, read as
 * fast as they come (bytes counted, the head and tail of the body kept for a check) or at a fixed
 * rate (a client on a slow link: it reads so many bytes per tick and leaves the rest in its socket).
 */
import { type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http';

/** An answer whose headers have arrived; its body not yet read (paused). */
export interface Opened {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly res: IncomingMessage;
  /** When the request was sent (performance.now()). */
  readonly startedAt: number;
}

/** Sends a GET on a fresh connection and resolves once the answer's headers are in. */
export function open(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers, agent: false }, (res) => {
      res.pause();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, res, startedAt });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A body read to its end: its length, how long from the request to the last byte, and its first and last bytes. */
export interface Drained {
  readonly bytes: number;
  readonly ms: number;
  readonly head: Buffer;
  readonly tail: Buffer;
  /** The body ended early (the connection was cut). */
  readonly cut: boolean;
}

/** Reads the whole body as fast as it comes, keeping its first `keep` and last `keep` bytes. */
export function drain(o: Opened, keep = 0): Promise<Drained> {
  return new Promise((resolve) => {
    let bytes = 0;
    const head: Buffer[] = [];
    let headBytes = 0;
    let tail: Buffer[] = [];
    let tailBytes = 0;
    let cut = false;
    o.res.on('data', (c: Buffer) => {
      bytes += c.length;
      if (keep === 0) return;
      if (headBytes < keep) {
        head.push(c.subarray(0, keep - headBytes));
        headBytes += Math.min(c.length, keep - headBytes);
      }
      tail.push(c);
      tailBytes += c.length;
      while (tail.length > 1 && tailBytes - tail[0]!.length >= keep) tailBytes -= tail.shift()!.length;
    });
    o.res.on('aborted', () => (cut = true));
    o.res.on('error', () => (cut = true));
    o.res.on('close', () => {
      const t = Buffer.concat(tail);
      tail = [];
      resolve({
        bytes,
        ms: performance.now() - o.startedAt,
        head: Buffer.concat(head),
        tail: t.subarray(Math.max(0, t.length - keep)),
        cut: cut || !o.res.complete,
      });
    });
    o.res.resume();
  });
}

/** A client reading at a fixed rate: how much it has read, and a way to hang up. */
export interface SlowReader {
  read(): number;
  /** Hangs up (destroys the connection) and stops reading. */
  stop(): void;
}

/**
 * Reads `bytesPerSecond` from the body, in ticks of 50 ms; what it does not read stays in its
 * socket, so the sender sees the window close as a slow link would make it close.
 */
export function readSlowly(o: Opened, bytesPerSecond: number): SlowReader {
  let read = 0;
  let allowance = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    allowance = Math.min(allowance + ((now - last) / 1000) * bytesPerSecond, bytesPerSecond);
    last = now;
    while (allowance > 0) {
      const chunk = o.res.read() as Buffer | null;
      if (!chunk) break;
      read += chunk.length;
      allowance -= chunk.length;
    }
  }, 50);
  o.res.on('error', () => undefined);
  return {
    read: () => read,
    stop() {
      clearInterval(tick);
      o.res.destroy();
    },
  };
}
