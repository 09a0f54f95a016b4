import { formatIssue, type ConfigIssue } from '../config/issues.js';
import { usageError } from './args.js';

/** How much of a load's issues `check` and `explain` print. */
export type ReportMode = 'summary' | 'verbose' | 'quiet';

/** The flags `check` and `explain` take for it (parseCommand options). */
export const REPORT_FLAGS = { verbose: { type: 'boolean' }, quiet: { type: 'boolean' } } as const;

/** What the flags ask for; both at once is a usage error. */
export function reportMode(values: { verbose?: boolean; quiet?: boolean }, usage: string): ReportMode {
  if (values.verbose === true && values.quiet === true) throw usageError('--verbose and --quiet exclude each other', usage);
  return values.verbose === true ? 'verbose' : values.quiet === true ? 'quiet' : 'summary';
}

/** Variables named in the summary line before `…`. */
const NAMED_VARIABLES = 5;

/**
 * The lines to print for a load's issues, errors first. Warnings follow: each one with `verbose`,
 * none with `quiet`; by default every warning but those about unset channel variables, which are
 * summed up in one last line. An operator with one vendor's key would otherwise read a warning for
 * each variable of every other vendor (30 with the shipped config) before the one error that matters.
 */
export function reportLines(issues: readonly ConfigIssue[], mode: ReportMode): string[] {
  const errors = issues.filter((i) => i.severity === 'error').map(formatIssue);
  if (mode === 'quiet') return errors;
  const warnings = issues.filter((i) => i.severity === 'warning');
  if (mode === 'verbose') return [...errors, ...warnings.map(formatIssue)];
  const unset = warnings.flatMap((w) => (w.unset ? [w.unset] : []));
  const others = warnings.filter((w) => !w.unset).map(formatIssue);
  return unset.length === 0 ? [...errors, ...others] : [...errors, ...others, unsetSummary(unset)];
}

/** `warning: 14 channels left out: their variables are unset (ALPHA_BASE_URL, …); --verbose lists them`. */
function unsetSummary(unset: readonly { variable: string; channel: string }[]): string {
  const channels = new Set(unset.map((u) => u.channel)).size;
  const variables = [...new Set(unset.map((u) => u.variable))];
  const named = variables.slice(0, NAMED_VARIABLES).join(', ');
  const more = variables.length > NAMED_VARIABLES ? `, … ${variables.length - NAMED_VARIABLES} more` : '';
  const who = channels === 1 ? '1 channel left out: its variables are' : `${channels} channels left out: their variables are`;
  return `warning: ${who} unset (${named}${more}); --verbose lists them`;
}
