/**
 * The read side of the snapshot: the lookups the running engine makes in it. The compilers build
 * the snapshot; everything outside config/ reads it through these and the types of snapshot.ts.
 */
import type { CompiledChannel, CompiledFamily, CompiledOperation, CompiledRoute, ModelRoute, ModelSet, Snapshot } from './snapshot.js';

/** Polling of a channel that says nothing (docs/channels-yaml.md, `polling`); also the poller's fallback. */
export const DEFAULT_POLLING = { intervalMs: 5_000, concurrency: 16, deadlineMs: 2 * 3600_000, staleMs: 2_000, lostAfterMs: 10 * 60_000 };

/** Whether a route calls a profile operation for a model (`sync`, `task-submit`): it has models, an operation and a mode. */
export function isModelRoute(route: CompiledRoute): route is ModelRoute {
  return route.kind === 'sync' || route.kind === 'task-submit';
}

/** Whether a route serves a public model name (exactly or by prefix pattern). */
export function routeServesModel(route: { readonly models: ModelSet }, model: string): boolean {
  return route.models.exact.has(model) || route.models.prefixes.some((p) => model.startsWith(p));
}

/** The family of a public model: the one naming it exactly, else the one with the longest matching prefix. */
export function familyOf(families: readonly CompiledFamily[], model: string): CompiledFamily | null {
  let best: CompiledFamily | null = null;
  let bestLen = -1;
  // Indexed loops: for-of made an iterator and a result object per family, about 0.8 KB a request (issue 41).
  for (let i = 0; i < families.length; i++) {
    const f = families[i] as CompiledFamily;
    if (f.models.exact.has(model)) return f;
    const prefixes = f.models.prefixes;
    for (let j = 0; j < prefixes.length; j++) {
      const p = prefixes[j] as string;
      if (model.startsWith(p) && p.length > bestLen) {
        best = f;
        bestLen = p.length;
      }
    }
  }
  return best;
}

/** The snapshot's channel lookup tables: by exact model name, by model prefix, and by name. */
export function indexChannels(channels: readonly CompiledChannel[]): Pick<Snapshot, 'channelsByModel' | 'channelsByPrefix' | 'channelsByName'> {
  const byModel = new Map<string, CompiledChannel[]>();
  const byPrefix: { prefix: string; channel: CompiledChannel }[] = [];
  for (const ch of channels) {
    for (const model of ch.models.keys()) {
      const list = byModel.get(model) ?? [];
      list.push(ch);
      byModel.set(model, list);
    }
    for (const prefix of ch.modelPrefixes) byPrefix.push({ prefix, channel: ch });
  }
  return {
    channelsByModel: byModel,
    channelsByPrefix: Object.freeze(byPrefix),
    channelsByName: new Map(channels.map((c) => [c.name, c])),
  };
}

/**
 * The channels that serve a public model: those naming it exactly; only when there are none,
 * those whose prefix pattern matches it (a named model is more specific than a pattern).
 */
export function channelsForModel(snapshot: Snapshot, model: string): readonly CompiledChannel[] {
  const exact = snapshot.channelsByModel.get(model);
  if (exact && exact.length > 0) return exact;
  const out: CompiledChannel[] = [];
  for (const { prefix, channel } of snapshot.channelsByPrefix) if (model.startsWith(prefix) && !out.includes(channel)) out.push(channel);
  return out;
}

/** The name the vendor knows a public model by on a channel (patterns keep the client's name). */
export function upstreamModelOf(channel: CompiledChannel, model: string): string {
  return channel.models.get(model) ?? model;
}

/**
 * The operation `name` of a channel's profile, when it serves `model` there: the operation's
 * `models` (the vendor's names) include the model as the channel sends it, or it lists none.
 */
export function operationServing(channel: CompiledChannel, name: string, model: string): CompiledOperation | undefined {
  const op = channel.profile.operations.get(name);
  if (!op || (op.models !== null && !routeServesModel({ models: op.models }, upstreamModelOf(channel, model)))) return undefined;
  return op;
}

/** A snapshot with only the channels that pass `keep` (golden runs pin one profile this way). */
export function restrictChannels(snapshot: Snapshot, keep: (c: CompiledChannel) => boolean): Snapshot {
  const channels = snapshot.channels.filter(keep);
  return Object.freeze({ ...snapshot, channels: Object.freeze(channels), ...indexChannels(channels) });
}
