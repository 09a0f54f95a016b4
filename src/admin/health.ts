import type { Store } from '../store/store.js';
import type { AdminAnswer, AdminContext, Health } from './admin-types.js';

/** A readiness probe may come every second from several checkers: the store is asked at most this often. */
const STORE_CHECK_MS = 1_000;
/** A store that takes longer than this to say `SELECT 1` is not ready to serve requests either. */
const STORE_TIMEOUT_MS = 2_000;

/** The probes' view of a store, pinging it at most once a second however often they ask. */
export function healthOf(store: Store, draining: () => boolean, now: () => number = Date.now): Health {
  let last: { at: number; up: Promise<boolean> } | null = null;
  return {
    draining,
    storeUp() {
      const t = now();
      if (!last || t - last.at >= STORE_CHECK_MS) last = { at: t, up: pingWithin(store, STORE_TIMEOUT_MS) };
      return last.up;
    },
  };
}

async function pingWithin(store: Store, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([store.ping().then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** `GET /healthz`: the process is alive and its event loop turns. Nothing is asked of anyone. */
export async function healthz(): Promise<AdminAnswer> {
  return { json: { status: 'ok' } };
}

/**
 * `GET /readyz`: this replica should get traffic: a configuration is serving (always true once
 * started: a failed reload keeps the previous one), the store answers, and no stop is under way.
 * 503 otherwise, with the check that failed.
 */
export async function readyz({ snapshot, deps }: AdminContext): Promise<AdminAnswer> {
  const draining = deps.health.draining();
  const store = await deps.health.storeUp();
  const ready = store && !draining;
  return {
    status: ready ? 200 : 503,
    json: { status: ready ? 'ready' : 'not_ready', config: snapshot.version, store: store ? 'ok' : 'unreachable', draining },
  };
}
