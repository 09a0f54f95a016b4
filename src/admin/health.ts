import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import type { AdminAnswer, AdminContext, Health } from './admin-types.js';

/** A readiness probe may come every second from several checkers: the store is asked at most this often. */
const STORE_CHECK_MS = 1_000;
/** A store that takes longer than this to say `SELECT 1` is not ready to serve requests either. */
const STORE_TIMEOUT_MS = 2_000;

/**
 * The probes' view of a store: down at once while the store is known to be away (its guard then
 * asks it every second by itself), else asked at most once a second however often the probes come.
 */
export function healthOf(store: Store, draining: () => boolean, now: () => number = Date.now): Health {
  let last: { at: number; up: Promise<boolean> } | null = null;
  // A store found back is asked afresh, not answered with the failed check of a moment ago.
  store.availability.onChange((change) => {
    if (change.up) last = null;
  });
  return {
    draining,
    storeUp() {
      if (!store.availability.up) return Promise.resolve(false);
      const t = now();
      if (!last || t - last.at >= STORE_CHECK_MS) last = { at: t, up: within(store.availability.check(), STORE_TIMEOUT_MS) };
      return last.up;
    },
  };
}

/** Whether a check said yes within `ms`. */
async function within(check: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What an operator sees of the store's availability (docs/deploying.md, "When something fails"):
 * `gateway_store_up`, `gateway_store_outages_total`, and one log line when it goes and one when it
 * comes back, however many requests were refused meanwhile. Returns the function that stops it.
 */
export function reportStore(store: Store, log: Logger, metrics: Metrics): () => void {
  metrics.gauge(
    'gateway_store_up',
    '1 while the store answers; 0 while it is unreachable and requests that need it are answered 503 store_unavailable',
    [],
    () => [[{}, store.availability.up ? 1 : 0]],
  );
  return store.availability.onChange((change) => {
    if (!change.up) {
      metrics.storeOutages.inc();
      log.error({ reason: change.reason }, 'store unreachable: requests that need it are answered 503 store_unavailable until it is back');
    } else {
      log.info({ down_ms: change.downMs }, 'store reachable again: serving as usual');
    }
  });
}

/** `GET /healthz`: the process is alive and its event loop turns. Nothing is asked of anyone. */
export async function healthz(): Promise<AdminAnswer> {
  return { json: { status: 'ok' } };
}

/**
 * `GET /readyz`: this replica should get traffic: a configuration is serving (always true once
 * started: a failed reload keeps the previous one), the store answers, and no stop is under way.
 * 503 otherwise, with the check that failed. The result archive, when there is one, is said
 * (`archive`) but never makes it 503: while it is away, downloads are served by the vendor, and
 * taking every replica out for it would serve nothing at all.
 */
export async function readyz({ snapshot, deps }: AdminContext): Promise<AdminAnswer> {
  const draining = deps.health.draining();
  const store = await deps.health.storeUp();
  const archive = deps.health.archiveUp?.() ?? null;
  const ready = store && !draining;
  return {
    status: ready ? 200 : 503,
    json: {
      status: ready ? 'ready' : 'not_ready',
      config: snapshot.version,
      store: store ? 'ok' : 'unreachable',
      draining,
      ...(archive === null ? {} : { archive: archive ? 'ok' : 'unreachable' }),
    },
  };
}
