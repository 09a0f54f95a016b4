/**
 * Command-line options of the benchmark runners: parsed with node:util, `--help` printed, and
 * numbers checked against bounds, because a benchmark on a shared machine must not run away.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Parses `argv` with `options` (which include `help`); a bad option prints `usage` and exits 2, `--help` exits 0. */
export function parseBenchArgs<const O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, usage: string) {
  try {
    const { values } = parseArgs({ args: argv, options });
    if ((values as { help?: boolean }).help) {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    }
    return values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${usage}\n`);
    process.exit(2);
  }
}

/** A reader of numeric options: `fallback` when absent, exit 2 (naming the option) when outside [min, max]. */
export function boundedNumber(usage: string) {
  return (name: string, raw: string | undefined, fallback: number, min: number, max: number): number => {
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) {
      process.stderr.write(`${name} must be a number from ${min} to ${max}, got "${raw}"\n${usage}\n`);
      process.exit(2);
    }
    return n;
  };
}
