/**
 * The delivery worker of one replica (docs/webhooks.md, "Retries" and "Several replicas"): every
 * GATEWAY_WEBHOOK_POLL_MS it leases the deliveries due (as the poller leases tasks: two replicas
 * never take the same one, and a dead replica's lease runs out and another takes it over), sends
 * each, and writes the outcome: a 2xx is delivered; anything else is tried again after an
 * exponential wait with jitter, until GATEWAY_WEBHOOK_GIVE_UP_MS after the event, then failed.
 * At most GATEWAY_WEBHOOK_CONCURRENCY attempts are under way at once, at most
 * GATEWAY_WEBHOOK_PER_ENDPOINT of them to one endpoint (the store's fair claim).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Snapshot } from '../config/snapshot.js';
import type { Metrics } from '../metrics/metrics.js';
import type { AttemptOutcome, Store, WebhookDelivery } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { deliveryBody, renderTask } from './payload.js';
import { Sender } from './send.js';
import { signatureHeader, signingSecrets } from './signature.js';
import type { WebhookSettings } from './webhook-settings.js';

/** Attempts of one delivery at most (a bound besides the give-up time). */
export const MAX_ATTEMPTS = 50;

const ATTEMPTS_METRIC = 'gateway_webhook_attempts_total';

/** What the worker works with. */
export interface DeliveryWorkerDeps {
  readonly store: Store;
  readonly snapshot: () => Snapshot;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly settings: WebhookSettings;
  /** GATEWAY_PUBLIC_URL, for the result links of payloads; null: paths on the gateway. */
  readonly publicUrl: string | null;
  /** This replica's name on delivery leases (GATEWAY_REPLICA_ID or a random one). */
  readonly owner?: string;
  readonly now?: () => number;
  readonly random?: () => number;
}

/** The wait before attempt `attempts + 1` after `attempts` failed ones: base × 2^(attempts-1), capped, the upper half jittered. */
export function retryDelay(attempts: number, base: number, max: number, random: () => number): number {
  const full = Math.min(max, base * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  return Math.round(full / 2 + (random() * full) / 2);
}

/** Leases due deliveries and sends them; one per replica. */
export class DeliveryWorker {
  readonly #deps: DeliveryWorkerDeps;
  readonly #owner: string;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #sender: Sender;
  readonly #outcomes: Counter<'outcome'>;
  readonly #inflight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | null = null;
  #ticking = false;
  #stopped = false;

  constructor(deps: DeliveryWorkerDeps) {
    this.#deps = deps;
    this.#owner = deps.owner ?? randomUUID();
    this.#now = deps.now ?? Date.now;
    this.#random = deps.random ?? Math.random;
    this.#sender = new Sender(deps.settings.timeoutMs, deps.settings.allowPrivate);
    // One counter per registry, should two workers ever share one.
    this.#outcomes = deps.metrics.counter(ATTEMPTS_METRIC, 'Webhook delivery attempts, by outcome (delivered, retry, failed)', ['outcome']);
  }

  /** A lease outlasts the longest attempt, so a live replica never loses one it is sending. */
  get leaseMs(): number {
    return this.#deps.settings.timeoutMs * 2 + 5_000;
  }

  /** Starts looking for deliveries due. */
  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setInterval(() => void this.tick(), this.#deps.settings.pollMs);
    this.#timer.unref();
  }

  /** One round: leases what is due (as many as there is room for) and starts sending it. */
  async tick(): Promise<void> {
    if (this.#ticking || this.#stopped) return;
    this.#ticking = true;
    try {
      const { concurrency, perEndpoint } = this.#deps.settings;
      const room = concurrency - this.#inflight.size;
      if (room <= 0) return;
      const now = this.#now();
      // Fair across endpoints: a receiver that never answers holds at most `perEndpoint` slots.
      const due = await this.#deps.store.claimDeliveries(this.#owner, now, now + this.leaseMs, room, perEndpoint);
      for (const d of due) {
        const p: Promise<void> = this.#attempt(d)
          .catch((err: unknown) =>
            this.#deps.log[isStoreUnavailable(err) ? 'debug' : 'warn'](
              { err, delivery: d.id },
              'a webhook attempt could not be recorded; its lease runs out and it is tried again',
            ),
          )
          .finally(() => this.#inflight.delete(p));
        this.#inflight.add(p);
      }
    } catch (err) {
      this.#deps.log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err }, 'could not look for webhook deliveries due; trying again');
    } finally {
      this.#ticking = false;
    }
  }

  /** Stops looking, and waits for the attempts under way (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await Promise.all([...this.#inflight]);
    await this.#sender.close();
  }

  /** Sends one delivery and writes what came of it. */
  async #attempt(d: WebhookDelivery): Promise<void> {
    const { store, settings } = this.#deps;
    const endpoint = await store.getWebhookEndpoint(d.endpointId);
    const task = await store.getTask(d.taskId);
    // Past its window (a backlog held it in its endpoint's line that long): failed unsent, as the
    // give-up time promises, so a dead receiver's line empties instead of costing one more attempt each.
    const late = this.#now() >= d.windowStart + settings.giveUpMs ? 'its retry window ended before it could be sent again' : null;
    const gone = !endpoint ? 'the endpoint was deleted' : !endpoint.enabled ? 'the endpoint is disabled' : !task ? 'the task was deleted' : late;
    if (gone || !endpoint || !task) {
      await this.#finish(d, { status: 'failed', nextAt: d.nextAt, code: null, error: gone, at: this.#now() });
      return;
    }
    const now = this.#now();
    const data = await renderTask(this.#deps.snapshot(), this.#deps.publicUrl ?? '', task, new Date(now));
    const body = deliveryBody(d.event, d.createdAt, task, data);
    const timestamp = Math.floor(now / 1000);
    const headers = {
      'webhook-id': d.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(signingSecrets(endpoint, now), d.id, timestamp, body),
    };
    const result = await this.#sender.post(endpoint.url ?? d.url, headers, body);
    const at = this.#now();
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const error = ok ? null : (result.error ?? `answered ${result.status}`);
    if (ok) {
      await this.#finish(d, { status: 'delivered', nextAt: d.nextAt, code: result.status, error: null, at });
      this.#deps.log.debug({ delivery: d.id, task: d.taskId, status: result.status, attempts: d.attempts + 1 }, 'webhook delivered');
      return;
    }
    const nextAt = at + retryDelay(d.attempts + 1, settings.retryBaseMs, settings.retryMaxMs, this.#random);
    const giveUp = nextAt >= d.windowStart + settings.giveUpMs || d.attempts + 1 >= MAX_ATTEMPTS;
    await this.#finish(d, { status: giveUp ? 'failed' : 'pending', nextAt, code: result.status, error, at });
    this.#deps.log[giveUp ? 'warn' : 'info'](
      { delivery: d.id, endpoint: d.endpointId, task: d.taskId, status: result.status, error, attempts: d.attempts + 1 },
      giveUp ? 'a webhook delivery was given up' : 'a webhook delivery failed; it is tried again',
    );
  }

  async #finish(d: WebhookDelivery, outcome: AttemptOutcome): Promise<void> {
    const written = await this.#deps.store.finishAttempt(d.id, this.#owner, outcome);
    // A lease lost meanwhile: the replica that took it over writes its own outcome.
    if (written) this.#outcomes.inc({ outcome: outcome.status === 'pending' ? 'retry' : outcome.status });
  }
}
