import type { Store } from '../store/store.js';

/**
 * The names of the tokens a page of admin records refers to, so an answer can carry a token's
 * name beside its id (the console shows names, not ids). One lookup per distinct id: a page holds
 * at most a few hundred records and far fewer tokens. A deleted token has no entry.
 */
export async function tokenNames(store: Store, ids: Iterable<string | null>): Promise<ReadonlyMap<string, string>> {
  const distinct = [...new Set([...ids].filter((id): id is string => id !== null))];
  const found = await Promise.all(distinct.map((id) => store.getToken(id)));
  return new Map(found.flatMap((t) => (t ? [[t.id, t.name] as const] : [])));
}
