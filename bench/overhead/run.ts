/**
 * Benchmark bench/overhead: the gateway and a bare undici pass-through proxy in front of the same
 * alpha simulator, with the same request, in one run; plus the simulator called directly as the
 * floor. Prints req/s, p50/p99 latency, CPU ms per request and RSS of each, their ratios, and
 * whether the issue's targets are met. Two phases: a closed loop (flat out, where the targets are
 * judged) and a paced one at a rate all three sustain (the latency added when nothing queues). Timings are printed, never asserted: the exit code is 0
 * unless something crashed or a request failed (then the figures are not comparable).
 *
 * Usage: npm run bench [-- --quick] [--duration S] [--warmup S] [--connections N] [--rounds N]
 *        [--rate R] [--max-requests N] [--profile]   (see bench/README.md)
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { benchWorkspace, machineLine } from '../workspace.js';
import { request } from 'undici';
import { channelEnvNames } from '../../src/config/env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { jsonLines, startChild, stopChild, waitForLine, type Child } from './children.js';
import { percentile, runLoad, type LoadTarget } from './load.js';
import { cpuMs, machineCpuMs, memory } from './proc.js';
import { summariseProfile } from './profile.js';
import { medianRow, table, verdict, type Row } from './report.js';

const USAGE = `usage: npm run bench [-- options]
  --quick             short smoke run: 0.3 s warm-up, 1.5 s measured per target
  --duration S        measured seconds per target (env BENCH_DURATION, default 5)
  --warmup S          unmeasured seconds before each window (env BENCH_WARMUP, default 1)
  --connections N     concurrent connections = requests in flight (env BENCH_CONNECTIONS, default 50)
  --rounds N          repeat direct, passthrough, gateway N times; report medians (env BENCH_ROUNDS, default 1)
  --rate R            requests/s of the paced phase over the same connections; 0 skips it
                      (env BENCH_RATE, default: half the slowest closed-loop req/s)
  --max-requests N    close a window early after N requests (env BENCH_MAX_REQUESTS, default 1000000)
  --profile           run the gateway under node --cpu-prof and print its hot spots
                      (env BENCH_PROFILE_DIR keeps the .cpuprofile there; otherwise it is deleted)`;

const PATH = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
/** A small, valid text-to-image request of the alpha route (interface.md 2.1). */
const BODY = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: 'a red bicycle' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
});
const CLI = join(PROJECT_ROOT, 'dist/src/cli.js');
const HERE = join(PROJECT_ROOT, 'dist/bench/overhead');

interface Settings {
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly connections: number;
  readonly rounds: number;
  readonly maxRequests: number;
  /** Paced phase rate; undefined picks half the slowest closed-loop throughput, 0 skips it. */
  readonly rate: number | undefined;
  readonly profile: boolean;
}

function settings(argv: string[]): Settings {
  const values = parseBenchArgs(
    argv,
    {
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      rate: { type: 'string' },
      'max-requests': { type: 'string' },
      profile: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const env = process.env;
  const num = boundedNumber(USAGE);
  const quick = values.quick === true;
  return {
    durationMs: 1000 * num('--duration', values.duration ?? env.BENCH_DURATION, quick ? 1.5 : 5, 0.2, 120),
    warmupMs: 1000 * num('--warmup', values.warmup ?? env.BENCH_WARMUP, quick ? 0.3 : 1, 0, 30),
    connections: Math.round(num('--connections', values.connections ?? env.BENCH_CONNECTIONS, 50, 1, 1000)),
    rounds: Math.round(num('--rounds', values.rounds ?? env.BENCH_ROUNDS, 1, 1, 10)),
    maxRequests: Math.round(num('--max-requests', values['max-requests'] ?? env.BENCH_MAX_REQUESTS, 1_000_000, 100, 10_000_000)),
    rate: (values.rate ?? env.BENCH_RATE) ? Math.round(num('--rate', values.rate ?? env.BENCH_RATE, 0, 0, 100_000)) : undefined,
    profile: values.profile === true,
  };
}

/** One request to a target, checked for a 200 answer carrying a PNG, before any load is sent. */
async function sanityCheck(name: string, target: LoadTarget): Promise<void> {
  const res = await request(`${target.origin}${target.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
  });
  const text = await res.body.text();
  let ok = false;
  try {
    const parts = (JSON.parse(text) as { candidates?: { content?: { parts?: { inlineData?: { mimeType?: string } }[] } }[] }).candidates?.[0]?.content?.parts;
    ok = parts?.some((p) => p.inlineData?.mimeType === 'image/png') ?? false;
  } catch {
    ok = false;
  }
  if (res.statusCode !== 200 || !ok) throw new Error(`${name}: the check request got HTTP ${res.statusCode}, not an image:\n${text.slice(0, 500)}`);
}

/** Drives one target for one window and reads the processes' counters at the window's edges. */
async function measure(name: string, target: LoadTarget, pid: number, simPid: number, s: Settings, rate: number): Promise<{ row: Row; errors: string[] }> {
  let machine0 = machineCpuMs();
  let machine1 = machine0;
  let cpu0 = 0;
  let sim0 = 0;
  let self0 = process.cpuUsage();
  let cpu1 = 0;
  let sim1 = 0;
  let self1 = self0;
  const result = await runLoad(target, {
    connections: s.connections,
    warmupMs: s.warmupMs,
    durationMs: s.durationMs,
    maxRequests: s.maxRequests,
    rate,
    onWindowStart: () => {
      machine0 = machineCpuMs();
      cpu0 = cpuMs(pid);
      sim0 = cpuMs(simPid);
      self0 = process.cpuUsage();
    },
    onWindowEnd: () => {
      machine1 = machineCpuMs();
      cpu1 = cpuMs(pid);
      sim1 = cpuMs(simPid);
      self1 = process.cpuUsage(self0);
    },
  });
  const mem = memory(pid);
  const n = result.completed;
  const selfMs = (self1.user + self1.system) / 1000;
  const measuredMs = cpu1 - cpu0;
  const simMs = sim1 - sim0;
  const errors = [...result.errors.values()].reduce((a, b) => a + b, 0);
  const row: Row = {
    name,
    reqPerSec: (n * 1000) / result.windowMs,
    p50: percentile(result.latencies, 0.5),
    p99: percentile(result.latencies, 0.99),
    max: percentile(result.latencies, 1),
    cpuPerReq: measuredMs / n,
    simCpuPerReq: simMs / n,
    loadCpuPerReq: selfMs / n,
    busyCores: (measuredMs + (pid === simPid ? 0 : simMs) + selfMs) / result.windowMs,
    machineCores: (machine1.busy - machine0.busy) / result.windowMs,
    stealPct: (100 * (machine1.steal - machine0.steal)) / Math.max(1, machine1.busy + machine1.idle + machine1.steal - (machine0.busy + machine0.idle + machine0.steal)),
    rssMb: mem.rss / 2 ** 20,
    peakMb: mem.peak / 2 ** 20,
    completed: n,
    errors,
  };
  const lines = [...result.errors].map(([kind, count]) => `${name}: ${count} x ${kind}`);
  if (result.firstError) lines.push(`${name}: first failure: ${result.firstError.slice(0, 300)}`);
  return { row, errors: lines };
}

async function main(): Promise<number> {
  const s = settings(process.argv.slice(2));
  const { tmp, children, cleanup } = benchWorkspace<Child>('gateway-bench-');
  const profileDir = process.env.BENCH_PROFILE_DIR || join(tmp, 'profile');

  try {
    process.stdout.write(
      machineLine('bench/overhead') +
        `${s.connections} connections; per target and phase ${s.warmupMs / 1000} s warm-up + ${s.durationMs / 1000} s measured; ` +
        `${s.rounds} round(s); request: ${Buffer.byteLength(BODY)} B text-to-image, POST ${PATH}\n\n`,
    );

    const sim = startChild('simulator', [join(HERE, 'sim-process.js')], process.env, join(tmp, 'simulator.log'), PROJECT_ROOT);
    children.push(sim);
    const simReady = await waitForLine(sim, (l) => l.ready === 'simulator');
    const simUrl = String(simReady.url);
    const simKey = String(simReady.key);

    const pass = startChild(
      'passthrough',
      [join(HERE, 'passthrough.js')],
      { ...process.env, BENCH_SIM_URL: simUrl, BENCH_SIM_KEY: simKey },
      join(tmp, 'passthrough.log'),
      PROJECT_ROOT,
    );
    children.push(pass);

    // Every other channel gets a dead local address: `start` refuses unset variables, and this
    // benchmark measures the alpha route only.
    const otherChannels = Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, n.endsWith('_BASE_URL') ? 'http://127.0.0.1:9' : 'unused']));
    const gwEnv = {
      ...otherChannels,
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_DB: join(tmp, 'gateway.db'),
      LOG_LEVEL: 'info',
      ALPHA_BASE_URL: simUrl,
      ALPHA_API_KEY: simKey,
    };
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'tokens', 'create', '--group', 'default'], { env: gwEnv, cwd: PROJECT_ROOT });
    const apiKey = stdout.trim();
    if (s.profile) mkdirSync(profileDir, { recursive: true });
    const oldProfiles = new Set(s.profile ? readdirSync(profileDir) : []);
    const gwArgs = s.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir, CLI, 'start'] : [CLI, 'start'];
    const gw = startChild('gateway', gwArgs, gwEnv, join(tmp, 'gateway.log'), PROJECT_ROOT);
    children.push(gw);

    const passUrl = String((await waitForLine(pass, (l) => l.ready === 'passthrough')).url);
    const gwUrl = String((await waitForLine(gw, (l) => l.msg === 'gateway listening')).url);

    // The same request to all three; the bearer key is the gateway's and ignored by the others.
    const common = { authorization: `Bearer ${apiKey}` };
    const targets: { name: string; pid: number; target: LoadTarget }[] = [
      { name: 'direct', pid: sim.pid, target: { origin: simUrl, path: PATH, body: BODY, headers: { ...common, 'x-goog-api-key': simKey } } },
      { name: 'passthrough', pid: pass.pid, target: { origin: passUrl, path: PATH, body: BODY, headers: common } },
      { name: 'gateway', pid: gw.pid, target: { origin: gwUrl, path: PATH, body: BODY, headers: common } },
    ];
    for (const t of targets) await sanityCheck(t.name, t.target);

    const errorLines: string[] = [];
    /** Every target for every round at one rate (0: closed loop); the per-target medians. */
    const phase = async (title: string, rate: number): Promise<[Row, Row, Row]> => {
      const rows = new Map<string, Row[]>(targets.map((t) => [t.name, []]));
      for (let round = 1; round <= s.rounds; round++) {
        // Later rounds alternate the order so slow drift on the machine does not favour one target.
        const order = round % 2 === 1 ? targets : [...targets].reverse();
        for (const t of order) {
          const { row, errors } = await measure(t.name, t.target, t.pid, sim.pid, s, rate);
          rows.get(t.name)!.push(row);
          errorLines.push(...errors.map((e) => `${title}, ${e}`));
          await new Promise((r) => setTimeout(r, 200));
        }
        if (s.rounds > 1) process.stdout.write(`${title}, round ${round}\n${table(targets.map((t) => rows.get(t.name)!.at(-1)!))}\n\n`);
      }
      const summary = targets.map((t) => medianRow(rows.get(t.name)!)) as [Row, Row, Row];
      process.stdout.write(`${title}${s.rounds > 1 ? `, median of ${s.rounds} rounds` : ''}\n${table(summary)}\n`);
      process.stdout.write(`load generator CPU ms/req: ${summary.map((r) => `${r.name} ${r.loadCpuPerReq.toFixed(3)}`).join(', ')}\n\n`);
      return summary;
    };

    const closed = await phase(`closed loop, ${s.connections} connections`, 0);
    const slowest = Math.min(...closed.map((r) => r.reqPerSec));
    const rate = s.rate ?? Math.max(10, Math.floor(slowest / 2 / 10) * 10);
    const paced = rate > 0 ? { rate, rows: await phase(`paced at ${rate} req/s over ${s.connections} connections`, rate) } : undefined;
    process.stdout.write(
      'CPU ms/req: the measured process only (the simulator itself for direct); sim CPU ms/req: the same simulator work behind every row.\n' +
        'our cores: measured process + simulator + load generator; all cores: the whole machine (of ' +
        `${cpus().length}), kernel included.\n\n`,
    );
    const v = verdict(closed, paced);
    process.stdout.write(`${v.text}\n`);

    const gwLogs = jsonLines(gw);
    const loud = gwLogs.filter((l) => typeof l.level === 'number' && l.level >= 40).length;
    process.stdout.write(`\ngateway log (LOG_LEVEL=info): ${gwLogs.length} line(s), ${loud} at warn or above\n`);
    if (errorLines.length > 0) process.stdout.write(`\nFAILED REQUESTS (figures are not comparable):\n${errorLines.join('\n')}\n`);

    if (s.profile) {
      await stopChild(gw);
      const files = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && !oldProfiles.has(f));
      if (files.length === 0) process.stdout.write('\nno .cpuprofile was written by the gateway\n');
      for (const f of files) {
        process.stdout.write(`\ngateway CPU profile (whole process life: start-up, warm-up and windows; profiling inflates CPU figures)\n`);
        process.stdout.write(`${summariseProfile(join(profileDir, f), PROJECT_ROOT)}\n`);
        if (process.env.BENCH_PROFILE_DIR) process.stdout.write(`kept ${join(profileDir, f)}\n`);
      }
    }
    const failed = errorLines.length > 0 || [...closed, ...(paced?.rows ?? [])].some((r) => r.completed === 0);
    return failed ? 1 : 0;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench/overhead failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
