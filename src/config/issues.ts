/** One problem found in a config file: where it is and what is wrong. */
export interface ConfigIssue {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  /** Warnings (an unset environment variable during `gateway check`) do not fail a load. */
  readonly severity: 'error' | 'warning';
  /** Set on the issue of a channel's unset `${VAR}`: `check` and `explain` sum these up in one line (report.ts). */
  readonly unset?: { readonly variable: string; readonly channel: string };
}

/** Renders an issue as `file:line:column: message`, the form editors and CI logs link. */
export function formatIssue(issue: ConfigIssue): string {
  const tag = issue.severity === 'warning' ? 'warning: ' : '';
  return `${issue.file}:${issue.line}:${issue.column}: ${tag}${issue.message}`;
}

/** Thrown when a config directory does not compile; carries every issue found. */
export class ConfigLoadError extends Error {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(`configuration has ${issues.length} error(s):\n${issues.map(formatIssue).join('\n')}`);
    this.name = 'ConfigLoadError';
  }
}

/** True when an error (not a warning) was pushed onto `issues` after its first `before` entries. */
export function errorsSince(issues: readonly ConfigIssue[], before: number): boolean {
  return issues.slice(before).some((i) => i.severity === 'error');
}
