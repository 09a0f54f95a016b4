import { channelsForModel, isModelRoute, operationServing, routeServesModel } from '../config/lookups.js';
import type { ModelRoute, Snapshot } from '../config/snapshot.js';
import type { TokenRecord } from '../store/store.js';

/**
 * The models a token may use (GET /v1/models), by the rules rankChannels applies to a request, so
 * that a model listed is one a request would be routed for, and one left out is refused.
 */

/** Routes whose client names a model (a path or body field): a route with a fixed model takes none. */
function namingRoutes(snapshot: Pick<Snapshot, 'routes'>): ModelRoute[] {
  return snapshot.routes.filter(isModelRoute).filter((r) => r.model !== null && r.model.from !== 'value');
}

/**
 * Whether the token may use `model` on some route: the token's `models` allow it, and a channel
 * that serves it (by exact name, else by pattern, as for routing) is in the token's group and
 * defines the operation of a route that takes it. Channels left out of the snapshot serve nothing.
 */
export function mayUseModel(snapshot: Snapshot, token: Pick<TokenRecord, 'group' | 'models'>, model: string): boolean {
  if (token.models && !token.models.includes(model)) return false;
  const channels = channelsForModel(snapshot, model).filter((c) => c.groups.has(token.group));
  if (channels.length === 0) return false;
  return namingRoutes(snapshot).some((r) => routeServesModel(r, model) && channels.some((c) => operationServing(c, r.operation, model) !== undefined));
}

/**
 * Every model name the token may use that can be named: the exact names of channels and routes,
 * and those of the token's own `models`; a pattern (`GV-*`) has no names to list. Sorted, so the
 * answer is the same on every replica and every call.
 */
export function availableModels(snapshot: Snapshot, token: Pick<TokenRecord, 'group' | 'models'>): string[] {
  const names = new Set<string>(token.models ?? []);
  for (const c of snapshot.channels) for (const m of c.models.keys()) names.add(m);
  for (const r of namingRoutes(snapshot)) for (const m of r.models.exact) names.add(m);
  // A token's list may hold a pattern by mistake: only a name is a model one can ask for.
  return [...names].filter((m) => !m.endsWith('*') && mayUseModel(snapshot, token, m)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
