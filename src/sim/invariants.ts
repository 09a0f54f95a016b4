/**
 * What a simulator's own logic guarantees, said once: a value that must be there, a capture group
 * its pattern always fills, and the bound of its small maps. A broken guarantee is a simulator bug,
 * so it throws a clear Error instead of a TypeError further on. A module of its own because every
 * simulator file uses it, the task book included, which http.ts itself imports.
 */

/** `value`, which the simulator's own logic guarantees is there; a broken guarantee is a simulator bug, so it throws. */
export function must<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`simulator invariant broken: no ${what}`);
  return value;
}

/** Capture group `i` of a match, for a group its pattern always fills. */
export function group(match: RegExpExecArray, i: number): string {
  const value = match[i];
  if (value === undefined) throw new Error(`simulator invariant broken: no group ${i} in match ${JSON.stringify(match[0])}`);
  return value;
}

/** Forgets the oldest (first inserted) entry of a Map or Set. */
export function dropOldest<K>(store: { keys(): Iterator<K>; delete(key: K): boolean }): void {
  const oldest = store.keys().next();
  if (!oldest.done) store.delete(oldest.value);
}
