/** What operators do to tokens, the same way from the CLI (`gateway tokens …`) and the admin routes. */
import type { NewToken, Store, TokenDeletion, TokenRecord } from '../store/store.js';
import { generateKey, hashKey } from './keys.js';

/** A token as operators see it: never its key, nor the key's hash. */
export interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly group: string;
  /** Null: every model of its group. */
  readonly models: readonly string[] | null;
  /** Null: unlimited. */
  readonly quota: number | null;
  readonly used: number;
  readonly disabled: boolean;
  /** Unix milliseconds. */
  readonly created_at: number;
  /** Requests per minute; null: no limit. */
  readonly rpm_limit: number | null;
  /** Requests in flight at once; null: no limit. */
  readonly max_parallel: number | null;
}

/** The operator's view of a token. */
export function tokenView(t: TokenRecord): TokenView {
  return {
    id: t.id,
    name: t.name,
    group: t.group,
    models: t.models,
    quota: t.quota,
    used: t.used,
    disabled: t.disabled,
    created_at: t.createdAt,
    rpm_limit: t.rpmLimit ?? null,
    max_parallel: t.maxParallel ?? null,
  };
}

/** Creates a token with a new key; the key is answered this once, only its hash is stored. */
export async function issueToken(store: Store, token: Omit<NewToken, 'keyHash'>): Promise<{ token: TokenRecord; key: string }> {
  const key = generateKey();
  return { token: await store.createToken({ ...token, keyHash: hashKey(key) }), key };
}

/** Why a token cannot be of `group` under the configuration's `groups`; null when it can. */
export function groupProblem(groups: ReadonlySet<string>, group: string): string | null {
  return groups.has(group) ? null : `group "${group.slice(0, 100)}" is not declared in channels.yaml (known: ${[...groups].join(', ')})`;
}

/** The largest rate limit a token may have: a bound for validation, far above any real use. */
export const MAX_RATE_LIMIT = 1_000_000;

/** Why a token was not deleted, in the operator's words. */
export function deletionProblem(id: string, d: Exclude<TokenDeletion, { outcome: 'deleted' }>): string {
  if (d.outcome === 'unknown') return `no token with id ${id.slice(0, 100)}`;
  const running = [d.unfinishedTasks > 0 ? `${d.unfinishedTasks} unfinished task(s)` : '', d.holds > 0 ? `${d.holds} request(s) in flight` : ''].filter(
    Boolean,
  );
  return `token ${id} still has ${running.join(' and ')}, whose refund or settlement needs it; disable it now, and delete it once they have ended`;
}
