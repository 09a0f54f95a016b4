/** `gateway tokens set-archive-days`: a token's retention in the result archive (docs/archive.md, "Retention"). */
import type { Operator } from '../records/audit.js';
import type { Store, TokenRecord } from '../store/store.js';
import { MAX_ARCHIVE_DAYS, setArchiveDays } from '../tokens/archive-days.js';
import { parseCommand, usageError, usageOf, type UsageEntry } from './args.js';

export const TOKEN_ARCHIVE_USAGE = {
  'set-archive-days': {
    synopsis: 'tokens set-archive-days <token> <N|default>',
    about: "keep the token's archived files N days (0: none), whatever its routes say; default: the route's or GATEWAY_ARCHIVE_KEEP_DAYS",
  },
} as const satisfies Record<string, UsageEntry>;

/** The command, for ./tokens-commands.ts's table. */
export function tokenArchiveCommand(h: {
  idOf(store: Store, ref: string): Promise<string>;
  cliOperator(store: Store): Operator;
}): [string, (args: string[]) => Promise<(store: Store) => Promise<TokenRecord | null>>] {
  return [
    'set-archive-days',
    async (args) => {
      const u = usageOf(TOKEN_ARCHIVE_USAGE['set-archive-days']);
      const [ref, raw] = parseCommand(args, u, {}, { required: ['token', 'N|default'] }).positionals as [string, string];
      const days = raw === 'default' ? null : Number(raw);
      if (days !== null && !(/^[0-9]{1,4}$/.test(raw) && days <= MAX_ARCHIVE_DAYS))
        throw usageError(`the days must be a whole number from 0 to ${MAX_ARCHIVE_DAYS}, or default; not '${raw.slice(0, 40)}'`, u);
      return async (store) => {
        const id = await h.idOf(store, ref);
        await setArchiveDays(h.cliOperator(store), id, days);
        process.stdout.write(`token ${id}: archived files kept ${days === null ? 'as the route or GATEWAY_ARCHIVE_KEEP_DAYS says' : `${days} day(s)`}\n`);
        // Nothing a replica caches changes: the copier reads it from the store.
        return null;
      };
    },
  ];
}
