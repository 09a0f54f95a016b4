import type { CompiledChannel, Snapshot } from './snapshot.js';

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

/** A snapshot with only the channels that pass `keep` (golden runs pin one profile this way). */
export function restrictChannels(snapshot: Snapshot, keep: (c: CompiledChannel) => boolean): Snapshot {
  const channels = snapshot.channels.filter(keep);
  return Object.freeze({ ...snapshot, channels: Object.freeze(channels), ...indexChannels(channels) });
}
