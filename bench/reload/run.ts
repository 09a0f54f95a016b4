/**
 * Benchmark bench/reload: what a configuration reload costs. Two parts, each against a baseline
 * measured in the same run; timings are printed, never asserted.
 *
 * (a) Reload time of 1,000 channels: a gateway process over the shipped config plus N generated
 *     channels is reloaded several times with POST /admin/reload; the median build time (the
 *     `ms` of the answer, measured in the gateway) and the median wall time of the call, against
 *     the same for the shipped config alone, and their ratio.
 * (b) Requests failed during repeated reloads under load: a gateway process and an alpha simulator,
 *     a paced load for a few seconds with a reload every ~100 ms (the channel serving the load
 *     changes name and pool at every swap), against the same load without reloads: failed
 *     requests, req/s, p50/p99/max latency, and the ratios.
 *
 * Usage: npm run bench:reload [-- --quick] [--channels N] [--runs N] [--duration S] [--rate R]
 *        [--connections C] [--interval-ms I]   (see bench/README.md)
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { logTail, startChild, stopChild, waitForLine, type Child } from '../overhead/children.js';
import { percentile, runLoad, type LoadResult, type LoadTarget } from '../overhead/load.js';
import { memory } from '../overhead/proc.js';
import { f, table } from '../tasks/figures.js';
import { benchWorkspace, machineLine, deadChannelEnv } from '../workspace.js';
import { benchFragment, scratchConfig } from './configs.js';

const USAGE = `usage: npm run bench:reload [-- options]
  --quick             short run: 3 reloads per config, 0.5 s warm-up + 2 s per load phase
  --channels N        generated channels added to the shipped config in part (a) (default 1000, max 10000)
  --runs N            measured reloads per config in part (a) (env BENCH_RUNS, default 7)
  --duration S        measured seconds per load phase in part (b) (env BENCH_DURATION, default 5)
  --warmup S          unmeasured seconds before each load phase (env BENCH_WARMUP, default 1)
  --rate R            requests/s of the load (env BENCH_RATE, default 200)
  --connections C     connections of the load (env BENCH_CONNECTIONS, default 16)
  --interval-ms I     pause between the answer of one reload and the next request (default 100)`;

const CLI = join(PROJECT_ROOT, 'dist/src/cli.js');
const SIM = join(PROJECT_ROOT, 'dist/bench/overhead/sim-process.js');
const PATH = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const BODY = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: 'a red bicycle' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
});
const ADMIN_KEY = 'bench-reload-admin-key';

interface Settings {
  readonly channels: number;
  readonly runs: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly rate: number;
  readonly connections: number;
  readonly intervalMs: number;
}

function settings(argv: string[]): Settings {
  const values = parseBenchArgs(
    argv,
    {
      quick: { type: 'boolean' },
      channels: { type: 'string' },
      runs: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      rate: { type: 'string' },
      connections: { type: 'string' },
      'interval-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const env = process.env;
  const num = boundedNumber(USAGE);
  const quick = values.quick === true;
  return {
    channels: Math.round(num('--channels', values.channels, 1000, 1, 10_000)),
    runs: Math.round(num('--runs', values.runs ?? env.BENCH_RUNS, quick ? 3 : 7, 1, 50)),
    durationMs: 1000 * num('--duration', values.duration ?? env.BENCH_DURATION, quick ? 2 : 5, 0.5, 120),
    warmupMs: 1000 * num('--warmup', values.warmup ?? env.BENCH_WARMUP, quick ? 0.5 : 1, 0, 30),
    rate: Math.round(num('--rate', values.rate ?? env.BENCH_RATE, 200, 1, 5_000)),
    connections: Math.round(num('--connections', values.connections ?? env.BENCH_CONNECTIONS, 16, 1, 256)),
    intervalMs: Math.round(num('--interval-ms', values['interval-ms'], 100, 0, 10_000)),
  };
}

const median = (xs: readonly number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
};

/** One POST /admin/reload: the gateway's build time and the call's wall time, or the failure. */
async function reloadOnce(url: string): Promise<{ ok: boolean; buildMs: number; wallMs: number; text: string }> {
  const started = performance.now();
  const res = await request(`${url}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const text = await res.body.text();
  const wallMs = performance.now() - started;
  if (res.statusCode !== 200) return { ok: false, buildMs: NaN, wallMs, text: text.slice(0, 500) };
  return { ok: true, buildMs: (JSON.parse(text) as { ms: number }).ms, wallMs, text: '' };
}

/** A gateway process over `dir`, started like production (`gateway start`), with no file watch. */
async function startGateway(
  name: string,
  dir: string,
  env: NodeJS.ProcessEnv,
  tmp: string,
  children: Child[],
): Promise<{ child: Child; url: string; startMs: number }> {
  const started = performance.now();
  const child = startChild(name, [CLI, 'start'], { ...env, GATEWAY_CONFIG_DIR: dir }, join(tmp, `${name}.log`), PROJECT_ROOT);
  children.push(child);
  const url = String((await waitForLine(child, (l) => l.msg === 'gateway listening', 60_000)).url);
  return { child, url, startMs: performance.now() - started };
}

/** Part (a): reload times of one config, after one unmeasured reload. */
async function reloadTimes(url: string, runs: number): Promise<{ build: number[]; wall: number[] }> {
  const warm = await reloadOnce(url);
  if (!warm.ok) throw new Error(`the reload failed: ${warm.text}`);
  const build: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await reloadOnce(url);
    if (!r.ok) throw new Error(`the reload failed: ${r.text}`);
    build.push(r.buildMs);
    wall.push(r.wallMs);
  }
  return { build, wall };
}

/** Reloads every `intervalMs` until stopped, alternating the bench channel's two forms. */
function reloadLoop(url: string, fragment: string, sim: { url: string; key: string }, intervalMs: number) {
  let stopped = false;
  const out = { count: 0, failed: 0, build: [] as number[], wall: [] as number[], firstFailure: '' };
  const done = (async () => {
    for (let i = 1; !stopped; i++) {
      writeFileSync(fragment, benchFragment((i % 2) as 0 | 1, sim.url, sim.key));
      const r = await reloadOnce(url).catch((err: unknown) => ({ ok: false, buildMs: NaN, wallMs: NaN, text: String(err) }));
      out.count++;
      if (r.ok) {
        out.build.push(r.buildMs);
        out.wall.push(r.wallMs);
      } else {
        out.failed++;
        out.firstFailure ||= r.text;
      }
      if (intervalMs > 0 && !stopped) await new Promise((res) => setTimeout(res, intervalMs));
    }
  })();
  return {
    out,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

interface LoadRow {
  readonly name: string;
  readonly result: LoadResult;
}

function loadRow({ name, result }: LoadRow): string[] {
  const failed = [...result.errors.values()].reduce((a, b) => a + b, 0);
  return [
    name,
    String(result.completed),
    String(failed),
    f((result.completed * 1000) / result.windowMs),
    f(percentile(result.latencies, 0.5), 2),
    f(percentile(result.latencies, 0.99), 2),
    f(percentile(result.latencies, 1), 2),
  ];
}

async function main(): Promise<number> {
  const s = settings(process.argv.slice(2));
  const { tmp, children, cleanup } = benchWorkspace<Child>('gateway-bench-reload-');
  try {
    process.stdout.write(
      machineLine('bench/reload') +
        `(a) ${s.runs} reload(s) per config, shipped vs shipped + ${s.channels} channels; ` +
        `(b) ${s.rate} req/s over ${s.connections} connections, ${s.warmupMs / 1000} s warm-up + ${s.durationMs / 1000} s per phase, ` +
        `a reload ${s.intervalMs} ms after the last one answered\n\n`,
    );

    const simChild = startChild('simulator', [SIM], process.env, join(tmp, 'simulator.log'), PROJECT_ROOT);
    children.push(simChild);
    const ready = await waitForLine(simChild, (l) => l.ready === 'simulator');
    const sim = { url: String(ready.url), key: String(ready.key) };

    // `start` refuses unset variables: every shipped channel gets a dead local address; the shipped
    // alpha channel points at the simulator too, below the bench channel's priority.
    const dead = deadChannelEnv();
    const env: NodeJS.ProcessEnv = {
      ...dead,
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_DB: join(tmp, 'gateway.db'),
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      GATEWAY_WATCH: '0',
      GATEWAY_CONFIG_EXTRA: '',
      LOG_LEVEL: 'info',
      ALPHA_BASE_URL: sim.url,
      ALPHA_API_KEY: sim.key,
    };
    const shippedDir = scratchConfig(join(tmp, 'shipped'), sim.url, sim.key);
    const manyDir = scratchConfig(join(tmp, 'many'), sim.url, sim.key, s.channels);

    // ---- (a) reload time
    const rowsA: string[][] = [];
    const figures: { build: number; wall: number }[] = [];
    for (const [name, dir] of [
      ['shipped', shippedDir],
      [`shipped + ${s.channels}`, manyDir],
    ] as const) {
      const gw = await startGateway(`gateway-${figures.length}`, dir, env, tmp, children);
      const rssBefore = memory(gw.child.pid).rss;
      const t = await reloadTimes(gw.url, s.runs);
      const rssAfter = memory(gw.child.pid).rss;
      const cfg = await request(`${gw.url}/admin/config`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      const channels = ((await cfg.body.json()) as { channels: string[] }).channels.length;
      await stopChild(gw.child);
      figures.push({ build: median(t.build), wall: median(t.wall) });
      rowsA.push([
        name,
        String(channels),
        f(gw.startMs, 0),
        f(median(t.build), 0),
        f(Math.min(...t.build), 0),
        f(Math.max(...t.build), 0),
        f(median(t.wall), 0),
        f(rssBefore / 2 ** 20, 0),
        f(rssAfter / 2 ** 20, 0),
      ]);
    }
    const [base, many] = figures as [{ build: number; wall: number }, { build: number; wall: number }];
    process.stdout.write(
      `(a) reload time, median of ${s.runs}\n` +
        table(['config', 'channels', 'start ms', 'build ms', 'min', 'max', 'wall ms', 'RSS MB before', 'after'], rowsA) +
        `\n\nratio ${s.channels} channels / shipped: build x${f(many.build / base.build, 2)}, wall x${f(many.wall / base.wall, 2)}; ` +
        `${f(((many.build - base.build) * 1000) / s.channels, 0)} µs per added channel\n\n`,
    );

    // ---- (b) failed requests under repeated reloads
    const gw = await startGateway('gateway-load', shippedDir, env, tmp, children);
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'tokens', 'create', '--group', 'default'], {
      env: { ...env, GATEWAY_CONFIG_DIR: shippedDir },
      cwd: PROJECT_ROOT,
    });
    const target: LoadTarget = { origin: gw.url, path: PATH, body: BODY, headers: { authorization: `Bearer ${stdout.trim()}` } };
    const check = await request(`${gw.url}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body: BODY });
    const checkText = await check.body.text();
    if (check.statusCode !== 200) throw new Error(`the check request got HTTP ${check.statusCode}:\n${checkText.slice(0, 500)}`);

    const load = { connections: s.connections, warmupMs: s.warmupMs, durationMs: s.durationMs, maxRequests: 10_000_000, rate: s.rate };
    const quiet = await runLoad(target, load);
    let loop: ReturnType<typeof reloadLoop> | undefined;
    let stopping: Promise<void> | undefined;
    const reloading = await runLoad(target, {
      ...load,
      onWindowStart: () => (loop = reloadLoop(gw.url, join(shippedDir, 'channels.d/zz-bench.yaml'), sim, s.intervalMs)),
      onWindowEnd: () => (stopping = loop?.stop()),
    });
    await stopping;
    const rl = loop!.out;
    const failedQuiet = [...quiet.errors.values()].reduce((a, b) => a + b, 0);
    const failedReloading = [...reloading.errors.values()].reduce((a, b) => a + b, 0);
    const p99 = (r: LoadResult) => percentile(r.latencies, 0.99);
    process.stdout.write(
      `(b) ${s.rate} req/s for ${s.durationMs / 1000} s, without and with a reload every ~${s.intervalMs} ms\n` +
        table(
          ['phase', 'answered', 'failed', 'req/s', 'p50 ms', 'p99 ms', 'max ms'],
          [loadRow({ name: 'no reloads', result: quiet }), loadRow({ name: 'reloading', result: reloading })],
        ) +
        `\n\nreloads during the window: ${rl.count} (${rl.failed} failed), build ms median ${f(median(rl.build), 0)}, wall ms median ${f(median(rl.wall), 0)}\n` +
        `ratio reloading / no reloads: p50 x${f(percentile(reloading.latencies, 0.5) / percentile(quiet.latencies, 0.5), 2)}, ` +
        `p99 x${f(p99(reloading) / p99(quiet), 2)}, req/s x${f(reloading.completed / reloading.windowMs / (quiet.completed / quiet.windowMs), 2)}\n`,
    );
    const failures = [
      ...(failedQuiet > 0 ? [`no reloads: ${[...quiet.errors].map(([k, n]) => `${n} x ${k}`).join(', ')}; first: ${quiet.firstError ?? ''}`] : []),
      ...(failedReloading > 0 ? [`reloading: ${[...reloading.errors].map(([k, n]) => `${n} x ${k}`).join(', ')}; first: ${reloading.firstError ?? ''}`] : []),
      ...(rl.failed > 0 ? [`reload: ${rl.firstFailure}`] : []),
    ];
    process.stdout.write(
      failures.length > 0 ? `\nFAILED:\n${failures.join('\n')}\n` : `\nfailed requests: ${failedQuiet + failedReloading} (0 is the requirement)\n`,
    );
    await stopChild(gw.child);
    return failures.length > 0 || rl.count === 0 ? 1 : 0;
  } catch (err) {
    for (const c of children) process.stderr.write(`--- ${c.name}\n${logTail(c)}\n`);
    throw err;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench/reload failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
