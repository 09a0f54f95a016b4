/** `gateway tokens …`: API tokens in the store of GATEWAY_DB (SQLite or PostgreSQL), for operators. */
import type { Store, TokenRecord } from '../store/store.js';
import { CLI_ACTOR, type Operator } from '../records/audit.js';
import {
  BUDGET_NEEDS_PERIOD,
  deletionProblem,
  groupProblem,
  issueToken,
  MAX_RATE_LIMIT,
  removeToken,
  setDisabled,
  setBudget,
  setExpiry,
  setLimits,
  setQuota,
  tokenView,
} from '../tokens/manage-tokens.js';
import { type BudgetPeriod, PERIOD_FORM, parseBudgetPeriod } from '../store/budget-period.js';
import { tokenBudgetAt } from '../store/store.js';
import { EXPIRY_FORM, expiryView, parseExpiry } from '../tokens/expiry.js';
import { defaultName, findToken, nameProblem, unknownToken } from '../tokens/token-ref.js';
import { keyHashesOf } from '../tokens/rotation.js';
import { allowList, nameTakenExit, TOKEN_KEY_USAGE, tokenKeyCommands } from './token-key-commands.js';
import { TOKEN_ARCHIVE_USAGE, tokenArchiveCommand } from './token-archive-command.js';
import { CliExit, HelpAsked, parseCommand, usageError, usageOf, usageTable, wholeNumber, type UsageEntry } from './args.js';
import { type ConfigPlace, configPlace, configWords, placedEnv, requireConfig, requireStore, storePlace, takePlaceFlags } from './locate.js';

/** The forms of the tokens commands, for the usage texts. */
export const TOKENS_USAGE = {
  list: { synopsis: 'tokens list [--json]', about: 'list tokens (never their keys); --json: as JSON' },
  create: {
    synopsis:
      'tokens create --group G [--quota N] [--models a,b] [--name NAME] [--rpm N] [--max-parallel N] [--expires T] [--budget N --period P] [--allow-ip CIDR]…',
    about:
      'create an API key (printed once on stdout; only its hash is stored);\n--group: a group of the config (--config DIR; every tokens command takes it and --db),\n--name: unique (default cli-<8 hex digits>),\n--rpm: requests per minute, --max-parallel: requests in flight,\n--expires: when the key stops working (ISO time with a zone, or 30d, 12h, 90m from now),\n--budget: units per --period (day, week, month: UTC; or Nd: every N days from now),\n--allow-ip: an address or CIDR block its requests may come from (repeatable)',
  },
  disable: { synopsis: 'tokens disable <token>', about: 'refuse the token from now on (<token>: its name or its id, here and below)' },
  enable: { synopsis: 'tokens enable <token>', about: 'let a disabled token work again' },
  delete: { synopsis: 'tokens delete <token>', about: 'delete a token; refused while it has unfinished tasks or requests in flight' },
  'set-quota': { synopsis: 'tokens set-quota <token> <N|unlimited>', about: 'set the units the token may spend in all (what it used stays used)' },
  'set-limits': {
    synopsis: 'tokens set-limits <token> [--rpm N|unlimited] [--max-parallel N|unlimited]',
    about: 'set the requests per minute and in flight the token may make (a limit not named stays)',
  },
  'set-expiry': {
    synopsis: 'tokens set-expiry <token> <T|never>',
    about: 'set when the key stops working (ISO time with a zone, or 30d, 12h, 90m from now; a past time ends it now)',
  },
  'set-budget': {
    synopsis: 'tokens set-budget <token> <N|unlimited> [--period P]',
    about:
      'set the units the token may spend per period (day, week, month: UTC; or Nd: every N days from now);\nthe amount alone keeps the period and what it used; a new --period starts now from 0',
  },
  ...TOKEN_KEY_USAGE,
  ...TOKEN_ARCHIVE_USAGE,
} as const satisfies Record<string, UsageEntry>;

/** One line of `tokens list`, and what the commands that change a token print. */
function line(t: TokenRecord): string {
  const limits = `${t.rpmLimit ? `  rpm=${t.rpmLimit}` : ''}${t.maxParallel ? `  max_parallel=${t.maxParallel}` : ''}`;
  const expires = t.expiresAt == null ? '' : `  expires=${expiryView(t.expiresAt)}`;
  const b = tokenBudgetAt(t, Date.now());
  const budget = b ? `  budget=${b.budget}/${b.period}  budget_used=${b.used}  budget_resets=${new Date(b.resetsAt).toISOString()}` : '';
  const keys = `${t.previousKeyExpiresAt == null ? '' : `  previous_key_until=${expiryView(t.previousKeyExpiresAt)}`}${t.allowedIps ? `  allowed_ips=${t.allowedIps.join(',')}` : ''}`;
  const used = t.lastUsedAt == null ? '' : `  last_used=${expiryView(t.lastUsedAt)}`;
  return `${t.id}  ${t.name}  group=${t.group}  quota=${t.quota ?? 'unlimited'}  used=${t.used}${t.models ? `  models=${t.models.join(',')}` : ''}${limits}${expires}${budget}${keys}${used}${t.disabled ? '  disabled' : ''}`;
}

/** An expiry given on the command line (`--expires`, `set-expiry`): Unix ms; a usage error when it is not one. */
function expiry(raw: string, what: string, usage: string): number {
  const at = parseExpiry(raw, Date.now());
  if (at === null) throw usageError(`${what} takes ${EXPIRY_FORM} or a duration from now (30d, 12h, 90m), not '${raw.slice(0, 100)}'`, usage);
  return at;
}

/** A rate limit given on the command line (`--rpm`, `--max-parallel`): undefined when not given, null for `unlimited` where allowed. */
function rateLimit(raw: string | undefined, flag: string, usage: string, unlimited: boolean): number | null | undefined {
  if (raw === undefined) return undefined;
  if (unlimited && raw === 'unlimited') return null;
  return wholeNumber(raw, flag, 1, MAX_RATE_LIMIT, usage, unlimited ? 'unlimited' : '');
}

/** A budget's period given on the command line (`--period`): undefined when not given; a usage error when it names none. */
function period(raw: string | undefined, usage: string): BudgetPeriod | undefined {
  if (raw === undefined) return undefined;
  const p = parseBudgetPeriod(raw);
  if (p === null) throw usageError(`--period takes ${PERIOD_FORM}, not '${raw.slice(0, 100)}'`, usage);
  return p;
}

/** A token that was asked for and is not there: a failure (exit 1), not a usage error. */
function found(t: TokenRecord | null, ref: string): TokenRecord {
  if (!t) throw new CliExit(unknownToken(ref), 1);
  return t;
}

/** The id of the token a command names (`<token>`: its id, or else its name); exit 1 when there is none. */
async function idOf(store: Store, ref: string): Promise<string> {
  return found(await findToken(store, ref), ref).id;
}

/**
 * A subcommand checks its arguments (so a usage error opens no store, nor creates its file), and
 * the config where it needs one, then acts on the store; the token it changed is returned (as it was
 * and is, when its keys changed; null when none changed), for the replicas to forget its keys.
 */
type Subcommand = (args: string[], config: ConfigPlace) => Promise<(store: Store) => Promise<TokenRecord | readonly TokenRecord[] | null>>;

const SUBCOMMANDS = new Map<string, Subcommand>([
  [
    'list',
    async (args) => {
      const { values } = parseCommand(args, usageOf(TOKENS_USAGE.list), { json: { type: 'boolean' } });
      return async (store) => {
        const tokens = await store.listTokens();
        process.stdout.write(values.json ? JSON.stringify(tokens.map(tokenView), null, 2) + '\n' : tokens.map((t) => line(t) + '\n').join(''));
        return null;
      };
    },
  ],
  [
    'create',
    async (args, config) => {
      const u = usageOf(TOKENS_USAGE.create);
      const { values } = parseCommand(args, u, {
        group: { type: 'string' },
        quota: { type: 'string' },
        models: { type: 'string' },
        name: { type: 'string' },
        rpm: { type: 'string' },
        'max-parallel': { type: 'string' },
        expires: { type: 'string' },
        budget: { type: 'string' },
        period: { type: 'string' },
        'allow-ip': { type: 'string', multiple: true },
      });
      if (values.group === undefined) throw usageError('--group is required', u);
      const budget = values.budget === undefined ? null : wholeNumber(values.budget, '--budget', 0, Number.MAX_SAFE_INTEGER, u);
      const budgetPeriod = period(values.period, u) ?? null;
      if (budget !== null && budgetPeriod === null) throw usageError('--budget needs --period (day, week, month or Nd)', u);
      if (budget === null && budgetPeriod !== null) throw usageError('--period needs --budget', u);
      const quota = values.quota === undefined ? null : wholeNumber(values.quota, '--quota', 0, Number.MAX_SAFE_INTEGER, u);
      const rpmLimit = rateLimit(values.rpm, '--rpm', u, false) ?? null;
      const maxParallel = rateLimit(values['max-parallel'], '--max-parallel', u, false) ?? null;
      const expiresAt = values.expires === undefined ? null : expiry(values.expires, '--expires', u);
      // A key born expired is a mistake; `set-expiry` with a past time is how a key is ended now.
      if (expiresAt !== null && expiresAt <= Date.now()) throw usageError('--expires must be in the future', u);
      const models =
        values.models === undefined
          ? null
          : values.models
              .split(',')
              .map((m) => m.trim())
              .filter(Boolean);
      if (models?.length === 0) throw usageError('--models takes model names separated by commas', u);
      const badName = values.name === undefined ? null : nameProblem(values.name);
      if (badName) throw usageError(`--name: ${badName}`, u);
      const allowedIps = values['allow-ip'] === undefined ? null : allowList(values['allow-ip'], '--allow-ip', u);
      const group = values.group;
      // The group must be one the gateway serves: the config it would serve says which (./locate.ts).
      requireConfig(config);
      const [{ settingsFromEnv }, { loadConfig }] = await Promise.all([import('../app.js'), import('../config/load.js')]);
      const settings = settingsFromEnv(placedEnv(config, null));
      const { snapshot } = loadConfig(settings.configDir, { extraDirs: settings.extraConfigDirs });
      if (!snapshot) throw new CliExit(`the configuration of ${configWords(config)} does not load, so the groups are unknown; run gateway check`, 2);
      const problem = groupProblem(snapshot.groups, group);
      if (problem) throw usageError(`${problem} (config: ${configWords(config)})`, u);
      return async (store) => {
        const { token, key } = await issueToken(cliOperator(store), {
          name: values.name ?? defaultName('cli'),
          allowedIps,
          group,
          models,
          quota,
          rpmLimit,
          maxParallel,
          expiresAt,
          budget,
          budgetPeriod,
        }).catch(nameTakenExit);
        process.stderr.write(`created token ${token.id} (${token.name}, group ${token.group}, quota ${token.quota ?? 'unlimited'}); the key is shown once:\n`);
        process.stdout.write(`${key}\n`);
        return null;
      };
    },
  ],
  ['disable', async (args) => disabling(args, true)],
  ['enable', async (args) => disabling(args, false)],
  [
    'delete',
    async (args) => {
      // parseCommand refuses a command without it.
      const [ref = ''] = parseCommand(args, usageOf(TOKENS_USAGE.delete), {}, { required: ['token'] }).positionals;
      return async (store) => {
        const id = await idOf(store, ref);
        const d = await removeToken(cliOperator(store), id);
        if (d.outcome !== 'deleted') throw new CliExit(deletionProblem(id, d), 1);
        process.stdout.write(`deleted ${line(d.token)}\n`);
        return d.token;
      };
    },
  ],
  [
    'set-quota',
    async (args) => {
      const u = usageOf(TOKENS_USAGE['set-quota']);
      const [ref, raw] = parseCommand(args, u, {}, { required: ['token', 'N|unlimited'] }).positionals as [string, string];
      const quota = raw === 'unlimited' ? null : wholeNumber(raw, 'the quota', 0, Number.MAX_SAFE_INTEGER, u, 'unlimited');
      return async (store) => printed(found(await setQuota(cliOperator(store), await idOf(store, ref), quota), ref));
    },
  ],
  [
    'set-limits',
    async (args) => {
      const u = usageOf(TOKENS_USAGE['set-limits']);
      const { values, positionals } = parseCommand(args, u, { rpm: { type: 'string' }, 'max-parallel': { type: 'string' } }, { required: ['token'] });
      const [ref = ''] = positionals;
      const rpmLimit = rateLimit(values.rpm, '--rpm', u, true);
      const maxParallel = rateLimit(values['max-parallel'], '--max-parallel', u, true);
      if (rpmLimit === undefined && maxParallel === undefined) throw usageError('name a limit to set: --rpm, --max-parallel, or both', u);
      return async (store) => printed(found(await setLimits(cliOperator(store), await idOf(store, ref), { rpmLimit, maxParallel }), ref));
    },
  ],
  [
    'set-expiry',
    async (args) => {
      const u = usageOf(TOKENS_USAGE['set-expiry']);
      const [ref, raw] = parseCommand(args, u, {}, { required: ['token', 'T|never'] }).positionals as [string, string];
      const expiresAt = raw === 'never' ? null : expiry(raw, 'the expiry', u);
      return async (store) => printed(found(await setExpiry(cliOperator(store), await idOf(store, ref), expiresAt), ref));
    },
  ],
  [
    'set-budget',
    async (args) => {
      const u = usageOf(TOKENS_USAGE['set-budget']);
      const { values, positionals } = parseCommand(args, u, { period: { type: 'string' } }, { required: ['token', 'N|unlimited'] });
      const [ref = '', raw = ''] = positionals;
      const budget = raw === 'unlimited' ? null : wholeNumber(raw, 'the budget', 0, Number.MAX_SAFE_INTEGER, u, 'unlimited');
      const p = period(values.period, u);
      if (budget === null && p !== undefined) throw usageError('unlimited takes no --period: it removes the budget', u);
      return async (store) => {
        const change = await setBudget(cliOperator(store), await idOf(store, ref), budget, p);
        if (change.outcome === 'no-period') throw new CliExit(`${BUDGET_NEEDS_PERIOD}: --period`, 1);
        return printed(found(change.outcome === 'changed' ? change.token : null, ref));
      };
    },
  ],
  ...tokenKeyCommands({ idOf, printed, cliOperator }),
  tokenArchiveCommand({ idOf, cliOperator }),
]);

function disabling(args: string[], disabled: boolean): (store: Store) => Promise<TokenRecord> {
  // parseCommand refuses a command without it.
  const [ref = ''] = parseCommand(args, usageOf(TOKENS_USAGE[disabled ? 'disable' : 'enable']), {}, { required: ['token'] }).positionals;
  return async (store) => printed(found(await setDisabled(cliOperator(store), await idOf(store, ref), disabled), ref));
}

/** The CLI as the audit log's actor: a record the store refused is said on stderr (the change stands). */
function cliOperator(store: Store): Operator {
  return { store, actor: CLI_ACTOR, lost: (message) => process.stderr.write(`warning: ${message}\n`) };
}

/** Prints a token a command changed, and hands it on to be told to the replicas. */
function printed(t: TokenRecord): TokenRecord {
  process.stdout.write(line(t) + '\n');
  return t;
}

/** Runs `gateway tokens <subcommand> …` on the store of GATEWAY_DB. */
export async function tokensCommand(args: readonly string[]): Promise<void> {
  const all = `usage: gateway tokens <command> [--config DIR] [--db FILE|URL]\n${usageTable(Object.values(TOKENS_USAGE))}`;
  // Every tokens command takes them, before or after its own arguments (./locate.ts).
  const places = takePlaceFlags(args, ['config', 'db'], all);
  const [sub, ...rest] = places.rest;
  if (sub === '--help' || sub === '-h' || sub === 'help') throw new HelpAsked(all);
  const subcommand = sub === undefined ? undefined : SUBCOMMANDS.get(sub);
  if (!subcommand) throw usageError(sub === undefined ? 'which tokens command?' : `unknown tokens command '${sub}'`, all);
  const act = await subcommand(rest, configPlace(places.config));
  const store = storePlace(places.db);
  requireStore(store);
  // Imported after the arguments parsed (see src/cli.ts).
  const { settingsFromEnv, openConfiguredStore } = await import('../app.js');
  const settings = settingsFromEnv(placedEnv(null, store));
  const opened = await openConfiguredStore(settings, { command: true }).catch((err: unknown) => {
    throw new CliExit((err as Error).message, 2);
  });
  let changed: TokenRecord | readonly TokenRecord[] | null;
  try {
    changed = await act(opened);
  } finally {
    await opened.close();
  }
  // As the admin routes do: every replica forgets what it cached of the key at once (docs/deploying.md, "Running several replicas").
  const hashes = changed === null ? [] : keyHashesOf(...[changed].flat());
  if (hashes.length > 0 && settings.redisUrl !== null) {
    const { tellReplicas } = await import('../live/redis-live.js');
    const told = await tellReplicas(
      settings.redisUrl,
      settings.redisPrefix,
      hashes.map((keyHash) => ({ t: 'token', keyHash })),
    );
    process.stderr.write(
      told
        ? 'the replicas were told through Redis\n'
        : 'Redis could not be reached: the replicas see the change when their cached lookup of the key runs out (GATEWAY_AUTH_CACHE_MS)\n',
    );
  }
}
