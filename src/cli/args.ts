import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The options a command declares, as `node:util` parseArgs takes them. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * Ends a command: `gateway: <message>` on stderr and exit `status`. With `usage` (the command line
 * itself was wrong, status 2) the command's usage follows, so the user sees what it takes.
 */
export class CliExit extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'CliExit';
  }
}

/** `--help` (or `-h`) was given to a command: its usage goes to stdout, exit 0. */
export class HelpAsked extends Error {
  constructor(readonly usage: string) {
    super('help');
    this.name = 'HelpAsked';
  }
}

/** A command line that is wrong: exit 2 with the command's usage. */
export const usageError = (message: string, usage: string) => new CliExit(message, 2, usage);

/** The positional arguments a command takes, by name: the required ones, then the optional ones. */
export interface Positionals {
  readonly required?: readonly string[];
  readonly optional?: readonly string[];
}

/**
 * Parses one command's arguments strictly: `--flag=value` and `--flag value` alike; an unknown
 * flag, a flag without its value, a value given to a switch, a missing or an extra positional is
 * a usage error. Every command also takes `--help`.
 */
export function parseCommand<const O extends CommandOptions>(args: readonly string[], usage: string, options: O, positionals: Positionals = {}) {
  const required = positionals.required ?? [];
  const max = required.length + (positionals.optional?.length ?? 0);
  const parsed = (() => {
    try {
      return parseArgs({ args: [...args], options: { ...options, help: { type: 'boolean', short: 'h' } } as O, strict: true, allowPositionals: max > 0 });
    } catch (err) {
      // parseArgs says it well ("Unknown option '--nope'", "Option '--quota <value>' argument missing"); only its own errors are usage errors.
      if ((err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS_')) throw usageError((err as Error).message.replace(/\s*\n\s*/g, ' '), usage);
      throw err;
    }
  })();
  if ((parsed.values as { help?: boolean }).help) throw new HelpAsked(usage);
  const n = parsed.positionals.length;
  if (n > max) throw usageError(`unexpected argument '${parsed.positionals[max]}'`, usage);
  if (n < required.length) throw usageError(`missing <${required[n]}>`, usage);
  return parsed;
}

/** A whole number from `min` to `max` in decimal digits, or a usage error naming what takes it (and what else it may be). */
export function wholeNumber(raw: string, what: string, min: number, max: number, usage: string, orElse = ''): number {
  const n = /^[0-9]{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (Number.isSafeInteger(n) && n >= min && n <= max) return n;
  const range = max === Number.MAX_SAFE_INTEGER ? `of ${min} or more` : `from ${min} to ${max}`;
  throw usageError(`${what} takes a whole number ${range}${orElse ? `, or ${orElse}` : ''}, not '${raw}'`, usage);
}

/** One form of a command and what it does (lines separated by `\n`), for the usage texts. */
export interface UsageEntry {
  readonly synopsis: string;
  readonly about: string;
}

const COLUMN = 32;

/** The usage table: each form, and what it does in a column (from the next line when the form is long). */
export function usageTable(entries: readonly UsageEntry[]): string {
  return entries
    .map(({ synopsis, about }) => {
      const [first = '', ...more] = about.split('\n').map((l) => ' '.repeat(COLUMN) + l);
      const head = `  ${synopsis}`;
      const lines = head.length < COLUMN ? [head.padEnd(COLUMN) + first.trimStart(), ...more] : [head, first, ...more];
      return lines.join('\n');
    })
    .join('\n');
}

/** What a usage error prints after its message: the command's form and what it does. */
export function usageOf(entry: UsageEntry): string {
  return `usage: gateway ${entry.synopsis}\n${entry.about.replace(/^/gm, '  ')}`;
}
