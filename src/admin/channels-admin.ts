import type { QueuePolicy } from '../config/snapshot.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

const queueView = (q: QueuePolicy | undefined) => (q ? { max_waiting: q.maxWaiting, max_wait_ms: q.maxWaitMs } : null);

/** `GET /admin/channels`: every channel with its routing settings and live state, and those left out; never secrets. */
export async function channelsReport({ snapshot, deps }: AdminContext): Promise<AdminAnswer> {
  return {
    json: {
      channels: snapshot.channels.map((c) => ({
        name: c.name,
        profile: c.profile.name,
        origin: c.origin,
        groups: [...c.groups],
        models: [...[...c.models.keys()], ...c.modelPrefixes.map((p) => `${p}*`)],
        priority: c.priority,
        weight: c.weight,
        max_concurrency: c.maxConcurrency,
        queue: c.maxConcurrency === null ? null : queueView(c.queue),
        keep_alive_ms: c.keepAliveMs,
        breaker_policy: {
          enabled: c.breaker.enabled,
          consecutive_failures: c.breaker.consecutiveFailures,
          failure_rate: c.breaker.failureRate,
          cooldown_ms: c.breaker.cooldownMs,
        },
        ...deps.routing.report(c),
      })),
      // Declared and checked, not routed to: disabled, or credentials unset (docs/operating.md, "Channels left out").
      left_out: snapshot.leftOut.map((c) => ({ name: c.name, profile: c.profile, reason: c.reason, unset: c.unset, at: c.at })),
      groups: [...snapshot.groups].map((g) => ({
        name: g,
        max_concurrency: snapshot.groupConcurrency.get(g) ?? null,
        queue: queueView(snapshot.groupQueue.get(g)),
        inflight: deps.routing.groupInflight(g),
        waiting: deps.routing.waiting('group', g),
      })),
    },
  };
}
