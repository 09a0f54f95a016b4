import { channelsForModel } from '../config/lookups.js';
import type { ModelRoute, Snapshot } from '../config/snapshot.js';
import type { ChannelChoice } from '../routing/rank-channels.js';
import type { RoutingState, Skip } from '../routing/routing-state.js';

/** Why a channel is passed over for a request, or not tried at all. */
type PassedOver = 'breaker_open' | 'saturated' | 'model_not_served' | 'operation_not_supported' | 'not_in_group' | 'left_out';

/** One channel as the playground lists it. */
interface ChannelView {
  readonly name: string;
  readonly profile: string;
  readonly priority: number | null;
  readonly weight: number | null;
  /** Ranked channels: the chance it is tried first among its priority tier (live calls draw by weight). */
  readonly share?: number;
  readonly upstream_model?: string;
  /** Null when the channel would be tried. */
  readonly passed_over: PassedOver | null;
  /** `breaker_open`: when a probe may go; `left_out`: disabled or unset_env. */
  readonly retry_at?: string;
  readonly reason?: string;
}

/**
 * Every channel for one request: first the ranked ones in the order they would be tried, each with
 * what would pass it over now (breaker open, saturated: looked at, never taken); then the channels
 * the request cannot go to and why; then those left out of the configuration. `chosen` is the
 * first ranked one not passed over, or null; `skips` say why the ranked ones before it were.
 */
export function channelsView(
  snapshot: Snapshot,
  route: ModelRoute,
  model: string,
  ranked: readonly ChannelChoice[],
  routing: RoutingState,
): { channels: ChannelView[]; chosen: string | null; skips: Skip[] } {
  const tierWeight = new Map<number, number>();
  for (const { channel: c } of ranked) tierWeight.set(c.priority, (tierWeight.get(c.priority) ?? 0) + c.weight);
  const skips: Skip[] = [];
  const out: ChannelView[] = ranked.map(({ channel: c, upstreamModel }) => {
    const skip = routing.peek(c);
    if (skip) skips.push(skip);
    const total = tierWeight.get(c.priority) ?? 0;
    return {
      name: c.name,
      profile: c.profile.name,
      priority: c.priority,
      weight: c.weight,
      share: total > 0 ? Math.round((c.weight / total) * 1000) / 1000 : 0,
      upstream_model: upstreamModel,
      passed_over: skip === null ? null : skip.reason === 'saturated' ? 'saturated' : 'breaker_open',
      ...(skip?.reason === 'open' ? { retry_at: new Date(skip.retryAt).toISOString() } : {}),
    };
  });
  const chosen = out.find((c) => c.passed_over === null)?.name ?? null;
  const serving = new Set(channelsForModel(snapshot, model));
  const placed = new Set(ranked.map((r) => r.channel.name));
  for (const c of snapshot.channels) {
    if (placed.has(c.name)) continue;
    const why: PassedOver = !serving.has(c) ? 'model_not_served' : !c.profile.operations.has(route.operation) ? 'operation_not_supported' : 'not_in_group';
    out.push({ name: c.name, profile: c.profile.name, priority: c.priority, weight: c.weight, passed_over: why });
  }
  for (const c of snapshot.leftOut) out.push({ name: c.name, profile: c.profile, priority: null, weight: null, passed_over: 'left_out', reason: c.reason });
  return { channels: out, chosen, skips };
}
