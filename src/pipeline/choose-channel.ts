import { routeServesModel } from '../config/compile-routes.js';
import { channelsForModel, upstreamModelOf } from '../config/restrict.js';
import type { CompiledChannel, CompiledRoute, Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { TokenRecord } from '../store/store.js';

/** The channel chosen for a request and the model name to send upstream. */
export interface ChannelChoice {
  readonly channel: CompiledChannel;
  readonly upstreamModel: string;
}

/**
 * Picks a channel for a model: it must serve the model with a profile that defines the route's
 * operation and serve the token's group; among those the highest priority tier wins and a
 * weighted random draw picks inside it.
 */
export function chooseChannel(
  snapshot: Snapshot,
  route: CompiledRoute,
  model: string,
  token: TokenRecord,
  random: () => number = Math.random,
): ChannelChoice {
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
  let top = eligible[0]!.priority;
  for (const c of eligible) if (c.priority > top) top = c.priority;
  const tier = eligible.filter((c) => c.priority === top);
  const channel = tier.length === 1 ? tier[0]! : weighted(tier, random);
  return { channel, upstreamModel: upstreamModelOf(channel, model) };
}

function weighted(tier: readonly CompiledChannel[], random: () => number): CompiledChannel {
  const total = tier.reduce((s, c) => s + c.weight, 0);
  let r = random() * total;
  for (const c of tier) {
    r -= c.weight;
    if (r < 0) return c;
  }
  return tier[tier.length - 1]!;
}
