/**
 * One attempt of a delivery over HTTP: a POST through undici with a timeout until the answer's
 * status and headers, on sockets whose address is checked as they connect (./outbound-url.ts).
 * Redirects are not followed (a 3xx is an answer that is not a 2xx). The status decides the
 * outcome; at most a little of the body is read, briefly, and never required.
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
/** The longest an answer's body is read after its status arrived (never past the attempt's timeout). */
export const ANSWER_BODY_MS = 1_000;

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
    const deadline = Date.now() + this.#timeoutMs;
    const signal = AbortSignal.timeout(this.#timeoutMs);
    let res: Dispatcher.ResponseData;
    try {
      res = await this.#agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'generation-gateway-webhooks' },
        body,
        signal,
      } as Dispatcher.RequestOptions);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = signal.aborted ? `no answer within ${this.#timeoutMs} ms` : (e.message || e.code || 'the connection failed').slice(0, 300);
      return { status: null, error: why };
    }
    // The status line and headers came in time: that is the answer (docs/webhooks.md, "Retries").
    await readSome(res.body, MAX_ANSWER_BYTES, Math.min(ANSWER_BODY_MS, deadline - Date.now()));
    return { status: res.statusCode, error: null };
  }

  /** Closes the agent's connections (after the attempts under way). */
  close(): Promise<void> {
    return this.#agent.close();
  }
}

/**
 * Reads at most `maxBytes` of an answer's body for at most `ms`, then drops the rest (and the
 * connection with it, when unfinished). Never throws: a body that drips, stops or breaks after
 * the status changes nothing about the attempt, and holds its slot no longer than `ms`.
 */
async function readSome(body: Dispatcher.ResponseData['body'], maxBytes: number, ms: number): Promise<void> {
  const timer = setTimeout(() => body.destroy(), Math.max(0, ms));
  try {
    let read = 0;
    for await (const chunk of body) {
      read += (chunk as Buffer).length;
      if (read > maxBytes) break;
    }
  } catch {
    // Destroyed by the timer, aborted by the attempt's signal, or broken by the receiver: the status stands.
  } finally {
    clearTimeout(timer);
    body.destroy();
  }
}
