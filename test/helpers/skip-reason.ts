/**
 * A test that needs a tool this machine lacks skips with the reason, except under CI=true (`.ci/run`
 * installs every tool a test needs), where a skip would hide the test untried: there it is an error.
 */
export function skipReason(why: string): string {
  if (process.env.CI === 'true') throw new Error(`${why}, which CI=true does not allow`);
  return why;
}
