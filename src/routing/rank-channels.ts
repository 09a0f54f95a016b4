import { channelsForModel, routeServesModel, upstreamModelOf } from '../config/lookups.js';
import type { CompiledChannel, CompiledRoute, Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { TokenRecord } from '../store/store.js';

/** A channel a request may go to, and the model name to send it. */
export interface ChannelChoice {
  readonly channel: CompiledChannel;
  readonly upstreamModel: string;
}

/**
 * The channels that may serve a request, in the order to try them. Eligible: the channel serves
 * the model (exactly, or by pattern when none names it), its profile defines the route's
 * operation, and it serves the token's group. Order: higher priority tiers first; inside a tier a
 * weighted random order (each place drawn by weight among the channels not yet placed), so the
 * first choice follows the weights and a fallback spreads the same way.
 */
export function rankChannels(
  snapshot: Snapshot,
  route: CompiledRoute,
  model: string,
  token: TokenRecord,
  random: () => number = Math.random,
): ChannelChoice[] {
  if (!routeServesModel(route, model)) {
    throw new GatewayError('model_not_found', `model ${JSON.stringify(model.slice(0, 200))} is not served on this route`, { param: 'model' });
  }
  if (token.models && !token.models.includes(model)) {
    throw new GatewayError('model_not_allowed', `this API key may not use model ${model}`, { param: 'model' });
  }
  const serving = channelsForModel(snapshot, model).filter((c) => c.profile.operations.has(route.operation));
  if (serving.length === 0) {
    throw new GatewayError('model_not_found', `no channel is configured for model ${model}`, { param: 'model' });
  }
  const eligible = serving.filter((c) => c.groups.has(token.group));
  if (eligible.length === 0) {
    throw new GatewayError('model_not_allowed', `model ${model} is not available to this API key's group`, { param: 'model' });
  }
  const tiers = [...new Set(eligible.map((c) => c.priority))].sort((a, b) => b - a);
  const out: ChannelChoice[] = [];
  for (const p of tiers) {
    const tier = eligible.filter((c) => c.priority === p);
    while (tier.length > 0) {
      const i = tier.length === 1 ? 0 : weightedIndex(tier, random);
      const channel = tier.splice(i, 1)[0]!;
      out.push({ channel, upstreamModel: upstreamModelOf(channel, model) });
    }
  }
  return out;
}

function weightedIndex(tier: readonly CompiledChannel[], random: () => number): number {
  const total = tier.reduce((s, c) => s + c.weight, 0);
  let r = random() * total;
  for (let i = 0; i < tier.length; i++) {
    r -= tier[i]!.weight;
    if (r < 0) return i;
  }
  return tier.length - 1;
}
