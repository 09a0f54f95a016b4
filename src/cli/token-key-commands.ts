/**
 * `gateway tokens rename|rotate|set-ips`: names, key rotation and IP allow-lists of tokens
 * (docs/tokens-and-quota.md, "Names and rotation", "IP allow-list"), beside ./tokens-commands.ts,
 * whose helpers they are handed.
 */
import type { Operator } from '../records/audit.js';
import { type Store, TokenNameTaken, type TokenRecord } from '../store/store.js';
import { allowListProblem, MAX_ALLOWED_IPS } from '../tokens/ip-allow.js';
import { renameToken, rotateKey, setAllowedIps } from '../tokens/manage-tokens.js';
import { GRACE_FORM, parseGrace } from '../tokens/rotation.js';
import { nameProblem, unknownToken } from '../tokens/token-ref.js';
import { CliExit, parseCommand, usageError, usageOf, type UsageEntry } from './args.js';

/** The forms of these commands, for the usage texts. */
export const TOKEN_KEY_USAGE = {
  rename: { synopsis: 'tokens rename <token> <new-name>', about: 'rename a token (names are unique)' },
  rotate: {
    synopsis: 'tokens rotate <token> [--grace D]',
    about: 'give the token a new key (printed once on stdout); the old key works for --grace\n(30s, 15m, 24h, 7d; at most 30d; default 0: it stops now)',
  },
  'set-ips': {
    synopsis: 'tokens set-ips <token> <CIDR>…|any',
    about: 'set the addresses or CIDR blocks the token may be used from (at most 100); any: anywhere',
  },
} as const satisfies Record<string, UsageEntry>;

/** What a command acts with: the helpers of ./tokens-commands.ts. */
export interface TokenCommandHelpers {
  idOf(store: Store, ref: string): Promise<string>;
  printed(t: TokenRecord): TokenRecord;
  cliOperator(store: Store): Operator;
}

type Act = (store: Store) => Promise<TokenRecord | readonly TokenRecord[] | null>;

/** A name another token has: a failure (exit 1), saying names are unique. */
export function nameTakenExit(err: unknown): never {
  if (err instanceof TokenNameTaken) throw new CliExit(`${err.message}; token names are unique`, 1);
  throw err;
}

/** An allow-list given on the command line (`--allow-ip`, `set-ips`), or a usage error naming the bad entry. */
export function allowList(entries: readonly string[], what: string, usage: string): readonly string[] {
  const problem = allowListProblem(entries);
  if (problem) throw usageError(`${what}: ${problem}`, usage);
  return [...new Set(entries)];
}

/** The subcommands, for ./tokens-commands.ts's table. */
export function tokenKeyCommands(h: TokenCommandHelpers): [string, (args: string[]) => Promise<Act>][] {
  return [
    [
      'rename',
      async (args) => {
        const u = usageOf(TOKEN_KEY_USAGE.rename);
        const [ref, name] = parseCommand(args, u, {}, { required: ['token', 'new-name'] }).positionals as [string, string];
        const problem = nameProblem(name);
        if (problem) throw usageError(problem, u);
        return async (store) => {
          const renamed = await renameToken(h.cliOperator(store), await h.idOf(store, ref), name).catch(nameTakenExit);
          if (!renamed) throw new CliExit(unknownToken(ref), 1);
          return h.printed(renamed);
        };
      },
    ],
    [
      'rotate',
      async (args) => {
        const u = usageOf(TOKEN_KEY_USAGE.rotate);
        const { values, positionals } = parseCommand(args, u, { grace: { type: 'string' } }, { required: ['token'] });
        const [ref = ''] = positionals;
        const graceMs = values.grace === undefined ? 0 : parseGrace(values.grace);
        if (graceMs === null) throw usageError(`--grace takes ${GRACE_FORM}, not '${(values.grace ?? '').slice(0, 100)}'`, u);
        return async (store) => {
          const rotated = await rotateKey(h.cliOperator(store), await h.idOf(store, ref), graceMs);
          if (!rotated) throw new CliExit(unknownToken(ref), 1);
          const { token, key } = rotated;
          const old = graceMs === 0 ? 'the old key stopped working now' : `the old key works until ${new Date(token.previousKeyExpiresAt ?? 0).toISOString()}`;
          process.stderr.write(`rotated the key of token ${token.id} (${token.name}); ${old}; the new key is shown once:\n`);
          process.stdout.write(`${key}\n`);
          return [rotated.before, token];
        };
      },
    ],
    [
      'set-ips',
      async (args) => {
        const u = usageOf(TOKEN_KEY_USAGE['set-ips']);
        // One more than may be given, so that too many is said as such rather than as an unexpected argument.
        const optional = Array.from({ length: MAX_ALLOWED_IPS }, () => 'CIDR');
        const [ref = '', ...entries] = parseCommand(args, u, {}, { required: ['token', 'CIDR…|any'], optional }).positionals;
        const list = entries.length === 1 && entries[0] === 'any' ? null : allowList(entries, 'the allow-list', u);
        return async (store) => {
          const changed = await setAllowedIps(h.cliOperator(store), await h.idOf(store, ref), list);
          if (!changed) throw new CliExit(unknownToken(ref), 1);
          return h.printed(changed);
        };
      },
    ],
  ];
}
