import type { Snapshot } from '../config/snapshot.js';
import type { TokenRecord } from '../store/store.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

/** One token group as operators see it (GET /admin/groups, `gateway groups`, the console's Channels page). */
export interface GroupView {
  readonly name: string;
  /** False for a group tokens still name but channels.yaml no longer declares: their requests are refused. */
  readonly declared: boolean;
  /** The rate limits its keys share (channels.yaml `groups.<name>.limits`); null: none. */
  readonly limits: { readonly rpm: number | null; readonly max_parallel: number | null } | null;
  /** The most requests of its tokens in flight at once (`groups.<name>.max_concurrency`); null: no limit. */
  readonly max_concurrency: number | null;
  /** The channels that serve it, in channels.yaml's order. */
  readonly channels: readonly string[];
  /** Its tokens: all, and those not disabled and not expired at `now`. */
  readonly tokens: { readonly total: number; readonly active: number };
}

/**
 * Every group of the snapshot, in channels.yaml's order, with its limits, channels and how many
 * tokens it has; then, by name, any group only tokens name (left in the store after a reload
 * dropped it), so none is hidden.
 */
export function groupsView(snapshot: Snapshot, tokens: readonly TokenRecord[], now: number): GroupView[] {
  const counts = new Map<string, { total: number; active: number }>();
  for (const t of tokens) {
    const c = counts.get(t.group) ?? { total: 0, active: 0 };
    c.total++;
    if (!t.disabled && (t.expiresAt == null || t.expiresAt > now)) c.active++;
    counts.set(t.group, c);
  }
  const declared = [...snapshot.groups].map((name): GroupView => {
    const l = snapshot.groupLimits.get(name);
    return {
      name,
      declared: true,
      limits: l ? { rpm: l.rpm, max_parallel: l.maxParallel } : null,
      max_concurrency: snapshot.groupConcurrency.get(name) ?? null,
      channels: snapshot.channels.filter((c) => c.groups.has(name)).map((c) => c.name),
      tokens: counts.get(name) ?? { total: 0, active: 0 },
    };
  });
  const orphans = [...counts]
    .filter(([g]) => !snapshot.groups.has(g))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, tokens]): GroupView => ({ name, declared: false, limits: null, max_concurrency: null, channels: [], tokens }));
  return [...declared, ...orphans];
}

/**
 * `GET /admin/groups`: every token group with the limits its keys share, its concurrency bound,
 * its channels and its token counts, plus this replica's requests of it in flight. Reads the token
 * list once (an operator's question, not the request path).
 */
export async function groupsReport({ snapshot, deps }: AdminContext): Promise<AdminAnswer> {
  const tokens = await deps.store.listTokens();
  return {
    json: {
      groups: groupsView(snapshot, tokens, Date.now()).map((g) => ({
        ...g,
        inflight: deps.routing.groupInflight(g.name),
        waiting: deps.routing.waiting('group', g.name),
      })),
    },
  };
}
