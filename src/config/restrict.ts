import type { CompiledChannel, Snapshot } from './snapshot.js';

/** A snapshot with only the channels that pass `keep` (golden runs pin one profile this way). */
export function restrictChannels(snapshot: Snapshot, keep: (c: CompiledChannel) => boolean): Snapshot {
  const channels = snapshot.channels.filter(keep);
  const byModel = new Map<string, CompiledChannel[]>();
  for (const ch of channels) {
    for (const model of ch.models.keys()) byModel.set(model, [...(byModel.get(model) ?? []), ch]);
  }
  return Object.freeze({ ...snapshot, channels: Object.freeze(channels), channelsByModel: byModel });
}
