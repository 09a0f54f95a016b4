/**
 * Where a command finds the configuration and the store: one rule for every command
 * (docs/operating.md, "Where the configuration and the store are"). The configuration is the
 * directory of `--config DIR`, else of GATEWAY_CONFIG_DIR, else the current directory; the store is
 * `--db FILE|URL`, else GATEWAY_DB, else data/gateway.db of the current directory. A command that
 * needs one and finds none says where it looked and exits 2, rather than reading nothing or making
 * an empty store where nobody will look for it.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { maskedUrl } from '../config/secret.js';
import { isSharedStore } from '../store/open-store.js';
import { CliExit, usageError } from './args.js';

/** The flag naming the configuration directory (parseCommand options). */
export const CONFIG_FLAG = { config: { type: 'string' } } as const;
/** The flag naming the store (parseCommand options). */
export const DB_FLAG = { db: { type: 'string' } } as const;
/** Both, for commands that read the configuration and the store. */
export const PLACE_FLAGS = { ...CONFIG_FLAG, ...DB_FLAG } as const;

/** The store when neither --db nor GATEWAY_DB names one, relative to the current directory. */
export const DEFAULT_STORE = 'data/gateway.db';

/** The configuration directory a command reads, and what named it (for the messages). */
export interface ConfigPlace {
  /** Absolute. */
  readonly dir: string;
  readonly from: string;
}

/** The store a command opens, and what named it. */
export interface StorePlace {
  /** As GATEWAY_DB takes it: a path (made absolute), a file: URL, :memory: or postgres://… */
  readonly url: string;
  /** The SQLite file, absolute; null when the store is not a file (:memory:, PostgreSQL). */
  readonly file: string | null;
  /** Whether --db or GATEWAY_DB named it (false: the default of the current directory). */
  readonly named: boolean;
  readonly from: string;
}

/** The configuration directory: `--config`, else GATEWAY_CONFIG_DIR, else the current directory. */
export function configPlace(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): ConfigPlace {
  if (flag !== undefined && flag !== '') return { dir: resolve(flag), from: '--config' };
  if (env.GATEWAY_CONFIG_DIR) return { dir: resolve(env.GATEWAY_CONFIG_DIR), from: 'GATEWAY_CONFIG_DIR' };
  return { dir: process.cwd(), from: 'the current directory: neither --config nor GATEWAY_CONFIG_DIR is set' };
}

/** The store: `--db`, else GATEWAY_DB, else data/gateway.db of the current directory. */
export function storePlace(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): StorePlace {
  const [raw, named, from] =
    flag !== undefined && flag !== ''
      ? [flag, true, '--db']
      : env.GATEWAY_DB
        ? [env.GATEWAY_DB, true, 'GATEWAY_DB']
        : [DEFAULT_STORE, false, `neither --db nor GATEWAY_DB is set: ${DEFAULT_STORE} of the current directory`];
  if (raw === ':memory:' || isSharedStore(raw)) return { url: raw, file: null, named, from };
  if (/^file:/i.test(raw)) return { url: raw, file: fileURLToPath(raw), named, from };
  // Another scheme is left as written, for openStore to refuse by name.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return { url: raw, file: null, named, from };
  const file = resolve(raw);
  return { url: file, file, named, from };
}

/** The place of the configuration, in words: `/etc/gateway (from --config)`. */
export function configWords(p: ConfigPlace): string {
  return `${p.dir} (${p.from.startsWith('the current') ? p.from : `from ${p.from}`})`;
}

/**
 * Stops the command (exit 2) when `p` holds no configuration: neither routes.yaml nor channels.yaml.
 * A directory with one of them is a configuration, and what is wrong in it is the loader's to say.
 */
export function requireConfig(p: ConfigPlace): void {
  const isDir = existsSync(p.dir) && statSync(p.dir).isDirectory();
  if (isDir && (existsSync(resolve(p.dir, 'routes.yaml')) || existsSync(resolve(p.dir, 'channels.yaml')))) return;
  const what = isDir ? 'it holds neither routes.yaml nor channels.yaml' : 'there is no such directory';
  throw new CliExit(
    `no configuration in ${configWords(p)}: ${what}.\nName the directory with --config DIR or GATEWAY_CONFIG_DIR, or write one with: gateway init DIR`,
    2,
  );
}

/**
 * For a command that works on an existing store (tokens, groups, webhooks): stops it (exit 2) when
 * the default store, data/gateway.db of the current directory, is not there, for it would be a new
 * empty store in whatever directory the command ran from. A store named by --db or GATEWAY_DB is
 * the operator's word: a missing file is made there, and the command says so on stderr.
 */
export function requireStore(p: StorePlace): void {
  if (p.file === null || existsSync(p.file)) return;
  if (!p.named) {
    throw new CliExit(
      `no store at ${p.file} (${p.from}).\nName the store with --db FILE|URL or GATEWAY_DB (the one the gateway runs on); gateway start makes it at its first start`,
      2,
    );
  }
  process.stderr.write(`gateway: no store at ${p.file} (from ${p.from}) yet: making a new one there\n`);
}

/** The store in words, its password masked: `/var/lib/gateway/gateway.db (from GATEWAY_DB)`. */
export function storeWords(p: StorePlace): string {
  return `${maskedUrl(p.file ?? p.url)} (${p.named ? `from ${p.from}` : p.from})`;
}

/** The environment with the places found, for settingsFromEnv (app.ts) to read them as every setting. */
export function placedEnv(config: ConfigPlace | null, store: StorePlace | null, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, ...(config ? { GATEWAY_CONFIG_DIR: config.dir } : {}), ...(store ? { GATEWAY_DB: store.url } : {}) };
}

/**
 * Takes `--config DIR` and `--db FILE|URL` (either form, anywhere before `--`) out of the arguments of
 * a command with subcommands (tokens, webhooks), so that every subcommand takes them alike; `allowed`
 * names those the command takes. The rest is left, in order, for the subcommand to parse strictly.
 */
export function takePlaceFlags(
  args: readonly string[],
  allowed: readonly ('config' | 'db')[],
  usage: string,
): { rest: string[]; config?: string; db?: string } {
  const rest: string[] = [];
  const found: { config?: string; db?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    const m = /^--(config|db)(?:=(.*))?$/s.exec(arg);
    const name = m?.[1] as 'config' | 'db' | undefined;
    if (!m || !name || !allowed.includes(name)) {
      rest.push(arg);
      continue;
    }
    let value = m[2];
    if (value === undefined) {
      const next = args[i + 1];
      // As parseArgs refuses it: a flag's value that looks like a flag is a missing value.
      if (next === undefined || next.startsWith('-')) throw usageError(`--${name} takes a value: --${name} ${name === 'config' ? 'DIR' : 'FILE|URL'}`, usage);
      value = next;
      i++;
    }
    if (found[name] !== undefined) throw usageError(`--${name} is given twice`, usage);
    found[name] = value;
  }
  return { rest, ...found };
}

/** The rule, for `gateway --help`. */
export const PLACES_HELP = `where: every command that reads the config takes --config DIR (else $GATEWAY_CONFIG_DIR, else the current
  directory), and every one that opens the store --db FILE|URL (else $GATEWAY_DB, else ${DEFAULT_STORE} of the current
  directory), tokens and webhooks commands too. One that needs either and finds none says where it looked (exit 2);
  only start and demo make a store nobody named, and log where.`;
