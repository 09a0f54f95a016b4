import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TaskBook } from './task-book.js';

/** A started simulator: where it listens and how the test drives it. */
export interface Simulator {
  readonly profile: string;
  /** Base URL, e.g. http://127.0.0.1:40123 */
  readonly url: string;
  /** The credentials it accepts, by the secret names of its profile. */
  readonly secrets: Readonly<Record<string, string>>;
  /** Faults to apply to the next requests, one each, in order (see faults.ts for the forms). */
  readonly faults: string[];
  /** Requests received so far (`requests`), and per-kind counters a simulator adds (`submits`, `queries`, …). */
  readonly stats: { requests: number; [counter: string]: number };
  /** The request targets (path and query, exactly as received) of the latest requests, oldest first, at most TARGETS_KEPT. */
  readonly targets: readonly string[];
  /** What the latest requests said of the gateway's request they serve, oldest first, at most TARGETS_KEPT. */
  readonly traces: readonly Heard[];
  /** Asynchronous simulators: their tasks, so tests can look one up by the vendor's id. */
  readonly tasks?: TaskBook;
  /** Asynchronous simulators: the exact bytes served as result `index` (default 0) of a vendor task; null when there are none. */
  result?(upstreamTaskId: string, index?: number): Buffer | null;
  close(): Promise<void>;
}

/** The request id and trace headers one request came with (null when absent), and its target. */
export interface Heard {
  readonly target: string;
  readonly requestId: string | null;
  readonly traceparent: string | null;
}

/** A request handler of a simulator; `body` is the whole request body. */
export type SimHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer, url: URL) => Promise<void> | void;

/** Request targets a simulator keeps (the latest ones). */
const TARGETS_KEPT = 10_000;

/**
 * Starts an HTTP server on 127.0.0.1 (port 0 by default) around a simulator's handler. Another
 * `host` (a name other containers resolve, as compose's `sims`) is listened on and named in the URL.
 */
export async function listen(
  handler: SimHandler,
  port = 0,
  host = '127.0.0.1',
): Promise<{ url: string; targets: readonly string[]; traces: readonly Heard[]; close(): Promise<void> }> {
  const targets: string[] = [];
  const traces: Heard[] = [];
  const header = (v: string | string[] | undefined) => (typeof v === 'string' ? v : null);
  const server = createServer((req, res) => {
    // What a vendor is asked, as it is asked: tests check no malformed path ever reaches one.
    targets.push(req.url ?? '');
    if (targets.length > TARGETS_KEPT) targets.splice(0, targets.length - TARGETS_KEPT);
    // And which public request asked it: tests follow a request id and trace from client to vendor.
    traces.push({ target: req.url ?? '', requestId: header(req.headers['x-request-id']), traceparent: header(req.headers.traceparent) });
    if (traces.length > TARGETS_KEPT) traces.splice(0, traces.length - TARGETS_KEPT);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://sim');
      Promise.resolve(handler(req, res, Buffer.concat(chunks), url)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`simulator fault: ${(err as Error).message}`);
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`,
    targets,
    traces,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Sends a JSON answer. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
