/**
 * The webhooks of one gateway (docs/webhooks.md): the delivery worker, the queue gauges, and the
 * purge of old deliveries; what the admin routes and submissions read of the settings.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import { startPurge } from '../records/purge-by-age.js';
import type { Store } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { DeliveryWorker, type DeliveryWorkerDeps } from './delivery-worker.js';
import type { WebhookSettings } from './webhook-settings.js';

/** How long the store's count of pending deliveries is reused between scrapes. */
const COUNT_TTL_MS = 5_000;

/** What the gateway assembles webhooks from: what the worker needs, and the gateway's clock. */
export interface WebhooksOptions extends Omit<DeliveryWorkerDeps, 'now' | 'random'> {
  readonly clock: () => Date;
}

/** The webhooks of a gateway: started with its background work, stopped with it. */
export class Webhooks {
  readonly settings: WebhookSettings;
  readonly worker: DeliveryWorker;
  readonly #opts: WebhooksOptions;
  #stopPurge: () => void = () => undefined;

  constructor(opts: WebhooksOptions) {
    this.#opts = opts;
    this.settings = opts.settings;
    this.worker = new DeliveryWorker({ ...opts, now: () => opts.clock().getTime() });
    if (!opts.metrics.registry.getSingleMetric('gateway_webhook_deliveries_pending')) reportQueue(opts.store, opts.metrics, opts.log);
  }

  /** Starts sending and purging. */
  start(): void {
    const { store, log, clock, settings } = this.#opts;
    this.worker.start();
    this.#stopPurge = startPurge('old webhook deliveries', (before, limit) => store.deleteDeliveriesBefore(before, limit), settings.days, log, clock);
  }

  /** Asks for deliveries due now rather than at the next round ("send again"). */
  nudge(): void {
    void this.worker.tick();
  }

  async stop(): Promise<void> {
    this.#stopPurge();
    await this.worker.stop();
  }
}

/** `gateway_webhook_deliveries_pending` and `gateway_webhook_oldest_pending_seconds`, from the store, counted at most every 5 s. */
function reportQueue(store: Store, metrics: Metrics, log: Logger): void {
  let counted: { at: number; count: number; oldestAt: number | null } | null = null;
  let counting: Promise<void> | null = null;
  const count = async () => {
    if (counted && Date.now() - counted.at < COUNT_TTL_MS) return;
    await (counting ??= store
      .pendingDeliveries()
      .then((p) => void (counted = { at: Date.now(), ...p }))
      .catch((err: unknown) => log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err }, 'could not count the pending webhook deliveries'))
      .finally(() => (counting = null)));
  };
  metrics.asyncGauge(
    'gateway_webhook_deliveries_pending',
    'Webhook deliveries not yet delivered nor given up, in the store (counted at most every 5 s)',
    [],
    async () => {
      await count();
      return counted ? [[{}, counted.count]] : [];
    },
  );
  metrics.asyncGauge('gateway_webhook_oldest_pending_seconds', 'Age of the oldest pending webhook delivery (0 when none)', [], async () => {
    await count();
    return counted ? [[{}, counted.oldestAt === null ? 0 : Math.max(0, (Date.now() - counted.oldestAt) / 1000)]] : [];
  });
}
