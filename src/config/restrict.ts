import type { CompiledChannel, Snapshot } from './snapshot.js';

/** Public model name → the channels that serve it, in channel order: the snapshot's lookup table. */
export function indexByModel(channels: readonly CompiledChannel[]): Map<string, CompiledChannel[]> {
  const byModel = new Map<string, CompiledChannel[]>();
  for (const ch of channels) {
    for (const model of ch.models.keys()) {
      const list = byModel.get(model) ?? [];
      list.push(ch);
      byModel.set(model, list);
    }
  }
  return byModel;
}

/** A snapshot with only the channels that pass `keep` (golden runs pin one profile this way). */
export function restrictChannels(snapshot: Snapshot, keep: (c: CompiledChannel) => boolean): Snapshot {
  const channels = snapshot.channels.filter(keep);
  return Object.freeze({ ...snapshot, channels: Object.freeze(channels), channelsByModel: indexByModel(channels) });
}
