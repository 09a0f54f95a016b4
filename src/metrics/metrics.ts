import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { KeyedCounter, KeyedHistogram } from './keyed-series.js';

let processRegistry: Registry | null = null;

/**
 * The process's own metrics (prom-client's defaults: CPU, memory, heap, event loop lag, GC, open
 * handles), in one registry per process, made once: they describe the process, not a gateway,
 * and each registration starts an event loop monitor and a GC observer that are never stopped,
 * which a registry per gateway (tests build hundreds) would pile up.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * Every metric of one gateway, in its own registry (tests run many gateways in one process).
 * Served at `GET /metrics` in the Prometheus text format, with the process's own metrics
 * (`text()`); docs/admin-and-metrics.md, "Metrics" lists them.
 */
export class Metrics {
  readonly registry = new Registry();

  /** Public requests answered, by route id and HTTP status (counted on every request: `count`, keyed-series.ts). */
  readonly requests = new KeyedCounter({
    name: 'gateway_requests_total',
    help: 'Public requests answered, by route and HTTP status',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });

  /** Each call of a vendor on the request path, by channel and outcome (ok, refused, rejected, unsent, unknown, rate_limited). */
  readonly upstreamAttempts = new KeyedCounter({
    name: 'gateway_upstream_attempts_total',
    help: 'Vendor calls on the request path, by channel and outcome',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Requests that moved on to another channel after a failed attempt, by the reason. */
  readonly fallbacks = new Counter({
    name: 'gateway_fallbacks_total',
    help: 'Requests retried on the next eligible channel, by the failure that caused it',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Requests refused before any vendor call because every eligible channel was saturated or open. */
  readonly shed = new Counter({
    name: 'gateway_shed_total',
    help: 'Requests refused without a vendor call, by reason (channel_saturated, group_saturated, breaker_open)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Requests refused by the line in front of a full max_concurrency, by scope (channel, group) and reason (full: no place in line; timeout: the wait ran out). */
  readonly upstreamQueueRefused = new Counter({
    name: 'gateway_upstream_queue_refused_total',
    help: 'Requests answered 429 by the queue of a channel or group at its max_concurrency, by scope (channel, group) and reason (full, timeout)',
    labelNames: ['scope', 'reason'] as const,
    registers: [this.registry],
  });

  /** How long requests waited in line for a slot, by scope and outcome (served: got a slot; timeout: did not). */
  readonly upstreamQueueWait = new Histogram({
    name: 'gateway_upstream_queue_wait_seconds',
    help: 'Time requests waited for a slot of a channel or group at its max_concurrency, by scope (channel, group) and outcome (served, timeout)',
    labelNames: ['scope', 'outcome'] as const,
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /** Breaker transitions, by channel and the state entered. */
  readonly breakerTransitions = new Counter({
    name: 'gateway_breaker_transitions_total',
    help: 'Circuit breaker state changes, by channel and the state entered',
    labelNames: ['channel', 'state'] as const,
    registers: [this.registry],
  });

  /**
   * Public requests from their headers to their answer's end, by route id, model (a configured
   * name or pattern, `other`, `none`: src/http/access-log.ts) and HTTP status.
   */
  readonly requestSeconds = new KeyedHistogram({
    name: 'gateway_request_duration_seconds',
    help: 'Duration of public requests, from their headers to the end of their answer, by route, model and HTTP status',
    labelNames: ['route', 'model', 'status'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });

  /** Vendor call latency on the request path, by channel and outcome (the outcomes of gateway_upstream_attempts_total). */
  readonly upstreamSeconds = new KeyedHistogram({
    name: 'gateway_upstream_seconds',
    help: 'Duration of vendor calls on the request path, by channel and outcome',
    labelNames: ['channel', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  /** Configuration loads after start, by result (ok, error). */
  readonly configReloads = new Counter({
    name: 'gateway_config_reloads_total',
    help: 'Configuration reloads, by result',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** 1 when the last reload succeeded (or none was tried), 0 when the files on disk do not load. */
  readonly configLastReloadOk = new Gauge({
    name: 'gateway_config_last_reload_ok',
    help: '1 when the last configuration reload succeeded, 0 when it failed and the previous snapshot is serving',
    registers: [this.registry],
  });

  /** Number of the snapshot serving, counting from 1 at start. */
  readonly configGeneration = new Gauge({
    name: 'gateway_config_generation',
    help: 'Generation of the configuration snapshot serving requests',
    registers: [this.registry],
  });

  /** Quota units moved, by kind (debit, refund, settle). */
  readonly quotaUnits = new Counter({
    name: 'gateway_quota_units_total',
    help: 'Quota units debited, refunded and given back at settlement',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  /**
   * Requests refused because their key, or its group, was at one of its rate limits: by limit, by
   * whose limit (`scope`), and by the key's group. Never by token: tokens are made at will, so a
   * label per token would grow the series without bound (the request log has each refusal, by token).
   */
  readonly rateLimited = new Counter({
    name: 'gateway_rate_limited_total',
    help: "Requests refused (429) at a rate limit, by limit (rpm: requests per minute, max_parallel: requests in flight), scope (key: the key's own, group: its group's shared one) and the key's group",
    labelNames: ['limit', 'scope', 'group'] as const,
    registers: [this.registry],
  });

  /** Operations that would have been shared across replicas and were done in-process because Redis was away, by operation. */
  readonly sharedFallbacks = new Counter({
    name: 'gateway_redis_fallbacks_total',
    help: 'Shared-state operations done per process because Redis was unreachable, by operation (slot, window, probe, publish, announce)',
    labelNames: ['op'] as const,
    registers: [this.registry],
  });

  /** Times the store was found unreachable (docs/deploying.md, "When something fails"). */
  readonly storeOutages = new Counter({
    name: 'gateway_store_outages_total',
    help: 'Times the store was found unreachable (each followed by gateway_store_up 0 until it answered again)',
    registers: [this.registry],
  });

  /** How late the poller's looks at tasks start after they fall due (waiting for a slot of the channel included). */
  readonly pollLag = new Histogram({
    name: 'gateway_task_poll_lag_seconds',
    help: 'How late each look of the task poller started after the task fell due',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  /**
   * `served: false`: nothing will read `/metrics` (no GATEWAY_ADMIN_KEY), so the process's own
   * metrics are not started until something asks for the text. Their event-loop monitor wakes the
   * loop every 10 ms: half an idle gateway's CPU (180 of 350 ms per 30 s idle, issue 41).
   */
  constructor(opts: { served?: boolean } = {}) {
    this.configLastReloadOk.set(1);
    this.configGeneration.set(1);
    // Started with the first gateway, so the event loop and GC figures cover its whole life.
    if (opts.served ?? true) processMetrics();
  }

  /** The exposition served at `GET /metrics`: this gateway's metrics, then the process's. */
  async text(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processMetrics().metrics()}`;
  }

  /** The content type of `text()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The counter of this name on the registry, made on first use: several owners (two webhook
   * workers, every dependency gate) may count into one without registering it twice.
   */
  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return (
      (this.registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames: [...labelNames], registers: [this.registry] })
    );
  }

  /**
   * Adds a gauge whose values are read when scraped (breaker state, in-flight calls): the owner
   * keeps the numbers, the registry asks for them.
   */
  gauge(name: string, help: string, labelNames: readonly string[], read: () => Iterable<[Record<string, string>, number]>): void {
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [labels, value] of read()) this.set(labels, value);
      },
    });
  }

  /** Like `gauge`, for values that take a look elsewhere (the store): the scrape waits for `read`. */
  asyncGauge(name: string, help: string, labelNames: readonly string[], read: () => Promise<Iterable<[Record<string, string>, number]>>): void {
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
      async collect() {
        const values = await read();
        this.reset();
        for (const [labels, value] of values) this.set(labels, value);
      },
    });
  }
}
