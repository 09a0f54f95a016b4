/**
 * Benchmark bench/tasks: many asynchronous tasks in flight at once. Submits N video tasks
 * (epsilon-video-3 on the zeta-openai channel, plus a share on iota-native when such a channel is
 * configured) through the gateway; the simulated vendor finishes each at a random time within the
 * window after submission (`[sim:finish=MS]`); the gateway's poller follows them at its configured
 * interval. Prints the submission rate, the time from each task's vendor finish to its terminal
 * state in the gateway's store, upstream calls per task and per task per poll interval, the
 * gateway's CPU time and peak RSS, the ratios against an ideal poller, and whether the issue's
 * targets are met. Three processes: simulators, gateway, and this runner (load generator + reader).
 *
 * Usage: npm run build && node dist/bench/tasks/run.js [--tasks N] [--window-ms M] [--connections C] [--rate R]
 *        [--interval-ms I] [--concurrency K] [--iota-share F] [--seed S] [--timeout-ms T]
 *        (see bench/README.md); with --store postgres, one replica on PostgreSQL, and with --replicas N,
 *        one replica against N there (replicas.ts)
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { benchWorkspace, machineLine } from '../workspace.js';
import Database from 'libsql';
import { Pool } from 'undici';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { cpuMs, machineCpuMs, memory } from '../overhead/proc.js';
import { callRow, delayRow, f, int, percentile, table, timeline, TIMELINE_HEAD, type ChannelInfo, type Sample, type TaskFacts } from './figures.js';
import { startIpcChild, type IpcChild } from './ipc.js';

const USAGE = `usage: npm run build --silent && node dist/bench/tasks/run.js [options]
  --tasks N           tasks to submit (env BENCH_TASKS, default 10000)
  --window-ms M       the vendor finishes each task uniformly within M ms of its submission
                      (env BENCH_WINDOW_MS, default 60000)
  --connections C     concurrent submissions (env BENCH_CONNECTIONS, default 32)
  --rate R            submissions per second; 0 = as fast as the gateway takes them (default 0)
  --interval-ms I     override every channel's polling.interval_ms (default: the config's, 5000)
  --concurrency K     override every channel's polling.concurrency (default: the config's, 16)
  --iota-share F      share of tasks sent to an iota-native channel (batch queries); default 0.1
                      when channels.yaml has one, else 0
  --seed S            seed of the finish times (default 1)
  --timeout-ms T      give up waiting for terminal states T ms after the last submission
                      (default: window + 10 intervals + 30 s)
  --store postgres    run on PostgreSQL (DATABASE_URL) instead, one replica; with --replicas N, one against N
                      (bench/tasks/replicas.ts; node dist/bench/tasks/run.js --store postgres --help)
quick run: node dist/bench/tasks/run.js --tasks 500 --window-ms 5000`;

const HERE = join(PROJECT_ROOT, 'dist/bench/tasks');
/** The issue's targets. */
const TARGETS = { maxDelayMs: 15_000, maxCallsPerTaskInterval: 2, maxPeakRssMb: 300 } as const;
const READ_EVERY_MS = 500;

interface Settings {
  readonly tasks: number;
  readonly windowMs: number;
  readonly connections: number;
  readonly rate: number;
  readonly intervalMs: number | undefined;
  readonly concurrency: number | undefined;
  readonly iotaShare: number | undefined;
  readonly seed: number;
  readonly timeoutMs: number | undefined;
}

function settings(argv: string[]): Settings {
  const values = parseBenchArgs(
    argv,
    {
      tasks: { type: 'string' },
      'window-ms': { type: 'string' },
      connections: { type: 'string' },
      rate: { type: 'string' },
      'interval-ms': { type: 'string' },
      concurrency: { type: 'string' },
      'iota-share': { type: 'string' },
      seed: { type: 'string' },
      'timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const env = process.env;
  const num = boundedNumber(USAGE);
  const opt = (name: string, raw: string | undefined, min: number, max: number): number | undefined =>
    raw === undefined || raw === '' ? undefined : num(name, raw, 0, min, max);
  return {
    tasks: Math.round(num('--tasks', values.tasks ?? env.BENCH_TASKS, 10_000, 1, 100_000)),
    windowMs: Math.round(num('--window-ms', values['window-ms'] ?? env.BENCH_WINDOW_MS, 60_000, 0, 600_000)),
    connections: Math.round(num('--connections', values.connections ?? env.BENCH_CONNECTIONS, 32, 1, 512)),
    rate: num('--rate', values.rate, 0, 0, 100_000),
    intervalMs: opt('--interval-ms', values['interval-ms'], 100, 600_000),
    concurrency: opt('--concurrency', values.concurrency, 1, 1024),
    iotaShare: opt('--iota-share', values['iota-share'], 0, 1),
    seed: Math.round(num('--seed', values.seed, 1, 0, 2 ** 31)),
    timeoutMs: opt('--timeout-ms', values['timeout-ms'], 1_000, 3_600_000),
  };
}

/** mulberry32: a small seeded PRNG, so two runs ask the vendor for the same finish times. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface GatewayStats {
  poller: { queries: number; batchQueries: number; updates: number };
  followed: number;
  usage: NodeJS.ResourceUsage;
  memory: NodeJS.MemoryUsage;
  loop: { mean: number; p50: number; p99: number; max: number };
}
type SimStats = Record<string, Record<string, number>>;
const cpuOf = (s: GatewayStats): number => (s.usage.userCPUTime + s.usage.systemCPUTime) / 1000;
/** Task queries the simulators answered: single look-ups plus batch calls. */
const vendorQueries = (s: SimStats): number => Object.values(s).reduce((n, c) => n + (c.queries ?? 0) + (c.batch_queries ?? 0), 0);
const vendorBatches = (s: SimStats): number => Object.values(s).reduce((n, c) => n + (c.batch_queries ?? 0), 0);

/** One planned task. */
interface Planned {
  readonly channel: ChannelInfo;
  readonly path: string;
  readonly body: string;
  sentAt: number;
  acceptedAt: number;
  id: string | null;
}

async function main(): Promise<number> {
  const s = settings(process.argv.slice(2));
  const { tmp, children, cleanup } = benchWorkspace<IpcChild>('gateway-bench-tasks-');
  const storeUrl = join(tmp, 'gateway.db');

  try {
    process.stdout.write(machineLine('bench/tasks'));

    // 1. Simulators, then the gateway pointed at them, each in its own process.
    const sim = startIpcChild('simulators', join(HERE, 'sim-process.js'), process.env, join(tmp, 'simulators.log'), PROJECT_ROOT);
    children.push(sim);
    const sims = (await sim.ready).sims as Record<string, { url: string; secrets: Record<string, string> }>;
    const gwEnv: NodeJS.ProcessEnv = {
      ...process.env,
      BENCH_DB: storeUrl,
      BENCH_SIMS: JSON.stringify(sims),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      ...(s.intervalMs !== undefined ? { BENCH_INTERVAL_MS: String(s.intervalMs) } : {}),
      ...(s.concurrency !== undefined ? { BENCH_CONCURRENCY: String(s.concurrency) } : {}),
    };
    const gw = startIpcChild('gateway', join(HERE, 'gateway-process.js'), gwEnv, join(tmp, 'gateway.log'), PROJECT_ROOT);
    children.push(gw);
    const ready = await gw.ready;
    const gwUrl = String(ready.url);
    const apiKey = String(ready.key);
    const channels = ready.channels as (ChannelInfo & { models: string[]; tasks: boolean })[];

    const zeta = channels.find((c) => c.tasks && c.models.includes('epsilon-video-3'));
    if (!zeta) throw new Error('no channel serves epsilon-video-3 with a task protocol; check channels.yaml');
    const iota = channels.find((c) => c.tasks && c.profile === 'iota-native' && c.batchMaxIds !== null);
    if (!iota && (s.iotaShare ?? 0) > 0) {
      process.stderr.write('--iota-share needs an iota-native channel with a batch query in channels.yaml; there is none\n');
      return 2;
    }
    const iotaShare = iota ? (s.iotaShare ?? 0.1) : 0;
    const intervalOf = new Map(channels.map((c) => [c.name, c.intervalMs]));

    // 2. The plan: each task's route and finish time, drawn from a seeded PRNG.
    const random = prng(s.seed);
    const plan: Planned[] = [];
    for (let i = 0; i < s.tasks; i++) {
      const finish = Math.floor(random() * s.windowMs);
      const toIota = iota !== undefined && random() < iotaShare;
      const prompt = `bench task ${i} [sim:finish=${finish}]`;
      plan.push(
        toIota
          ? {
              channel: iota,
              path: '/iota/submit/music',
              body: JSON.stringify({ mv: iota.models[0] ?? 'iota-v4.5', prompt }),
              sentAt: NaN,
              acceptedAt: NaN,
              id: null,
            }
          : {
              channel: zeta,
              path: '/v1/video/generations',
              body: JSON.stringify({ model: 'epsilon-video-3', prompt }),
              sentAt: NaN,
              acceptedAt: NaN,
              id: null,
            },
      );
    }
    const nIota = plan.filter((p) => p.channel === iota).length;
    const describe = (c: ChannelInfo): string =>
      `${c.name} [${c.profile}] interval ${c.intervalMs} ms, concurrency ${c.concurrency}${c.batchMaxIds ? `, batch queries of up to ${c.batchMaxIds}` : ''}`;
    process.stdout.write(
      `${s.tasks} tasks, vendor finish uniform in 0-${s.windowMs} ms after submission (seed ${s.seed}); ` +
        `${s.connections} submit connections, ${s.rate > 0 ? `${s.rate}/s` : 'as fast as accepted'}\n` +
        `  ${s.tasks - nIota} x epsilon-video-3 via POST /v1/video/generations on ${describe(zeta)}\n` +
        (iota
          ? `  ${nIota} x ${iota.models[0] ?? 'iota-v4.5'} via POST /iota/submit/music on ${describe(iota)}\n`
          : '  iota-native: no such channel in channels.yaml, so no batch queries in this run\n') +
        '\n',
    );

    // 3. Watch the store: a read-only connection to the gateway's SQLite file, every 500 ms.
    const reader = new Database(`file:${storeUrl}?mode=ro`);
    const newlyTerminal = reader.prepare('SELECT id, completed_at FROM tasks WHERE completed_at IS NOT NULL AND completed_at >= ?');
    const seen = new Map<string, number>();
    let watermark = 0;
    const readStore = (): void => {
      const now = Date.now();
      for (const row of newlyTerminal.all(watermark) as { id: string; completed_at: number }[]) {
        if (!seen.has(row.id)) seen.set(row.id, now);
        // Rows commit a little after their completed_at; re-read the last 10 s so none is missed.
        watermark = Math.max(watermark, row.completed_at - 10_000);
      }
    };

    const samples: Sample[] = [];
    const takeSample = async (): Promise<{ gws: GatewayStats; sims: SimStats }> => {
      const [gws, sims] = await Promise.all([gw.request<GatewayStats>('stats'), sim.request<SimStats>('stats')]);
      samples.push({
        at: Date.now(),
        gatewayCpuMs: cpuMs(gw.pid),
        gatewayRssMb: memory(gw.pid).rss / 2 ** 20,
        gatewayHeapMb: gws.memory.heapUsed / 2 ** 20,
        vendorQueries: vendorQueries(sims) - vendorBatches(sims),
        vendorBatches: vendorBatches(sims),
        followed: gws.followed,
      });
      return { gws, sims };
    };

    // 4. Submit. Counters are read at the edges: idle, submissions over, all terminal.
    const idle = await takeSample();
    await gw.request('loop-reset');
    const start = Date.now();
    const runnerCpu0 = process.cpuUsage();
    const simCpu0 = cpuMs(sim.pid);
    const machine0 = machineCpuMs();
    const sampleMs = Math.max(1000, Math.min(5000, Math.round(s.windowMs / 10)));
    const sampler = setInterval(() => {
      takeSample().then(
        ({ gws }) => {
          const last = samples.at(-1)!;
          process.stderr.write(
            `t ${f((last.at - start) / 1000, 0)} s: submitted ${plan.filter((p) => p.id !== null).length}, terminal ${seen.size}, followed ${gws.followed}, gateway RSS ${f(last.gatewayRssMb, 0)} MB\n`,
          );
        },
        () => undefined,
      );
    }, sampleMs);
    const watcher = setInterval(readStore, READ_EVERY_MS);

    const pool = new Pool(gwUrl, { connections: s.connections, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
    const errors = new Map<string, number>();
    let firstError: string | undefined;
    let next = 0;
    const origin = performance.now();
    const submitter = async (): Promise<void> => {
      for (;;) {
        const i = next++;
        if (i >= plan.length) return;
        if (s.rate > 0) {
          const wait = origin + (i * 1000) / s.rate - performance.now();
          if (wait > 0.5) await new Promise((r) => setTimeout(r, wait));
        }
        const p = plan[i]!;
        p.sentAt = Date.now();
        try {
          const res = await pool.request({ method: 'POST', path: p.path, headers, body: p.body });
          const text = await res.body.text();
          p.acceptedAt = Date.now();
          const json = res.statusCode === 200 ? (JSON.parse(text) as { id?: unknown; data?: unknown }) : null;
          const id = json ? (p.channel === zeta ? json.id : json.data) : null;
          if (typeof id === 'string') p.id = id;
          else {
            const kind = `HTTP ${res.statusCode}`;
            errors.set(kind, (errors.get(kind) ?? 0) + 1);
            firstError ??= `${kind}: ${text.slice(0, 300)}`;
          }
        } catch (err) {
          const e = err as { code?: string; message?: string };
          errors.set(e.code ?? 'Error', (errors.get(e.code ?? 'Error') ?? 0) + 1);
          firstError ??= `${e.code ?? 'Error'}: ${e.message ?? String(err)}`;
        }
      }
    };
    await Promise.all(Array.from({ length: s.connections }, submitter));
    await pool.close();
    const submitted = plan.filter((p) => p.id !== null);
    const submitEnd = Date.now();
    const afterSubmit = await takeSample();

    // 5. Wait until every accepted task is terminal in the store, or give up.
    const maxInterval = Math.max(zeta.intervalMs, iota?.intervalMs ?? 0);
    const timeoutMs = s.timeoutMs ?? s.windowMs + 10 * maxInterval + 30_000;
    const ids = new Set(submitted.map((p) => p.id!));
    const allSeen = (): boolean => {
      for (const id of ids) if (!seen.has(id)) return false;
      return true;
    };
    while (!allSeen() && Date.now() < submitEnd + timeoutMs) await new Promise((r) => setTimeout(r, READ_EVERY_MS));
    clearInterval(watcher);
    clearInterval(sampler);
    readStore();
    const end = Date.now();
    const final = await takeSample();
    const runnerCpu = process.cpuUsage(runnerCpu0);
    const simCpu = cpuMs(sim.pid) - simCpu0;
    const machine1 = machineCpuMs();
    const gwMem = memory(gw.pid);
    const timedOut = !allSeen();

    // 6. Join the store's records with the simulators' tasks.
    type Row = { id: string; upstream_id: string | null; channel: string; status: string; created_at: number; completed_at: number | null };
    const rows = new Map((reader.prepare('SELECT id, upstream_id, channel, status, created_at, completed_at FROM tasks').all() as Row[]).map((r) => [r.id, r]));
    reader.close();
    const profileOf = new Map(channels.map((c) => [c.name, c.profile]));
    const askIds: Record<string, string[]> = {};
    for (const p of submitted) {
      const r = rows.get(p.id!);
      if (!r?.upstream_id) continue;
      (askIds[profileOf.get(r.channel)!] ??= []).push(r.upstream_id);
    }
    const vendor = await sim.request<Record<string, Float64Array>>('tasks', askIds);
    const vendorAt = new Map<string, [number, number, number]>();
    for (const [profile, list] of Object.entries(askIds)) {
      const a = vendor[profile]!;
      list.forEach((uid, i) => {
        vendorAt.set(`${profile}/${uid}`, [a[3 * i]!, a[3 * i + 1]!, a[3 * i + 2]!]);
      });
    }
    const facts: TaskFacts[] = submitted.map((p) => {
      const r = rows.get(p.id!);
      const v = r?.upstream_id ? vendorAt.get(`${profileOf.get(r.channel)}/${r.upstream_id}`) : undefined;
      return {
        channel: r?.channel ?? p.channel.name,
        sentAt: p.sentAt,
        acceptedAt: p.acceptedAt,
        createdAt: r?.created_at ?? NaN,
        completedAt: r?.completed_at ?? NaN,
        status: r?.status ?? 'missing',
        vendorCreatedAt: v?.[0] ?? NaN,
        finishAt: v?.[1] ?? NaN,
        polls: v?.[2] ?? NaN,
        seenAt: seen.get(p.id!) ?? NaN,
      };
    });

    // 7. Report.
    const out: string[] = [];
    // reduce, not Math.max(...list): 100,000 arguments overflow the stack.
    const submitSpan = (submitted.reduce((m, p) => Math.max(m, p.acceptedAt), -Infinity) - submitted.reduce((m, p) => Math.min(m, p.sentAt), Infinity)) / 1000;
    const submitMs = submitted.map((p) => p.acceptedAt - p.sentAt);
    const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
    out.push(
      'submission',
      `  accepted ${submitted.length} of ${plan.length} in ${f(submitSpan, 2)} s: ${f(submitted.length / submitSpan, 0)} tasks/s; ` +
        `submit latency p50 ${f(percentile(submitMs, 0.5), 0)} ms, p99 ${f(percentile(submitMs, 0.99), 0)} ms, max ${f(percentile(submitMs, 1), 0)} ms; errors ${errorCount}`,
      ...[...errors].map(([kind, n]) => `  ${n} x ${kind}`),
      ...(firstError ? [`  first failure: ${firstError}`] : []),
      '',
    );

    out.push(
      `timeline (counts exact, from the store and the simulators; backlog = finished at the vendor, not yet terminal in the gateway; ` +
        `ideal queries/s = single queries an ideal poller would send then (one per task per interval from vendor acceptance until one sees the end); ` +
        `the rest sampled every ${sampleMs / 1000} s: followed = tasks the poller follows, ` +
        `queries/s = single task queries the simulators answered, batch calls/s = batch queries, each for several tasks)`,
      table(
        TIMELINE_HEAD,
        timeline(facts, samples, start, zeta.intervalMs, (name) => channels.find((c) => c.name === name)?.batchMaxIds === null),
      ),
      '',
    );

    const groups = [...new Set(facts.map((t) => t.channel))].map((name) => ({ name, tasks: facts.filter((t) => t.channel === name) }));
    const delayRows = groups.map((g) => delayRow(g.name, g.tasks, intervalOf.get(g.name) ?? 5000, TARGETS.maxDelayMs));
    const all = delayRow('all', facts, maxInterval, TARGETS.maxDelayMs);
    if (groups.length > 1) delayRows.push(all);
    out.push(
      "vendor finish -> terminal in the gateway's store (completed_at: the gateway's clock at the look that saw the end; the vendor's finish time from the simulator)",
      table(
        ['channel', 'tasks', 'terminal', 'p50 ms', 'p99 ms', 'max ms', 'mean ms', `> 1.1 interval`, `> ${TARGETS.maxDelayMs / 1000} s`],
        delayRows.map((r) => [
          r.name,
          String(r.tasks),
          String(r.terminal),
          f(r.p50, 0),
          f(r.p99, 0),
          f(r.max, 0),
          f(r.mean, 0),
          String(r.late),
          String(r.overTarget),
        ]),
      ),
    );
    const seenLag = facts.filter((t) => Number.isFinite(t.seenAt) && Number.isFinite(t.completedAt)).map((t) => t.seenAt - t.completedAt);
    const statusCount = new Map<string, number>();
    for (const t of facts) statusCount.set(t.status, (statusCount.get(t.status) ?? 0) + 1);
    out.push(
      `  final states: ${[...statusCount].map(([k, n]) => `${k} ${n}`).join(', ')}${timedOut ? `  (gave up ${timeoutMs / 1000} s after the last submission)` : ''}`,
      `  check: found by the runner's ${READ_EVERY_MS} ms reads p50 ${f(percentile(seenLag, 0.5), 0)} ms, p99 ${f(percentile(seenLag, 0.99), 0)} ms, max ${f(percentile(seenLag, 1), 0)} ms after completed_at`,
      '',
    );

    const simStats = final.sims;
    const gwPoller = final.gws.poller;
    const callRows = groups.map((g) => {
      const profile = profileOf.get(g.name)!;
      const c = simStats[profile] ?? {};
      const info = channels.find((x) => x.name === g.name)!;
      return { info, row: callRow(g.name, g.tasks, (c.queries ?? 0) + (c.batch_queries ?? 0), info.intervalMs, info.batchMaxIds) };
    });
    const totalCalls = callRows.reduce((n, r) => n + r.row.calls, 0);
    const totalIdeal = callRows.reduce((n, r) => n + r.row.idealCalls, 0);
    const totalIntervals = callRows.reduce((n, r) => n + r.row.taskIntervals, 0);
    out.push(
      'upstream task queries (counted by the simulators; ideal: one look per interval on a grid from vendor acceptance until one sees the end)',
      table(
        [
          'channel',
          'tasks',
          'calls',
          'tasks/call',
          'calls/task',
          'ideal calls',
          'calls/ideal',
          'task-intervals',
          'calls/task/interval',
          'looks/task p50',
          'p99',
          'max',
        ],
        callRows.map(({ row: r }) => [
          r.name,
          String(r.tasks),
          String(r.calls),
          f(r.tasksPerCall, 2),
          f(r.calls / r.tasks, 2),
          f(r.idealCalls, 0),
          `x${f(r.calls / r.idealCalls, 2)}`,
          f(r.taskIntervals, 0),
          f(r.calls / r.taskIntervals, 3),
          f(r.pollsP50, 0),
          f(r.pollsP99, 0),
          f(r.pollsMax, 0),
        ]),
      ),
      `  gateway poller.stats: queries ${gwPoller.queries}, batchQueries ${gwPoller.batchQueries}, updates ${gwPoller.updates}; ` +
        `simulators: ${vendorQueries(simStats)} task queries (${gwPoller.queries + gwPoller.batchQueries === vendorQueries(simStats) ? 'equal' : 'DIFFERENT'})`,
      '',
    );

    const cpuIdle = cpuOf(idle.gws);
    const cpuSubmit = cpuOf(afterSubmit.gws) - cpuIdle;
    const cpuPoll = cpuOf(final.gws) - cpuOf(afterSubmit.gws);
    const callsAfterSubmit = vendorQueries(final.sims) - vendorQueries(afterSubmit.sims);
    const peakMb = (final.gws.usage.maxRSS * 1024) / 2 ** 20;
    const loop = final.gws.loop;
    const span = (end - start) / 1000;
    out.push(
      `gateway process (pid ${gw.pid}; its own process.resourceUsage(), so CPU and RSS are the gateway's alone)`,
      `  CPU: ${int(cpuSubmit + cpuPoll)} ms over ${f(span, 1)} s (${f((cpuSubmit + cpuPoll) / span / 10, 0)}% of one core); ` +
        `submission phase ${int(cpuSubmit)} ms (${f(cpuSubmit / submitted.length, 3)} ms/task, polling included), ` +
        `after it ${int(cpuPoll)} ms (${f(cpuPoll / Math.max(1, callsAfterSubmit), 3)} ms per upstream query, ${callsAfterSubmit} queries)`,
      `  CPU per task, all phases: ${f((cpuSubmit + cpuPoll) / submitted.length, 3)} ms; start-up before load: ${int(cpuIdle)} ms`,
      `  RSS: idle ${f(idle.gws.memory.rss / 2 ** 20, 1)} MB, peak ${f(peakMb, 1)} MB (maxRSS; /proc VmHWM ${f(gwMem.peak / 2 ** 20, 1)} MB), ` +
        `end ${f(final.gws.memory.rss / 2 ** 20, 1)} MB; heap used at end ${f(final.gws.memory.heapUsed / 2 ** 20, 1)} MB`,
      `  event loop delay during the load (beyond the 10 ms sampling period): mean ${f(loop.mean, 1)} ms, p50 ${f(loop.p50, 1)} ms, p99 ${f(loop.p99, 1)} ms, max ${f(loop.max, 1)} ms`,
      `other processes: simulators CPU ${int(simCpu)} ms; runner CPU ${int((runnerCpu.user + runnerCpu.system) / 1000)} ms`,
      `machine: ${f((machine1.busy - machine0.busy) / (end - start), 2)} of ${cpus().length} cores busy on average during the load, ` +
        `${f((cpuSubmit + cpuPoll + simCpu + (runnerCpu.user + runnerCpu.system) / 1000) / (end - start), 2)} of them ours ` +
        `(the rest is other work on the machine: distrust the timings when it is large); steal ${f((100 * (machine1.steal - machine0.steal)) / Math.max(1, machine1.busy + machine1.idle + machine1.steal - machine0.busy - machine0.idle - machine0.steal), 1)} %`,
      '',
    );

    out.push(
      `gateway / ideal: time in the gateway (created -> terminal) mean ${f(all.meanLife / 1000, 2)} s vs ${f(all.meanIdealLife / 1000, 2)} s if terminal at vendor finish: x${f(all.meanLife / all.meanIdealLife, 2)}; ` +
        `upstream calls ${totalCalls} vs ${f(totalIdeal, 0)}: x${f(totalCalls / totalIdeal, 2)}; calls per task per interval ${f(totalCalls / totalIntervals, 3)} vs 1: x${f(totalCalls / totalIntervals, 2)}`,
      '',
    );

    const label = (ok: boolean): string => (ok ? 'OK' : 'MISSED');
    const delayOk = !timedOut && all.terminal === facts.length && all.max <= TARGETS.maxDelayMs;
    const callsOk = totalCalls / totalIntervals <= TARGETS.maxCallsPerTaskInterval;
    out.push(
      'targets (information only; figures from a shared machine are noisy):',
      `  every task terminal within ${TARGETS.maxDelayMs / 1000} s of vendor finish: max ${f(all.max / 1000, 2)} s, ${all.overTarget + (facts.length - all.terminal)} over it or never terminal  ${label(delayOk)}`,
      `  upstream calls per task per poll interval <= ${TARGETS.maxCallsPerTaskInterval} on average: ${f(totalCalls / totalIntervals, 3)} (${f(totalCalls / facts.length, 2)} per task)  ${label(callsOk)}`,
      `  gateway peak RSS < ${TARGETS.maxPeakRssMb} MB: ${f(peakMb, 1)} MB  ${label(peakMb < TARGETS.maxPeakRssMb)}`,
    );

    const logLines = readFileSync(gw.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'));
    const loud = logLines.filter((l) => {
      try {
        return (JSON.parse(l) as { level?: number }).level! >= 40;
      } catch {
        return false;
      }
    });
    out.push(
      '',
      `gateway log (LOG_LEVEL=${gwEnv.LOG_LEVEL}): ${logLines.length} line(s), ${loud.length} at warn or above${loud[0] ? `; first: ${loud[0].slice(0, 300)}` : ''}`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
    return errorCount > 0 || timedOut ? 1 : 0;
  } finally {
    await cleanup();
  }
}

// `--store postgres` runs on PostgreSQL, and `--replicas N` compares one replica there with N (replicas.ts).
const argv = process.argv.slice(2);
const replicasRun = argv.some((a) => a === '--replicas' || a.startsWith('--replicas=') || a === '--store' || a.startsWith('--store='));
(replicasRun ? import('./replicas.js').then((m) => m.runReplicas(argv)) : main()).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench/tasks failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
