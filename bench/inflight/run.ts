/**
 * Benchmark bench/inflight (issue 30, item 2): thousands of slow requests in flight. A vendor
 * simulator answers the OpenAI images route (`zeta-image-1`, `b64_json`) after `--vendor-ms`;
 * `--clients` clients each keep one request in flight (closed loop); the gateway, a bare undici
 * pass-through and the vendor called directly are measured one after the other in one run. Prints
 * requests/s, failed requests, p50/p99 and what each proxy adds over direct, CPU ms per request,
 * the peak RSS over idle per request in flight, open file descriptors, and the targets of issues 41
 * and 30 (targets.ts). `--waves` sends the clients in synchronized waves instead: all start
 * together and every vendor call takes the same time. Timings are printed, never asserted: the exit
 * code is 0 unless something crashed or a request failed.
 *
 * Usage: npm run build:test && node dist/bench/inflight/run.js [--clients N] [--vendor-ms MS]
 *        [--spread P] [--waves] [--duration S] [--profile] [--quick]   (see bench/README.md)
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { jsonLines, startChild, waitForLine, stopChild, type Child } from '../overhead/children.js';
import { percentile } from '../overhead/load.js';
import { markWindow, probeArgs, readWindow } from '../overhead/probe-client.js';
import { cpuMs, machineCpuMs, memory, watchPeak } from '../overhead/proc.js';
import { summariseProfile } from '../overhead/profile.js';
import { f, grid } from '../overhead/report.js';
import { SCENARIOS } from '../overhead/scenarios.js';
import { benchWorkspace, machineLine, deadChannelEnv } from '../workspace.js';
import { inflightConfig } from './config.js';
import { runInflight } from './load.js';
import { conclusion } from './targets.js';

const USAGE = `usage: node dist/bench/inflight/run.js [options]
  --clients N       requests in flight: clients each sending its next request when the last is answered
                    (env BENCH_CLIENTS, default 2000, max 10000; cut to what the fd limit allows, and said so)
  --vendor-ms MS    the vendor answers after MS (env BENCH_VENDOR_MS, default 5000)
  --spread P        each client's vendor delay is fixed, spread evenly over vendor-ms +/- P % (env BENCH_SPREAD,
                    default 10; 0: every call waits exactly vendor-ms)
  --waves           synchronized waves (env BENCH_WAVES=1): every client's vendor delay exactly vendor-ms (no
                    spread) and all clients started at once (no ramp); the window opens 1.5 vendor periods in,
                    between two waves
  --duration S      measured seconds per target (env BENCH_DURATION, default 4 vendor periods, at least 10)
  --quick           200 clients, a 1 s vendor, 5 s measured
  --profile         run the gateway under node --cpu-prof and print its hot spots
                    (env BENCH_PROFILE_DIR keeps the .cpuprofile there; otherwise it is deleted)
  env BENCH_GATEWAY_NODE_ARGS  more node flags for the gateway (e.g. --trace-gc), space separated
  env BENCH_KEEP_LOGS=DIR      copy the children's logs there at the end`;

const CLI = join(PROJECT_ROOT, 'dist/src/cli.js');
const OVERHEAD = join(PROJECT_ROOT, 'dist/bench/overhead');
const IMAGES = SCENARIOS.find((s) => s.name === 'images')!;
/** File descriptors kept free beside the sockets: log files, the store and its WAL, pipes, a probe. */
const FD_MARGIN = 64;

interface Settings {
  readonly clients: number;
  readonly vendorMs: number;
  /** Half the width of the spread of the vendor's delays, as a share of vendorMs. */
  readonly spread: number;
  /** Synchronized waves: no spread, no ramp. */
  readonly waves: boolean;
  readonly durationMs: number;
  readonly profile: boolean;
}

function settings(argv: string[]): Settings {
  const values = parseBenchArgs(
    argv,
    {
      clients: { type: 'string' },
      'vendor-ms': { type: 'string' },
      spread: { type: 'string' },
      waves: { type: 'boolean' },
      duration: { type: 'string' },
      quick: { type: 'boolean' },
      profile: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const env = process.env;
  const num = boundedNumber(USAGE);
  const quick = values.quick === true;
  const vendorMs = Math.round(num('--vendor-ms', values['vendor-ms'] ?? env.BENCH_VENDOR_MS, quick ? 1000 : 5000, 0, 120_000));
  const waves = values.waves === true || env.BENCH_WAVES === '1';
  const spread = num('--spread', values.spread ?? env.BENCH_SPREAD, waves ? 0 : 10, 0, 50) / 100;
  if (waves && spread > 0) {
    process.stderr.write(`--waves gives every client the same vendor delay: --spread must be 0 or absent with it\n${USAGE}\n`);
    process.exit(2);
  }
  return {
    clients: Math.round(num('--clients', values.clients ?? env.BENCH_CLIENTS, quick ? 200 : 2000, 1, 10_000)),
    vendorMs,
    spread,
    waves,
    durationMs: 1000 * num('--duration', values.duration ?? env.BENCH_DURATION, quick ? 5 : Math.max(10, (4 * vendorMs) / 1000), 1, 600),
    profile: values.profile === true,
  };
}

/** This process's limit on open files (the children inherit it). */
function fdLimit(): number {
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
}

/** Open file descriptors of a process now. */
function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** Read and write system calls a process has made so far (/proc/<pid>/io), NaN where unreadable. */
function syscalls(pid: number): number {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return Number(/^syscr: (\d+)/m.exec(io)?.[1]) + Number(/^syscw: (\d+)/m.exec(io)?.[1]);
  } catch {
    return NaN;
  }
}

/** One target of the run: where the load goes and which process does the work. */
interface Target {
  readonly name: string;
  readonly child: Child;
  readonly origin: string;
  readonly headers: Record<string, string>;
}

/** What one target measured. */
interface Row {
  readonly name: string;
  readonly completed: number;
  readonly failed: number;
  readonly firstError?: string;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Latency beyond the vendor's delay of each request: p50 and p99. */
  readonly overP50: number;
  readonly overP99: number;
  readonly maxInFlight: number;
  readonly cpuPerReq: number;
  readonly simCpuPerReq: number;
  readonly idleMb: number;
  readonly peakMb: number;
  readonly kbPerInFlight: number;
  readonly idleFds: number;
  readonly peakFds: number;
  readonly gcs: number;
  readonly gcP99Ms: number;
  readonly allocKbPerReq: number;
  readonly loopBusy: number;
  /** The target's event-loop delay in the window, beyond the probe's sampling period (probe.ts). */
  readonly loopDelayP50Ms: number;
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  /** Share of the window the load generator's own event loop was busy. */
  readonly loadBusy: number;
  /** Cores busy on the whole machine in the window, and those our processes (target, simulator, load) used. */
  readonly machineCores: number;
  readonly ourCores: number;
  /** Read and write system calls of the measured process per request (/proc/<pid>/io). */
  readonly syscallsPerReq: number;
}

/** Clients start one after another over one vendor period; in waves, all at once. */
const rampMs = (s: Settings): number => (s.waves ? 0 : s.vendorMs);

/**
 * Unmeasured time after the ramp: one vendor period (at least 1 s). In waves, one and a half, so
 * the window opens and closes between two waves (a wave's answers all come at about one moment,
 * and a window edge there would count them or not by chance).
 */
const settleMs = (s: Settings): number => Math.max(1000, (s.waves ? 1.5 : 1) * s.vendorMs);

/** What every client sends: its own vendor delay in the prompt, the same bytes to every target. */
interface Load {
  readonly bodies: readonly string[];
  readonly delays: readonly number[];
}

async function measure(t: Target, sim: Child, load: Load, s: Settings, clients: number): Promise<Row> {
  const pid = t.child.pid;
  const idle = memory(pid).rss;
  const idleFds = fdCount(pid);
  const peak = watchPeak(pid);
  let peakFds = idleFds;
  const fdTimer = setInterval(() => {
    peakFds = Math.max(peakFds, fdCount(pid));
  }, 500);
  let cpu0 = 0;
  let sim0 = 0;
  let cpu1 = 0;
  let sim1 = 0;
  let mark = 0;
  let ownElu = performance.eventLoopUtilization();
  let mach0 = machineCpuMs();
  let sys0 = 0;
  let sys1 = 0;
  let own0 = process.cpuUsage();
  let machineCores = NaN;
  let ourCores = NaN;
  let ownBusy = NaN;
  const result = await runInflight(
    { origin: t.origin, path: IMAGES.path, headers: t.headers, ...load },
    {
      clients,
      rampMs: rampMs(s),
      settleMs: settleMs(s),
      durationMs: s.durationMs,
      timeoutMs: Math.max(...load.delays) + 60_000,
      isGood: IMAGES.isImage,
      onWindowStart: () => {
        cpu0 = cpuMs(pid);
        sim0 = cpuMs(sim.pid);
        markWindow(t.child);
        ownElu = performance.eventLoopUtilization();
        mach0 = machineCpuMs();
        sys0 = syscalls(pid);
        own0 = process.cpuUsage();
      },
      onWindowEnd: () => {
        cpu1 = cpuMs(pid);
        sim1 = cpuMs(sim.pid);
        mark = markWindow(t.child);
        ownBusy = performance.eventLoopUtilization(ownElu).utilization;
        sys1 = syscalls(pid);
        const mach1 = machineCpuMs();
        const wall = mach1.busy + mach1.idle + mach1.steal - (mach0.busy + mach0.idle + mach0.steal);
        const cores = wall / s.durationMs;
        machineCores = ((mach1.busy - mach0.busy) / wall) * cores;
        const own = process.cpuUsage(own0);
        ourCores = (cpu1 - cpu0 + (t.child === sim ? 0 : sim1 - sim0) + (own.user + own.system) / 1000) / s.durationMs;
      },
    },
  );
  clearInterval(fdTimer);
  const peakBytes = peak.stop();
  const heap = await readWindow(t.child, mark);
  const failed = [...result.errors.values()].reduce((a, b) => a + b, 0);
  const n = Math.max(1, result.completed);
  return {
    name: t.name,
    completed: result.completed,
    failed,
    firstError: result.firstError,
    reqPerSec: (1000 * result.completed) / result.windowMs,
    p50: percentile(result.latencies, 0.5),
    p99: percentile(result.latencies, 0.99),
    max: result.latencies.at(-1) ?? NaN,
    overP50: percentile(result.excess, 0.5),
    overP99: percentile(result.excess, 0.99),
    maxInFlight: result.maxInFlight,
    cpuPerReq: (cpu1 - cpu0) / n,
    simCpuPerReq: (sim1 - sim0) / n,
    idleMb: idle / 2 ** 20,
    peakMb: peakBytes / 2 ** 20,
    kbPerInFlight: (peakBytes - idle) / 1024 / clients,
    idleFds,
    peakFds,
    gcs: heap.gcs,
    gcP99Ms: heap.gcP99Ms,
    allocKbPerReq: heap.allocatedBytes / 1024 / n,
    loopBusy: heap.loopBusy ?? NaN,
    loopDelayP50Ms: heap.loopDelayP50Ms ?? NaN,
    loopDelayP99Ms: heap.loopDelayP99Ms ?? NaN,
    loopDelayMaxMs: heap.loopDelayMaxMs ?? NaN,
    loadBusy: ownBusy,
    machineCores,
    ourCores,
    syscallsPerReq: (sys1 - sys0) / n,
  };
}

/** One request to a target, checked for a 200 answer carrying an image, before any load. */
async function sanityCheck(t: Target, body: string): Promise<void> {
  const res = await request(`${t.origin}${IMAGES.path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body });
  const text = await res.body.text();
  let ok = false;
  try {
    ok = IMAGES.isImage(text);
  } catch {
    ok = false;
  }
  if (res.statusCode !== 200 || !ok) throw new Error(`${t.name}: the check request got HTTP ${res.statusCode}, not an image:\n${text.slice(0, 500)}`);
}

async function main(): Promise<number> {
  const s = settings(process.argv.slice(2));
  const { tmp, children, cleanup } = benchWorkspace<Child>('gateway-inflight-');
  const profileDir = process.env.BENCH_PROFILE_DIR || join(tmp, 'profile');
  try {
    // The vendor's delay rides in the prompt (src/sim/faults.ts, `slow-headers`), so the three
    // targets get the very same bytes and the simulator waits the same for each. Each client has a
    // delay of its own, spread evenly around vendor-ms (golden-ratio steps over the range): with one
    // delay for all, a closed loop keeps every client in the phase it fell into, so any pause (a GC,
    // the scheduler) bunches the requests it held up for the rest of the run, and later requests
    // queue behind the bunch. Real vendors vary; this keeps arrivals steady. Latency is then judged
    // beyond each request's own delay. --waves asks for that lockstep on purpose (spread 0, no ramp):
    // every wave of answers arrives at once, the worst case a proxy's queueing can meet.
    const request0 = JSON.parse(IMAGES.body) as Record<string, unknown>;
    const delays = Array.from({ length: Math.min(s.clients, 1000) }, (_, i) =>
      Math.round(s.vendorMs * (1 - s.spread + 2 * s.spread * ((i * 0.6180339887498949) % 1))),
    );
    const bodies = delays.map((ms) => JSON.stringify({ ...request0, prompt: `${String(request0.prompt)} [sim:fault=slow-headers:${ms}]` }));
    const load: Load = { bodies, delays };
    const body = bodies[0]!;
    const limit = fdLimit();

    const sim = startChild(
      'simulator',
      [...probeArgs(), join(OVERHEAD, 'sim-process.js')],
      { ...process.env, BENCH_SIM_PROFILE: IMAGES.simProfile },
      join(tmp, 'simulator.log'),
      PROJECT_ROOT,
    );
    children.push(sim);
    const ready = await waitForLine(sim, (l) => l.ready === 'simulator');
    const simUrl = String(ready.url);
    const simKey = String(ready.key);
    const auth = IMAGES.auth(simKey);

    const configDir = join(tmp, 'config');
    inflightConfig(configDir);
    const otherChannels = deadChannelEnv();
    const gwEnv = {
      ...otherChannels,
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_CONFIG_DIR: configDir,
      GATEWAY_DB: join(tmp, 'gateway.db'),
      GATEWAY_WATCH: '0',
      LOG_LEVEL: 'info',
      ...IMAGES.gatewayEnv(simUrl, simKey),
    };
    const apiKey = (
      await promisify(execFile)(process.execPath, [CLI, 'tokens', 'create', '--group', 'default'], { env: gwEnv, cwd: PROJECT_ROOT })
    ).stdout.trim();
    const pass = startChild(
      'passthrough',
      [...probeArgs(), join(OVERHEAD, 'passthrough.js')],
      {
        ...process.env,
        BENCH_SIM_URL: simUrl,
        BENCH_AUTH_HEADER: auth.header,
        BENCH_AUTH_VALUE: auth.value,
        BENCH_UPSTREAM_PATH: IMAGES.upstreamPath,
        BENCH_UPSTREAM_CONNECTIONS: String(s.clients),
      },
      join(tmp, 'passthrough.log'),
      PROJECT_ROOT,
    );
    children.push(pass);
    if (s.profile) mkdirSync(profileDir, { recursive: true });
    const oldProfiles = new Set(s.profile ? readdirSync(profileDir) : []);
    const extra = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const gwArgs = [...probeArgs(), ...extra, ...(s.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), CLI, 'start'];
    const gw = startChild('gateway', gwArgs, gwEnv, join(tmp, 'gateway.log'), PROJECT_ROOT);
    children.push(gw);
    const passUrl = String((await waitForLine(pass, (l) => l.ready === 'passthrough')).url);
    const gwUrl = String((await waitForLine(gw, (l) => l.msg === 'gateway listening')).url);

    // A proxy holds two sockets per request in flight (its client's and its vendor call's) besides
    // what it holds idle; the limit on open files is per process and cannot be raised here, so it
    // caps the requests in flight one proxy can carry. Run the largest count it allows, and say so.
    await new Promise((r) => setTimeout(r, 1000));
    const idleFds = Math.max(fdCount(gw.pid), fdCount(pass.pid));
    const allowed = Math.floor((limit - idleFds - FD_MARGIN) / 2);
    const clients = Math.min(s.clients, allowed);
    const common = { authorization: `Bearer ${apiKey}` };
    const targets: Target[] = [
      { name: 'direct', child: sim, origin: simUrl, headers: { ...common, [auth.header]: auth.value } },
      { name: 'passthrough', child: pass, origin: passUrl, headers: common },
      { name: 'gateway', child: gw, origin: gwUrl, headers: common },
    ];
    process.stdout.write(
      machineLine('bench/inflight') +
        `OpenAI images route (zeta-image-1, b64_json), a vendor answering after ${s.vendorMs} ms; ${clients} clients in a closed loop, ` +
        (s.waves
          ? `in synchronized waves: all started at once, every vendor delay exactly ${s.vendorMs} ms`
          : `started over ${s.vendorMs} ms, each with its own vendor delay in ${s.vendorMs} ms +/- ${f(100 * s.spread, 0)} %`) +
        `; per target ${rampMs(s) / 1000} s ramp + ${settleMs(s) / 1000} s settle + ${s.durationMs / 1000} s measured\n` +
        'gateway: the shipped config (the zeta-images channel, its pool without a bound of its own)\n' +
        `open files: limit ${limit} per process; a proxy holds ${idleFds} idle + 2 per request in flight, so at most ${allowed} in flight\n`,
    );
    if (clients < s.clients)
      process.stdout.write(
        `  ASKED FOR ${s.clients} CLIENTS, RAN ${clients}: ${s.clients} in flight need ${idleFds + 2 * s.clients} descriptors in one proxy, over the limit of ${limit}\n`,
      );
    process.stdout.write('\n');

    await Promise.all(targets.map((t) => sanityCheck(t, body)));
    await new Promise((r) => setTimeout(r, 2000));

    const rows: Row[] = [];
    for (const t of targets) {
      process.stderr.write(`bench/inflight: ${t.name}, ${clients} clients…\n`);
      rows.push(await measure(t, sim, load, s, clients));
      // Let sockets close and the next target start from quiet.
      await new Promise((r) => setTimeout(r, 2000));
    }
    const [direct, passRow, gwRow] = rows as [Row, Row, Row];
    const table = grid(
      // One name per cell of the rows below, in their order.
      [
        'target',
        'req/s',
        'failed',
        'p50 ms',
        'p99 ms',
        'max ms',
        'over p50',
        'over p99',
        '+p50',
        '+p99',
        'CPU ms/req',
        'sim CPU',
        'r/w calls/req',
        'KB/req',
        'GCs',
        'GC p99',
        'loop busy',
        'loop p50',
        'loop p99',
        'loop max',
        'load busy',
        'our cores',
        'all cores',
        'idle MB',
        'peak MB',
        'KB/in flight',
        'fds idle',
        'fds peak',
      ],
      rows.map((r) => [
        r.name,
        f(r.reqPerSec, 1),
        String(r.failed),
        f(r.p50, 1),
        f(r.p99, 1),
        f(r.max, 1),
        f(r.overP50, 1),
        f(r.overP99, 1),
        r === direct ? '' : f(r.overP50 - direct.overP50, 1),
        r === direct ? '' : f(r.overP99 - direct.overP99, 1),
        f(r.cpuPerReq, 3),
        f(r.simCpuPerReq, 3),
        f(r.syscallsPerReq, 1),
        f(r.allocKbPerReq, 1),
        String(r.gcs),
        f(r.gcP99Ms, 1),
        `${f(100 * r.loopBusy, 0)} %`,
        f(r.loopDelayP50Ms, 1),
        f(r.loopDelayP99Ms, 1),
        f(r.loopDelayMaxMs, 1),
        `${f(100 * r.loadBusy, 0)} %`,
        f(r.ourCores, 2),
        f(r.machineCores, 2),
        f(r.idleMb, 0),
        f(r.peakMb, 0),
        f(r.kbPerInFlight, 1),
        String(r.idleFds),
        String(r.peakFds),
      ]),
    );
    process.stdout.write(`${table}\n\n`);

    const failed = rows.reduce((n, r) => n + r.failed, 0);
    const lines = conclusion(direct, passRow, gwRow, { clients, asked: s.clients, vendorMs: s.vendorMs, waves: s.waves });
    process.stdout.write(`${lines.join('\n')}\n`);
    for (const r of rows) if (r.firstError) process.stdout.write(`\n${r.name}: first failure: ${r.firstError}\n`);
    const gwLogs = jsonLines(gw).filter((l) => l.probe === undefined);
    const loud = gwLogs.filter((l) => typeof l.level === 'number' && l.level >= 40).length;
    process.stdout.write(`\ngateway log (LOG_LEVEL=info): ${gwLogs.length} line(s), ${loud} at warn or above\n`);

    if (s.profile) {
      await stopChild(gw);
      const files = readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile') && !oldProfiles.has(name));
      for (const file of files) {
        process.stdout.write('\ngateway CPU profile (whole process life; profiling inflates CPU figures)\n');
        process.stdout.write(`${summariseProfile(join(profileDir, file), PROJECT_ROOT, 30)}\n`);
        if (process.env.BENCH_PROFILE_DIR) process.stdout.write(`kept ${join(profileDir, file)}\n`);
      }
    }
    return failed > 0 || rows.some((r) => r.completed === 0) ? 1 : 0;
  } finally {
    // BENCH_KEEP_LOGS=DIR keeps the children's logs (the gateway's access lines) for a closer look.
    if (process.env.BENCH_KEEP_LOGS)
      cpSync(tmp, process.env.BENCH_KEEP_LOGS, { recursive: true, filter: (src) => !src.includes('/config') && !src.endsWith('.db') });
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench/inflight failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
