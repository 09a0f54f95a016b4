import { channelsForModel, operationServing, routeServesModel, upstreamModelOf } from '../config/lookups.js';
import type { CompiledChannel, CompiledOperation, ModelRoute, Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { TokenRecord } from '../store/store.js';

/** A channel a request may go to, the model name to send it, and the operation of its profile that serves the route. */
export interface ChannelChoice {
  readonly channel: CompiledChannel;
  readonly upstreamModel: string;
  readonly operation: CompiledOperation;
}

/** A channel that serves a route's operation, and that operation. */
interface Serving {
  readonly channel: CompiledChannel;
  readonly operation: CompiledOperation;
}

/** What ranking reads of the token: its group, and the models it may use (null: every one). */
export type RankedFor = Pick<TokenRecord, 'group' | 'models'>;

/**
 * The channels that may serve a request, in the order to try them. Eligible: see
 * `eligibleChannels`. Order: higher priority tiers first; inside a tier a weighted random order
 * (each place drawn by weight among the channels not yet placed), so the first choice follows the
 * weights and a fallback spreads the same way.
 */
export function rankChannels(
  snapshot: Snapshot,
  route: ModelRoute,
  model: string,
  token: RankedFor,
  random: () => number = Math.random,
  operation: string = route.operation,
): ChannelChoice[] {
  return inTiers(eligibleChannels(snapshot, route, model, token, operation), model, random);
}

/**
 * The order `rankChannels` draws most often, drawing nothing: priority tiers first, the heaviest
 * channel first inside a tier (declaration order between equal weights). For looks that must not
 * depend on chance (the admin playground).
 */
export function likeliestOrder(snapshot: Snapshot, route: ModelRoute, model: string, token: RankedFor): ChannelChoice[] {
  return inTiers(eligibleChannels(snapshot, route, model, token, route.operation), model, null);
}

/**
 * The channels that may serve a request, in declaration order: the channel serves the model
 * (exactly, or by pattern when none names it), its profile defines the operation (the route's, or
 * its stream's) for that model, and it serves the token's group. None is the client's error:
 * `model_not_found` or `model_not_allowed`.
 */
function eligibleChannels(snapshot: Snapshot, route: ModelRoute, model: string, token: RankedFor, name: string): readonly Serving[] {
  // The list depends on the snapshot, the route, the operation, the model and the group only: kept
  // per snapshot for the models a route names (a bounded set; a pattern's models are the
  // client's to invent), after the token's own check. Issue 41: a few arrays and objects a request.
  if (token.models && !token.models.includes(model)) return eligibleNow(snapshot, route, model, token, name);
  const exact = route.models.exact.has(model);
  if (!exact) return eligibleNow(snapshot, route, model, token, name);
  const byKey = keptFor(snapshot, route, name, token.group);
  let list = byKey.get(model);
  if (!list) {
    list = Object.freeze(eligibleNow(snapshot, route, model, token, name));
    byKey.set(model, list);
  }
  return list;
}

/** Eligible lists kept per snapshot, route, operation and group, by model. */
const kept = new WeakMap<Snapshot, Map<ModelRoute, Map<string, Map<string, Map<string, readonly Serving[]>>>>>();
function keptFor(snapshot: Snapshot, route: ModelRoute, operation: string, group: string): Map<string, readonly Serving[]> {
  let byRoute = kept.get(snapshot);
  if (!byRoute) kept.set(snapshot, (byRoute = new Map()));
  let byOperation = byRoute.get(route);
  if (!byOperation) byRoute.set(route, (byOperation = new Map()));
  let byGroup = byOperation.get(operation);
  if (!byGroup) byOperation.set(operation, (byGroup = new Map()));
  let byModel = byGroup.get(group);
  if (!byModel) byGroup.set(group, (byModel = new Map()));
  return byModel;
}

/** `eligibleChannels` worked out now. */
function eligibleNow(snapshot: Snapshot, route: ModelRoute, model: string, token: RankedFor, name: string): Serving[] {
  if (!routeServesModel(route, model)) {
    throw new GatewayError('model_not_found', `model ${JSON.stringify(model.slice(0, 200))} is not served on this route`, { param: 'model' });
  }
  if (token.models && !token.models.includes(model)) {
    throw new GatewayError('model_not_allowed', `this API key may not use model ${model}`, { param: 'model' });
  }
  const serving: Serving[] = [];
  for (const channel of channelsForModel(snapshot, model)) {
    const operation = operationServing(channel, name, model);
    if (operation) serving.push({ channel, operation });
  }
  if (serving.length === 0) {
    throw new GatewayError('model_not_found', `no channel is configured for model ${model}`, { param: 'model' });
  }
  const eligible = serving.filter((s) => s.channel.groups.has(token.group));
  if (eligible.length === 0) {
    throw new GatewayError('model_not_allowed', `model ${model} is not available to this API key's group`, { param: 'model' });
  }
  return eligible;
}

/** Priority tiers, highest first; inside one, places drawn by weight with `random`, or heaviest first when null. */
function inTiers(eligible: readonly Serving[], model: string, random: (() => number) | null): ChannelChoice[] {
  // One channel: one tier of one, drawn without drawing (what the loop below gives, without its sets and arrays).
  if (eligible.length === 1) {
    const { channel, operation } = eligible[0] as Serving;
    return [{ channel, upstreamModel: upstreamModelOf(channel, model), operation }];
  }
  const tiers = [...new Set(eligible.map((s) => s.channel.priority))].sort((a, b) => b - a);
  const out: ChannelChoice[] = [];
  for (const p of tiers) {
    const tier = eligible.filter((s) => s.channel.priority === p);
    while (tier.length > 0) {
      const i = tier.length === 1 ? 0 : random ? weightedIndex(tier, random) : heaviestIndex(tier);
      for (const { channel, operation } of tier.splice(i, 1)) out.push({ channel, upstreamModel: upstreamModelOf(channel, model), operation });
    }
  }
  return out;
}

function heaviestIndex(tier: readonly Serving[]): number {
  let best = 0;
  let most = -Infinity;
  let i = 0;
  for (const s of tier) {
    if (s.channel.weight > most) {
      best = i;
      most = s.channel.weight;
    }
    i++;
  }
  return best;
}

function weightedIndex(tier: readonly Serving[], random: () => number): number {
  const total = tier.reduce((sum, s) => sum + s.channel.weight, 0);
  let r = random() * total;
  let i = 0;
  for (const s of tier) {
    r -= s.channel.weight;
    if (r < 0) return i;
    i++;
  }
  return tier.length - 1;
}
