/**
 * `npm run fuzz`: bounded hostile traffic to every route of a real gateway process (docs/testing.md,
 * "Fuzzing"). Prints what was sent and found by category; exits 1 when anything was found.
 *
 * Usage: npm run fuzz [-- --quick | --long] [--requests N] [--seconds S] [--seed N] [--concurrency N]
 */
import { parseArgs } from 'node:util';
import { formatReport, runFuzz } from './harness.js';
import { startUnderTest } from './gateway-under-test.js';
import { FUZZ_PROFILES, type FuzzProfileName } from './profiles.js';

const USAGE = `usage: npm run fuzz [-- options]
  --quick            the profile npm test runs (${FUZZ_PROFILES.quick.requests} requests)
  --long             the long hunt (${FUZZ_PROFILES.long.requests} requests, at most ${FUZZ_PROFILES.long.seconds / 60} minutes); the default
  --requests N       how many requests (overrides the profile)
  --seconds S        stop after S seconds (overrides the profile)
  --seed N           replay a run (default: random, printed)
  --concurrency N    requests in flight (default 8)`;

function num(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    process.stderr.write(`--${name} must be a whole number from ${min} to ${max}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<number> {
  let values: { quick?: boolean; long?: boolean; requests?: string; seconds?: string; seed?: string; concurrency?: string; help?: boolean };
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: {
        quick: { type: 'boolean' },
        long: { type: 'boolean' },
        requests: { type: 'string' },
        seconds: { type: 'string' },
        seed: { type: 'string' },
        concurrency: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const name: FuzzProfileName = values.quick ? 'quick' : 'long';
  const profile = FUZZ_PROFILES[name];
  const opts = {
    ...profile,
    requests: num('requests', values.requests, 1, 10_000_000) ?? profile.requests,
    seconds: num('seconds', values.seconds, 1, 24 * 3600) ?? profile.seconds,
    concurrency: num('concurrency', values.concurrency, 1, 64) ?? profile.concurrency,
    seed: num('seed', values.seed, 0, 2 ** 31 - 1) ?? Math.floor(Math.random() * 2 ** 31),
  };
  process.stdout.write(`fuzz (${name}): up to ${opts.requests} requests or ${opts.seconds} s, ${opts.concurrency} at once, seed ${opts.seed}\n`);
  const under = await startUnderTest();
  try {
    const report = await runFuzz(under.targets, under.gateway, opts, (sent) => process.stdout.write(`  ${sent} sent\n`));
    process.stdout.write(`\n${formatReport(report)}\n`);
    if (report.crashes > 0) process.stdout.write(`\nthe end of what the last process that died printed:\n${under.crashOutput().slice(-3000)}\n`);
    return report.findings.length === 0 ? 0 : 1;
  } finally {
    await under.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fuzz failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
