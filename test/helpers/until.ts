/**
 * Polls `check` every 20 ms until it gives a value other than null, undefined or false, for states
 * another process or a lease changes; fails after `ms` naming `what`. A bound, not a sleep: it
 * returns as soon as the state is reached.
 */
export async function until<T>(what: string, check: () => T | null | undefined | false | Promise<T | null | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
