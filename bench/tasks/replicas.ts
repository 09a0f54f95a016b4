/**
 * bench/tasks on PostgreSQL. `--store postgres`: the task load served by one gateway replica on
 * PostgreSQL. `--replicas N`: the same load served by one replica (the baseline) and then by N
 * replicas sharing the tasks by lease, in the same run, against one simulator process. For each
 * run: the submission rate, the lag from vendor finish to terminal state (p50, p99, max), upstream
 * calls (looks) per task per poll interval, the gateways' CPU per task (all replicas together),
 * how the followed tasks were spread, and the statements the tasks table saw; then N against 1 as
 * ratios. Each run has a schema of its own, dropped after it.
 *
 * Usage: npm run build && node dist/bench/tasks/run.js --store postgres [--replicas N] [--tasks T] [--window-ms M]
 *        [--connections C] [--interval-ms I] [--lease-ms L]; needs DATABASE_URL (PostgreSQL).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { benchWorkspace, machineLine } from '../workspace.js';
import { f, int, percentile, table } from './figures.js';
import { startIpcChild, type IpcChild } from './ipc.js';
import type { MethodCalls } from './store-calls.js';

const USAGE = `usage: npm run build --silent && DATABASE_URL=postgres://… node dist/bench/tasks/run.js --store postgres [--replicas N] [options]
  --store postgres    the PostgreSQL runs (implied by --replicas); without --replicas, one replica only
  --replicas N        replicas of the measured run (2-8), after a baseline of one replica in the same run
  --tasks T           tasks per run (default 10000)
  --window-ms M       the vendor finishes each task uniformly within M ms of its submission (default 60000)
  --connections C     concurrent submissions, spread over the replicas (default 32)
  --interval-ms I     override every channel's polling.interval_ms (default: the config's, 5000)
  --concurrency K     override every channel's polling.concurrency (default: the config's, 16)
  --lease-ms L        GATEWAY_TASK_LEASE_MS of the replicas (default 30000)
quick runs: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node dist/bench/tasks/run.js --store postgres --tasks 2000 --window-ms 10000
            DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node dist/bench/tasks/run.js --replicas 3 --tasks 1000 --window-ms 5000`;

const HERE = join(PROJECT_ROOT, 'dist/bench/tasks');
const pct = (share: number): string => `${f(100 * share, 1)} %`;
const POLL_STORE_MS = 500;

interface Settings {
  /** Replicas of the measured run; null: the one-replica run alone. */
  readonly replicas: number | null;
  readonly tasks: number;
  readonly windowMs: number;
  readonly connections: number;
  readonly intervalMs: number | undefined;
  readonly concurrency: number | undefined;
  readonly leaseMs: number;
}

function settings(argv: string[]): Settings {
  const values = parseBenchArgs(
    argv,
    {
      store: { type: 'string' },
      replicas: { type: 'string' },
      tasks: { type: 'string' },
      'window-ms': { type: 'string' },
      connections: { type: 'string' },
      'interval-ms': { type: 'string' },
      concurrency: { type: 'string' },
      'lease-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const num = boundedNumber(USAGE);
  if (values.store !== undefined && values.store !== 'postgres') {
    process.stderr.write(`--store: only "postgres" runs here (the SQLite run is bench/tasks without --store), got "${values.store}"\n${USAGE}\n`);
    process.exit(2);
  }
  return {
    replicas: values.replicas === undefined ? null : Math.round(num('--replicas', values.replicas, 3, 2, 8)),
    tasks: Math.round(num('--tasks', values.tasks, 10_000, 1, 100_000)),
    windowMs: Math.round(num('--window-ms', values['window-ms'], 60_000, 0, 600_000)),
    connections: Math.round(num('--connections', values.connections, 32, 1, 512)),
    intervalMs: values['interval-ms'] === undefined ? undefined : num('--interval-ms', values['interval-ms'], 5000, 100, 600_000),
    concurrency: values.concurrency === undefined ? undefined : Math.round(num('--concurrency', values.concurrency, 16, 1, 1024)),
    leaseMs: Math.round(num('--lease-ms', values['lease-ms'], 30_000, 300, 600_000)),
  };
}

interface GatewayStats {
  poller: { queries: number; batchQueries: number; updates: number };
  followed: number;
  usage: NodeJS.ResourceUsage;
  /** The poller's `gateway_task_poll_lag_seconds` histogram since start: [le, cumulative count] (and the sum and count). */
  pollLag: [string | number, number][];
  /** Event-loop delay in ms since the last `loop-reset`. */
  loop: { p99: number; max: number };
  /** The store's method calls in this gateway since it started (./store-calls.ts). */
  store: Record<string, MethodCalls>;
}

/** The shares of the replicas' looks that started late, from their poll-lag histograms (cumulative buckets). */
function lateLooks(stats: readonly GatewayStats[]): RunFigures['lateLooks'] {
  let total = 0;
  const within = new Map<number, number>();
  for (const st of stats)
    for (const [le, n] of st.pollLag) {
      if (le === '+Inf') total += n;
      else if (typeof le === 'number') within.set(le, (within.get(le) ?? 0) + n);
    }
  const over = (le: number) => (total === 0 ? 0 : 1 - (within.get(le) ?? 0) / total);
  return { over100ms: over(0.1), over500ms: over(0.5), over1s: over(1) };
}

/** The store calls of all the replicas between two readings of their stats, by method. */
function storeCallsBetween(before: readonly GatewayStats[], after: readonly GatewayStats[]): Map<string, MethodCalls> {
  const out = new Map<string, MethodCalls>();
  after.forEach((st, i) => {
    for (const [name, c] of Object.entries(st.store)) {
      const b = before[i]?.store[name] ?? { calls: 0, ms: 0 };
      const sum = out.get(name) ?? { calls: 0, ms: 0 };
      sum.calls += c.calls - b.calls;
      sum.ms += c.ms - b.ms;
      out.set(name, sum);
    }
  });
  return out;
}
const cpuOf = (s: GatewayStats): number => (s.usage.userCPUTime + s.usage.systemCPUTime) / 1000;
type SimStats = Record<string, Record<string, number>>;

/** What one run (one replica or N) measured. */
interface RunFigures {
  readonly replicas: number;
  readonly accepted: number;
  readonly submitRate: number;
  readonly submitP99: number;
  readonly lagP50: number;
  readonly lagP99: number;
  /** Lag p99 of the tasks the vendor finished while the submissions ran, and after. */
  readonly lagP99During: number;
  readonly lagP99After: number;
  readonly lagMax: number;
  readonly terminal: number;
  readonly callsPerTaskInterval: number;
  readonly cpuPerTask: number;
  readonly followedAtPeak: readonly number[];
  /** Looks the simulator answered (single task queries). */
  readonly looks: number;
  /** The gateways' store calls from the first submission to the last terminal state, by method. */
  readonly storeCalls: Map<string, MethodCalls>;
  /** Of all the looks of the replicas, the shares that started more than 0.1, 0.5 and 1 s after the task fell due. */
  readonly lateLooks: { over100ms: number; over500ms: number; over1s: number };
  /** Each replica's event-loop delay after the submissions (p99, max ms). */
  readonly loopAfter: { p99: number; max: number }[];
  /** The tasks table's own counters at the end (pg_stat_user_tables): statements that found rows by index, rows updated. */
  readonly table: { readonly idxScans: number; readonly seqScans: number; readonly rowsUpdated: number } | null;
  readonly errors: number;
}

/**
 * The tasks table's counters of a schema: index and sequential scans (about one per statement that
 * reads or writes the table, whatever the rows it touches) and rows updated. Read after the
 * gateways exited, since a server process reports its counts when its transaction ends or it exits.
 */
async function tableCounters(db: pg.Client, schema: string): Promise<RunFigures['table']> {
  const { rows } = await db.query<{ idx: string | null; seq: string; upd: string }>(
    'SELECT idx_scan AS idx, seq_scan AS seq, n_tup_upd AS upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2',
    [schema, 'tasks'],
  );
  const r = rows[0];
  return r ? { idxScans: Number(r.idx ?? 0), seqScans: Number(r.seq), rowsUpdated: Number(r.upd) } : null;
}

/** One run: `n` gateway processes on a schema of their own, the load, the wait, the figures. */
async function runOnce(n: number, s: Settings, sim: IpcChild, simUrls: unknown, databaseUrl: string, tmp: string, children: IpcChild[]): Promise<RunFigures> {
  const schema = `bench_tasks_${process.pid}_${randomBytes(3).toString('hex')}_${n}`;
  const url = new URL(databaseUrl);
  url.searchParams.set('schema', schema);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const gateways: IpcChild[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        BENCH_DB: url.href,
        BENCH_SIMS: JSON.stringify(simUrls),
        BENCH_REPLICA: `bench-r${i + 1}`,
        BENCH_LEASE_MS: String(s.leaseMs),
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        ...(s.intervalMs !== undefined ? { BENCH_INTERVAL_MS: String(s.intervalMs) } : {}),
        ...(s.concurrency !== undefined ? { BENCH_CONCURRENCY: String(s.concurrency) } : {}),
      };
      const gw = startIpcChild(`gateway ${i + 1}`, join(HERE, 'gateway-process.js'), env, join(tmp, `gateway-${n}-${i + 1}.log`), PROJECT_ROOT);
      children.push(gw);
      gateways.push(gw);
    }
    const ready = await Promise.all(gateways.map((g) => g.ready));
    const channels = ready[0]!.channels as { name: string; models: string[]; tasks: boolean; intervalMs: number }[];
    const zeta = channels.find((c) => c.tasks && c.models.includes('epsilon-video-3'));
    if (!zeta) throw new Error('no channel serves epsilon-video-3 with a task protocol; check channels.yaml');

    const stats0 = await Promise.all(gateways.map((g) => g.request<GatewayStats>('stats')));
    const sims0 = await sim.request<SimStats>('stats');
    // Finish times from one seeded sequence, so both runs ask the vendor for the same ones.
    let seed = 1;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pools = ready.map(
      (r) => new Pool(String(r.url), { connections: Math.ceil(s.connections / n), pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 }),
    );
    const sent: { at: number; done: number; id: string | null }[] = [];
    let next = 0;
    let errors = 0;
    const submitter = async (): Promise<void> => {
      for (;;) {
        const i = next++;
        if (i >= s.tasks) return;
        const r = i % n;
        const at = Date.now();
        try {
          const res = await pools[r]!.request({
            method: 'POST',
            path: '/v1/video/generations',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${String(ready[r]!.key)}` },
            body: JSON.stringify({ model: 'epsilon-video-3', prompt: `bench task ${i} [sim:finish=${Math.floor(random() * s.windowMs)}]` }),
          });
          const json = (await res.body.json()) as { id?: string };
          if (res.statusCode === 200 && typeof json.id === 'string') sent.push({ at, done: Date.now(), id: json.id });
          else errors++;
        } catch {
          errors++;
        }
      }
    };
    const start = Date.now();
    await Promise.all(Array.from({ length: s.connections }, submitter));
    const submitEnd = Date.now();
    // From here the replicas only poll: their event loops' delay is the poller's own.
    await Promise.all(gateways.map((g) => g.request('loop-reset')));
    await Promise.all(pools.map((p) => p.close()));
    const followed = (await Promise.all(gateways.map((g) => g.request<GatewayStats>('stats')))).map((st) => st.followed);

    // Until every accepted task is terminal in the store (bounded).
    const interval = s.intervalMs ?? zeta.intervalMs;
    const deadline = submitEnd + s.windowMs + 10 * interval + 30_000;
    let terminal = 0;
    while (Date.now() < deadline) {
      terminal = Number((await db.query(`SELECT count(*) AS n FROM "${schema}".tasks WHERE completed_at IS NOT NULL`)).rows[0].n);
      if (terminal >= sent.length) break;
      await new Promise((r) => setTimeout(r, POLL_STORE_MS));
    }
    const stats1 = await Promise.all(gateways.map((g) => g.request<GatewayStats>('stats')));
    const sims1 = await sim.request<SimStats>('stats');

    type Row = { id: string; upstream_id: string | null; completed_at: string | null };
    const rows = (await db.query<Row>(`SELECT id, upstream_id, completed_at FROM "${schema}".tasks`)).rows;
    const upstream = rows.filter((r) => r.upstream_id !== null);
    const vendor = await sim.request<Record<string, Float64Array>>('tasks', { 'zeta-openai': upstream.map((r) => r.upstream_id) });
    const at = vendor['zeta-openai']!;
    const lags: number[] = [];
    // Split by when the vendor finished: while the submissions ran (the poller shares the process
    // with them) or after; tells which phase the late looks belong to.
    const lagsDuring: number[] = [];
    const lagsAfter: number[] = [];
    let taskIntervals = 0;
    upstream.forEach((r, i) => {
      const [created, finish] = [at[3 * i]!, at[3 * i + 1]!];
      if (r.completed_at === null || !Number.isFinite(finish)) return;
      const lag = Number(r.completed_at) - finish;
      lags.push(lag);
      (finish <= submitEnd ? lagsDuring : lagsAfter).push(lag);
      taskIntervals += (Number(r.completed_at) - created) / interval;
    });
    const queries = (sims1['zeta-openai']?.queries ?? 0) - (sims0['zeta-openai']?.queries ?? 0);
    const cpu = stats1.reduce((sum, st, i) => sum + cpuOf(st) - cpuOf(stats0[i]!), 0);
    const submitSpan = (submitEnd - start) / 1000;
    for (const g of gateways.splice(0)) {
      g.proc.kill('SIGTERM');
      await g.exited;
    }
    return {
      replicas: n,
      accepted: sent.length,
      submitRate: sent.length / submitSpan,
      submitP99: percentile(
        sent.map((x) => x.done - x.at),
        0.99,
      ),
      lagP50: percentile(lags, 0.5),
      lagP99: percentile(lags, 0.99),
      lagMax: percentile(lags, 1),
      lagP99During: percentile(lagsDuring, 0.99),
      lagP99After: percentile(lagsAfter, 0.99),
      terminal,
      callsPerTaskInterval: queries / Math.max(1, taskIntervals),
      cpuPerTask: cpu / Math.max(1, sent.length),
      followedAtPeak: followed,
      looks: queries,
      storeCalls: storeCallsBetween(stats0, stats1),
      loopAfter: stats1.map((st) => st.loop),
      lateLooks: lateLooks(stats1),
      table: await tableCounters(db, schema),
      errors,
    };
  } finally {
    for (const g of gateways) {
      g.proc.kill('SIGTERM');
      await g.exited;
    }
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db.end();
  }
}

export async function runReplicas(argv: string[]): Promise<number> {
  const s = settings(argv);
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write(`--store postgres and --replicas run on PostgreSQL: set DATABASE_URL\n${USAGE}\n`);
    return 2;
  }
  const { tmp, children, cleanup } = benchWorkspace<IpcChild>('gateway-bench-replicas-');
  try {
    process.stdout.write(machineLine(s.replicas === null ? 'bench/tasks --store postgres' : `bench/tasks --replicas ${s.replicas}`));
    process.stdout.write(
      `${s.tasks} epsilon-video-3 tasks per run, vendor finish uniform in 0-${s.windowMs} ms, ${s.connections} submit connections spread over the replicas; ` +
        `PostgreSQL store, task lease ${s.leaseMs} ms; ${s.replicas === null ? 'one replica' : `one replica (baseline), then ${s.replicas}`}\n\n`,
    );
    const sim = startIpcChild('simulators', join(HERE, 'sim-process.js'), process.env, join(tmp, 'simulators.log'), PROJECT_ROOT);
    children.push(sim);
    const simUrls = (await sim.ready).sims;
    const runs: RunFigures[] = [];
    for (const n of s.replicas === null ? [1] : [1, s.replicas]) {
      process.stderr.write(`run with ${n} replica(s)…\n`);
      runs.push(await runOnce(n, s, sim, simUrls, databaseUrl, tmp, children));
    }
    const [one, many] = runs as [RunFigures, RunFigures | undefined];
    const row = (r: RunFigures) => [
      `${r.replicas} replica${r.replicas > 1 ? 's' : ''}`,
      `${r.accepted}/${s.tasks}`,
      f(r.submitRate, 0),
      f(r.submitP99, 0),
      f(r.lagP50, 0),
      f(r.lagP99, 0),
      `${f(r.lagP99During, 0)} / ${f(r.lagP99After, 0)}`,
      f(r.lagMax, 0),
      `${r.terminal}`,
      f(r.callsPerTaskInterval, 3),
      f(r.cpuPerTask, 3),
      r.followedAtPeak.map((x) => int(x)).join(' / '),
      r.table ? f(r.table.idxScans / Math.max(1, r.looks), 2) : '-',
      r.table ? f(r.table.rowsUpdated / Math.max(1, r.looks), 2) : '-',
    ];
    process.stdout.write(
      `${table(
        [
          'run',
          'accepted',
          'submit/s',
          'submit p99 ms',
          'lag p50 ms',
          'lag p99 ms',
          'p99 during / after submits',
          'lag max ms',
          'terminal',
          'calls/task/interval',
          'CPU ms/task',
          'followed per replica',
          'index scans/look',
          'rows updated/look',
        ],
        runs.map(row),
      )}\n\n` +
        (many
          ? `${many.replicas} replicas / 1: submit rate x${f(many.submitRate / one.submitRate, 2)}, lag p99 x${f(many.lagP99 / one.lagP99, 2)}, ` +
            `CPU per task (all replicas) x${f(many.cpuPerTask / one.cpuPerTask, 2)}, calls per task per interval x${f(many.callsPerTaskInterval / one.callsPerTaskInterval, 2)}\n`
          : '') +
        `(lag: vendor finish -> terminal in the store; p99 during / after submits: of the tasks the vendor finished while the submissions ran / after them; calls: the looks the vendor answered; CPU: the gateway processes' own, summed; ` +
        `followed: tasks each replica's poller followed when the submissions ended; index scans and rows updated: the tasks table's counters ` +
        `(pg_stat_user_tables: about one index scan per statement that finds tasks by id, whatever their number; the submissions' and the runner's included) over the looks)\n` +
        runs
          .map(
            (r) =>
              `store calls of ${r.replicas} replica${r.replicas > 1 ? 's' : ''}, per look (mean wait from call to answer): ` +
              [...r.storeCalls]
                .filter(([, c]) => c.calls > 0)
                .sort((a, b) => b[1].calls - a[1].calls)
                .map(([name, c]) => `${name} ${f(c.calls / Math.max(1, r.looks), 3)} (${f(c.ms / c.calls, 1)} ms)`)
                .join(', '),
          )
          .join('\n') +
        '\n' +
        runs
          .map(
            (r) =>
              `${r.replicas} replica${r.replicas > 1 ? 's' : ''}: looks started late (after the task fell due, waiting for a slot): ` +
              `${pct(r.lateLooks.over100ms)} over 0.1 s, ${pct(r.lateLooks.over500ms)} over 0.5 s, ${pct(r.lateLooks.over1s)} over 1 s; ` +
              `event-loop delay after the submissions (p99 / max ms): ${r.loopAfter.map((l) => `${f(l.p99, 0)} / ${f(l.max, 0)}`).join(', ')}`,
          )
          .join('\n') +
        '\n' +
        `targets (issue 30, information only): calls per task per interval >= 0.95 and lag p99 < 6 s with one replica, no worse with several: ` +
        `${runs.map((r) => `${r.replicas}: ${r.callsPerTaskInterval >= 0.95 && r.lagP99 < 6000 ? 'OK' : 'MISSED'}`).join(', ')}\n`,
    );
    return runs.some((r) => r.errors > 0 || r.terminal < r.accepted) ? 1 : 0;
  } finally {
    await cleanup();
  }
}
