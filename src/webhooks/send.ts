/**
 * One attempt of a delivery over HTTP: a POST through undici with a timeout on the whole exchange,
 * on sockets whose address is checked as they connect (./outbound-url.ts). Redirects are not
 * followed (a 3xx is an answer that is not a 2xx). At most a little of the answer is read.
 */
import { createRequire } from 'node:module';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import { guardedLookup, hostOf, isPrivateAddress } from './outbound-url.js';
import { isIP } from 'node:net';

// The dispatcher alone, not undici's index (as src/upstream/pools.ts loads its Pool, for the same reason).
const requireUndici = createRequire(import.meta.url);
const Agent = requireUndici('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
Object.assign((requireUndici('undici/lib/dispatcher/dispatcher.js') as { prototype: object }).prototype, requireUndici('undici/lib/api/index.js'));

/** What an attempt came to: the answer's status, or why there was none. */
export type AttemptResult = { readonly status: number; readonly error: null } | { readonly status: null; readonly error: string };

/** Bytes of an answer read (the rest is dropped with the connection's reuse). */
const MAX_ANSWER_BYTES = 4096;

/** Sends deliveries: one agent for every receiver, connections kept a little for the next one. */
export class Sender {
  readonly #agent: Dispatcher;
  readonly #timeoutMs: number;
  readonly #allowPrivate: boolean;

  constructor(timeoutMs: number, allowPrivate: boolean) {
    this.#timeoutMs = timeoutMs;
    this.#allowPrivate = allowPrivate;
    this.#agent = new Agent({
      connect: { timeout: timeoutMs, lookup: guardedLookup(allowPrivate) } as UndiciAgent.Options['connect'],
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 4_000,
      // No cap per origin: the worker's slots (GATEWAY_WEBHOOK_CONCURRENCY, at most
      // GATEWAY_WEBHOOK_PER_ENDPOINT per endpoint) already bound the connections. A cap here made
      // attempts wait in undici's queue behind a receiver's other attempts and time out without
      // ever being sent, yet count as failed attempts of their deliveries.
      connections: null,
    });
  }

  /** POSTs `body` to `url` with `headers`; never throws. */
  async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { status: null, error: 'the URL is not valid' };
    }
    // An address written in the URL is connected to without a lookup: checked here.
    const host = hostOf(target);
    if (!this.#allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) return { status: null, error: `${host} is a private address; not sent` };
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const res = await this.#agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'generation-gateway-webhooks' },
        body,
        signal,
      } as Dispatcher.RequestOptions);
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > MAX_ANSWER_BYTES) {
          res.body.destroy();
          break;
        }
      }
      return { status: res.statusCode, error: null };
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = signal.aborted ? `no answer within ${this.#timeoutMs} ms` : (e.message || e.code || 'the connection failed').slice(0, 300);
      return { status: null, error: why };
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
