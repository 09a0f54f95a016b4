import type { ConfigIssue } from './issues.js';
import type { Snapshot } from './snapshot.js';

/** What became of one reload: the snapshot swapped (ok) or the old one kept serving (issues say why). */
export interface ReloadOutcome {
  readonly ok: boolean;
  /** Generation serving after the attempt (unchanged when it failed). */
  readonly generation: number;
  readonly issues: readonly ConfigIssue[];
  /** Milliseconds the build took. */
  readonly ms: number;
}

/** The state of the configuration, for `GET /admin/config`. */
export interface ConfigStatus {
  readonly generation: number;
  /** The serving snapshot's version (a digest of its files). */
  readonly version: string;
  /** When the serving snapshot was built. */
  readonly loadedAt: Date;
  /** The last reload attempt; null before any. A failed one keeps its issues until a reload succeeds. */
  readonly lastReload: {
    readonly at: Date;
    readonly ok: boolean;
    readonly reason: string;
    readonly ms: number;
    readonly issues: readonly ConfigIssue[];
  } | null;
  /** Directories read (the config directory and GATEWAY_CONFIG_EXTRA). */
  readonly dirs: readonly string[];
  /** Whether file changes are watched. */
  readonly watching: boolean;
}

/** What the admin routes may do with the configuration; src/config/live-config.ts implements it. */
export interface ConfigControl {
  /** Builds a new snapshot from the files and swaps it in only if it compiles. */
  reload(reason: string): Promise<ReloadOutcome>;
  status(): ConfigStatus;
  /** The snapshot serving now. */
  current(): Snapshot;
}
