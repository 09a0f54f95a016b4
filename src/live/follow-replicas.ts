import type { ConfigControl } from '../config/config-control.js';
import type { Snapshot } from '../config/snapshot.js';
import type { ReplicaStatus, SharedLive } from './shared-live.js';

/** The key lookups a replica caches (src/pipeline/authenticate.ts's Authenticator), as told to forget them. */
export interface KeyCache {
  forget(keyHash: string): void;
  clear(): void;
}

/** What a replica is, as it announces itself. */
export interface ReplicaSelf {
  readonly config: ConfigControl | null;
  /** Its name (the task lease owner), or `local`. */
  readonly replica: string;
  readonly snapshot: () => Snapshot;
}

/**
 * What this replica hears from the others and tells them (docs/deploying.md, "Running several replicas"):
 * a token change makes it forget the key's cached lookup, a reload request reloads its files, and
 * after Redis was away it trusts no cached lookup; `self` is the status it announces.
 */
export function followReplicas(shared: SharedLive, auth: KeyCache, me: ReplicaSelf) {
  shared.onEvent((e) => {
    if (e.t === 'token') auth.forget(e.keyHash);
    else if (e.t === 'reload' && me.config) void me.config.reload('another replica');
  });
  shared.onResync(() => auth.clear());
  return {
    self: (): Omit<ReplicaStatus, 'seenAt'> => {
      const status = me.config?.status();
      const snapshot = me.snapshot();
      return {
        replica: me.replica,
        generation: status?.generation ?? 1,
        version: snapshot.version,
        loadedAt: snapshot.loadedAt.toISOString(),
        lastReloadOk: status?.lastReload ? status.lastReload.ok : null,
      };
    },
    tokenChanged(keyHash: string): void {
      auth.forget(keyHash);
      shared.publish({ t: 'token', keyHash });
    },
  };
}
