import type { RouteArchive } from './snapshot.js';

/** `archive` as routes.schema.json admits it: a switch, or how many days the route's files are kept. */
export type RawRouteArchive = boolean | { keep_days?: number };

/**
 * A route's `archive` (docs/archive.md), compiled: null when it says nothing; `false` is kept for
 * 0 days (never archived), `true` and `{}` for the default. Only routes that make files have one:
 * a task-submit route (its tasks' results) and a sync route that hands out links.
 */
export function compileRouteArchive(
  r: { kind: string; archive?: RawRouteArchive; pass_vendor_url?: boolean },
  report: (at: (string | number)[], msg: string) => void,
): RouteArchive | null {
  const a = r.archive;
  if (a === undefined) return null;
  if (r.kind !== 'sync' && r.kind !== 'task-submit') {
    report(['archive'], `a ${r.kind} route makes no files to archive; archive belongs on task-submit and sync routes`);
    return null;
  }
  if (r.kind === 'sync' && r.pass_vendor_url === true && a !== false) {
    report(['archive'], 'a route that passes vendor URLs (pass_vendor_url: true) hands out no links whose files could be archived');
    return null;
  }
  if (typeof a === 'boolean') return Object.freeze({ keepDays: a ? null : 0 });
  return Object.freeze({ keepDays: a.keep_days ?? null });
}
