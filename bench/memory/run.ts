/**
 * Benchmark bench/memory: many large legal bodies at once. A real `gateway start` process in front
 * of the alpha simulator (its own process) gets N parallel generateContent calls of S MB each, in
 * three runs of one benchmark, each on a fresh gateway:
 *   one       a single such call: the baseline cost of one body;
 *   unbounded the N calls with memory admission off (a budget far above the heap);
 *   admitted  the N calls with the default budget (a share of the heap limit).
 * For each it prints what was served, refused (503 server_busy with Retry-After) or lost (reset,
 * no answer), whether the process survived, and its peak RSS (VmHWM, sampled until it exits).
 * Figures are printed, never asserted; the exit code is 1 only when the admitted run lost a
 * request or the process, or when nothing was served.
 *
 * Usage: npm run bench:memory [-- --parallel N] [--size-mb S] [--heap-mb M] [--quick]
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { benchWorkspace, machineLine, deadChannelEnv } from '../workspace.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startChild, stopChild, waitForLine, type Child } from '../overhead/children.js';
import { sendAtOnce } from '../overhead/big-bodies.js';
import { memory, watchPeak } from '../overhead/proc.js';
import { BIG_BODY_PATH, bigAlphaBody } from '../overhead/scenarios.js';

const USAGE = `usage: npm run bench:memory [-- options]
  --parallel N   requests sent at once (env BENCH_PARALLEL, default 100; 20 with --quick)
  --size-mb S    size of each body in MB (env BENCH_SIZE_MB, default 20, the route's limit; 5 with --quick)
  --heap-mb M    the gateway's --max-old-space-size (env BENCH_HEAP_MB, default: Node's own limit)
  --quick        a smaller run for a smoke test`;

const PATH = BIG_BODY_PATH;
const CLI = join(PROJECT_ROOT, 'dist/src/cli.js');
const SIM = join(PROJECT_ROOT, 'dist/bench/overhead/sim-process.js');

interface Outcome {
  readonly served: number;
  readonly refused: number;
  /** Refusals that carried Retry-After. */
  readonly withRetryAfter: number;
  /** Other HTTP answers, by status. */
  readonly other: Map<number, number>;
  /** No answer at all (reset, closed): the request was lost. */
  readonly lost: number;
  readonly survived: boolean;
  readonly idleMb: number;
  readonly peakMb: number;
  readonly seconds: number;
}

async function run(
  tmp: string,
  name: string,
  env: NodeJS.ProcessEnv,
  heapMb: number | null,
  body: Buffer,
  parallel: number,
  children: Child[],
): Promise<Outcome> {
  const gwEnv = { ...env, GATEWAY_DB: join(tmp, `${name}.db`) };
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'tokens', 'create', '--group', 'default'], { env: gwEnv, cwd: PROJECT_ROOT });
  const key = stdout.trim();
  const args = heapMb ? [`--max-old-space-size=${heapMb}`, CLI, 'start'] : [CLI, 'start'];
  const gw = startChild(`gateway (${name})`, args, gwEnv, join(tmp, `${name}.log`), PROJECT_ROOT);
  children.push(gw);
  const url = String((await waitForLine(gw, (l) => l.msg === 'gateway listening')).url);
  const idleMb = memory(gw.pid).rss / 2 ** 20;
  const peak = watchPeak(gw.pid);
  let died = false;
  void gw.exited.then(() => (died = true));
  const other = new Map<number, number>();
  let served = 0;
  let refused = 0;
  let withRetryAfter = 0;
  let lost = 0;
  const started = performance.now();
  for (const a of await sendAtOnce(`${url}${PATH}`, { authorization: `Bearer ${key}` }, body, parallel)) {
    if ('error' in a) lost++;
    else if (a.status === 200 && a.text.includes('inlineData')) served++;
    else if (a.status === 503 && a.text.includes('server_busy')) {
      refused++;
      if (a.headers['retry-after'] !== undefined) withRetryAfter++;
    } else other.set(a.status, (other.get(a.status) ?? 0) + 1);
  }
  const seconds = (performance.now() - started) / 1000;
  const peakMb = peak.stop() / 2 ** 20;
  const survived = !died && gw.proc.exitCode === null;
  await stopChild(gw);
  return { served, refused, withRetryAfter, other, lost, survived, idleMb, peakMb, seconds };
}

async function main(): Promise<number> {
  const values = parseBenchArgs(
    process.argv.slice(2),
    {
      parallel: { type: 'string' },
      'size-mb': { type: 'string' },
      'heap-mb': { type: 'string' },
      quick: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const num = boundedNumber(USAGE);
  const quick = values.quick === true;
  const parallel = Math.round(num('--parallel', values.parallel ?? process.env.BENCH_PARALLEL, quick ? 20 : 100, 1, 500));
  const sizeMb = num('--size-mb', values['size-mb'] ?? process.env.BENCH_SIZE_MB, quick ? 5 : 20, 0.1, 20);
  const heapRaw = values['heap-mb'] ?? process.env.BENCH_HEAP_MB;
  const heapMb = heapRaw ? Math.round(num('--heap-mb', heapRaw, 0, 256, 65_536)) : null;
  const { tmp, children, cleanup } = benchWorkspace<Child>('gateway-bench-memory-');
  try {
    const body = bigAlphaBody(Math.floor(sizeMb * 1024 * 1024));
    process.stdout.write(
      machineLine('bench/memory') +
        `${parallel} parallel POST ${PATH}, ${(body.length / 2 ** 20).toFixed(1)} MB each; gateway heap limit: ${heapMb ? `${heapMb} MB (--max-old-space-size)` : "Node's default"}\n\n`,
    );
    const sim = startChild('simulator', [SIM], process.env, join(tmp, 'simulator.log'), PROJECT_ROOT);
    children.push(sim);
    const ready = await waitForLine(sim, (l) => l.ready === 'simulator');
    // Every other channel gets a dead local address: `start` refuses unset variables.
    const env = {
      ...deadChannelEnv(),
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_WATCH: '0',
      LOG_LEVEL: 'info',
      ALPHA_BASE_URL: String(ready.url),
      ALPHA_API_KEY: String(ready.key),
    };
    delete (env as NodeJS.ProcessEnv).GATEWAY_BODY_BUDGET_MB;

    const one = await run(tmp, 'one', env, heapMb, body, 1, children);
    const unbounded = await run(tmp, 'unbounded', { ...env, GATEWAY_BODY_BUDGET_MB: '1000000' }, heapMb, body, parallel, children);
    const admitted = await run(tmp, 'admitted', env, heapMb, body, parallel, children);

    const rows: [string, Outcome][] = [
      ['one request', one],
      [`${parallel}, no admission`, unbounded],
      [`${parallel}, admission`, admitted],
    ];
    const pad = (s: string, n: number) => s.padEnd(n);
    process.stdout.write(
      `${pad('run', 22)}${pad('served', 8)}${pad('503', 6)}${pad('other', 10)}${pad('lost', 6)}${pad('process', 10)}${pad('idle MB', 9)}${pad('peak MB', 9)}seconds\n`,
    );
    for (const [name, o] of rows) {
      const others = [...o.other].map(([s, n]) => `${n}x${s}`).join(',') || '0';
      process.stdout.write(
        `${pad(name, 22)}${pad(String(o.served), 8)}${pad(String(o.refused), 6)}${pad(others, 10)}${pad(String(o.lost), 6)}${pad(o.survived ? 'up' : 'DIED', 10)}` +
          `${pad(o.idleMb.toFixed(0), 9)}${pad(o.peakMb.toFixed(0), 9)}${o.seconds.toFixed(1)}\n`,
      );
    }
    const perBody = Math.max(1, one.peakMb - one.idleMb);
    process.stdout.write(
      `\none body costs about ${perBody.toFixed(0)} MB of RSS over idle (${(perBody / sizeMb).toFixed(1)} x its size)\n` +
        `peak RSS with admission / without: ${(admitted.peakMb / unbounded.peakMb).toFixed(2)}` +
        `${unbounded.survived ? '' : ' (the process without admission died: its peak is where it stopped)'}\n` +
        `peak RSS with admission / one request: ${(admitted.peakMb / one.peakMb).toFixed(2)}\n` +
        `refusals with Retry-After: ${admitted.withRetryAfter} of ${admitted.refused}\n`,
    );
    const ok = admitted.survived && admitted.lost === 0 && admitted.served > 0 && admitted.other.size === 0;
    process.stdout.write(
      ok
        ? '\nadmission: the process stayed up and every request was served or refused with 503\n'
        : '\nadmission FAILED: a request was lost, answered otherwise, or the process died\n',
    );
    return ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench/memory failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
