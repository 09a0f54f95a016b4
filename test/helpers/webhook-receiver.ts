/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that verifies every delivery's
 * signature with the `standardwebhooks` package (the reference implementation of the scheme) and
 * records it. It can answer with another status, and be stopped and started again on the port it
 * had, as a receiver that crashes and comes back.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One delivery as it arrived. */
export interface Received {
  /** The path and query it was sent to. */
  readonly path: string;
  readonly id: string;
  readonly timestamp: number;
  readonly signature: string;
  readonly body: string;
  /** The body, parsed, when a secret verified it; null when none did. */
  readonly event: { type: string; timestamp: string; data: any } | null;
}

export class WebhookReceiver {
  /** Every request, in order of arrival (verified or not). */
  readonly received: Received[] = [];
  /** The secrets a delivery may be signed with (any one verifying is enough). */
  secrets: string[] = [];
  /** The status to answer a delivery with (default 204). */
  answer: (r: Received) => number = () => 204;
  #server: Server | null = null;
  #port = 0;
  readonly #path: string;

  constructor(path = '/hooks') {
    this.#path = path;
  }

  /** Its URL (the path included); the port stays the same across restarts. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}${this.#path}`;
  }

  /** Listens: on a free port the first time, then on the same one again. */
  async start(): Promise<void> {
    const server = createServer((req, res) => {
      void read(req).then((body) => {
        const h = (n: string) => String(req.headers[n] ?? '');
        const r: Received = {
          path: req.url ?? '',
          id: h('webhook-id'),
          timestamp: Number(h('webhook-timestamp')),
          signature: h('webhook-signature'),
          body,
          event: this.#verify(body, {
            'webhook-id': h('webhook-id'),
            'webhook-timestamp': h('webhook-timestamp'),
            'webhook-signature': h('webhook-signature'),
          }),
        };
        this.received.push(r);
        res.writeHead(r.event ? this.answer(r) : 401).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Stops at once: the listener and every open connection (a crash, as far as the sender can tell). */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Verified deliveries, at most one per webhook-id (what a receiver deduplicating by id keeps). */
  unique(): Received[] {
    const seen = new Map<string, Received>();
    for (const r of this.received) if (r.event && !seen.has(r.id)) seen.set(r.id, r);
    return [...seen.values()];
  }

  /** Requests whose signature no secret verified. */
  unverified(): Received[] {
    return this.received.filter((r) => r.event === null);
  }

  #verify(body: string, headers: Record<string, string>): Received['event'] {
    for (const s of this.secrets) {
      try {
        return new Webhook(s).verify(body, headers) as Received['event'];
      } catch {
        // the next secret
      }
    }
    return null;
  }
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
