/** Forgets the oldest (first inserted) entry of a Map or Set. */
export function dropOldest<K>(store: { keys(): Iterator<K>; delete(key: K): boolean }): void {
  const oldest = store.keys().next();
  if (!oldest.done) store.delete(oldest.value);
}
