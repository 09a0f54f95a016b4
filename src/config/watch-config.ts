import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';

/**
 * Watches the files a configuration is read from (config-files.ts): `routes.yaml`, `channels.yaml`
 * and the `routes.d/` and `channels.d/` fragments of every config directory. Directories are
 * watched, not files, because editors save by writing a new file and renaming it over the old one,
 * which a watch on the file itself would lose. A burst of events (one save is several; a deploy
 * writes many files) gives one call, `debounceMs` after the last event, and at most `maxWaitMs`
 * after the first, so a file rewritten without pause still reloads.
 */

/** How a watch reports and how long it waits. */
export interface WatchOptions {
  readonly debounceMs: number;
  /** Longest wait after the first event of a burst; default 10 × debounceMs. */
  readonly maxWaitMs?: number;
  readonly log: Logger;
}

/** A running watch. */
export interface ConfigWatcher {
  /** Whether a change was seen and the call is still to come. */
  readonly pending: boolean;
  close(): void;
}

const FRAGMENT_DIRS = new Set(['routes.d', 'channels.d']);
const MAIN_FILES = new Set(['routes.yaml', 'channels.yaml']);
/**
 * A Kubernetes ConfigMap volume updates by swapping this symlink (the files are links through it),
 * so no event names the files themselves.
 */
const SWAPPED_LINK = '..data';

/**
 * Whether a change of `name` in a watched directory concerns the configuration: in a config
 * directory (`sub` null) the two main files, the fragment directories themselves and a swapped
 * `..data` link (Kubernetes); in a fragment directory its `*.yaml` / `*.yml` files. Editors'
 * backups and swap files (`channels.yaml~`, `.channels.yaml.swp`) do not. A null name (the
 * platform did not say) counts.
 */
export function concernsConfig(sub: string | null, name: string | null): boolean {
  if (name === null) return true;
  if (sub === null) return MAIN_FILES.has(name) || FRAGMENT_DIRS.has(name) || name === SWAPPED_LINK;
  return !name.startsWith('.') && (name.endsWith('.yaml') || name.endsWith('.yml'));
}

/** Watches `dirs` and calls `onChange` once per burst of changes to their config files. */
export function watchConfig(dirs: readonly string[], onChange: () => void, opts: WatchOptions): ConfigWatcher {
  const maxWaitMs = opts.maxWaitMs ?? opts.debounceMs * 10;
  const watchers = new Map<string, FSWatcher>();
  let timer: NodeJS.Timeout | null = null;
  let firstAt = 0;
  let closed = false;

  const fire = () => {
    timer = null;
    if (!closed) onChange();
  };
  const changed = () => {
    if (closed) return;
    const now = Date.now();
    if (timer === null) {
      firstAt = now;
      timer = setTimeout(fire, opts.debounceMs);
    } else if (now - firstAt + opts.debounceMs <= maxWaitMs) {
      timer.refresh();
    }
  };

  /** Starts (or restarts) a watch on one directory; a directory that is absent is skipped quietly. */
  const attach = (path: string, sub: string | null, dir: string) => {
    watchers.get(path)?.close();
    watchers.delete(path);
    let w: FSWatcher;
    try {
      w = watch(path, { persistent: false }, (_event, name) => {
        const file = name === null ? null : String(name);
        if (!concernsConfig(sub, file)) return;
        // A fragment directory made (or replaced, or swapped with the others) after the start is watched from now on.
        if (sub === null && file !== null && FRAGMENT_DIRS.has(file)) attach(join(dir, file), file, dir);
        if (sub === null && file === SWAPPED_LINK) for (const f of FRAGMENT_DIRS) attach(join(dir, f), f, dir);
        changed();
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        opts.log.warn({ dir: path, err: (err as Error).message }, 'cannot watch a config directory; reload with SIGHUP or POST /admin/reload');
      return;
    }
    // A watched directory that disappears ends its watch with an error; that must not end the process.
    w.on('error', () => {
      w.close();
      if (watchers.get(path) === w) watchers.delete(path);
      changed();
    });
    watchers.set(path, w);
  };

  for (const dir of dirs) {
    attach(dir, null, dir);
    for (const sub of FRAGMENT_DIRS) attach(join(dir, sub), sub, dir);
  }

  return {
    get pending() {
      return timer !== null;
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
