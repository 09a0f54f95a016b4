/**
 * Benchmark bench/overhead: the gateway and a bare undici pass-through proxy in front of the same
 * simulator, with the same request, in one run; plus the simulator called directly as the floor.
 * Two routes (scenarios.ts): alpha generateContent and the OpenAI images route. Prints req/s,
 * p50/p99 latency, CPU ms, V8 heap KB allocated and GC pause p99 per request of each, its event
 * loop's delay (p50/p99/max), idle and peak RSS, their ratios, a big-body phase (N alpha bodies of S MB at once: peak RSS against the bytes in
 * flight), and whether the issue's targets are met. Two load phases per route: a closed loop (flat
 * out) and a paced one at a rate all three sustain (the latency added when nothing queues).
 * Timings are printed, never asserted: the exit code is 0 unless something crashed or a request
 * failed (then the figures are not comparable).
 *
 * Usage: npm run bench [-- --quick] [--scenario alpha|images|both] [--duration S] [--warmup S]
 *        [--connections N] [--rounds N] [--rate R] [--max-requests N] [--big-bodies N]
 *        [--big-body-mb S] [--profile]   (see bench/README.md)
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { benchWorkspace, machineLine, deadChannelEnv } from '../workspace.js';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { bigBodies, bigBodyTable, type BigBodyResult } from './big-bodies.js';
import { jsonLines, startChild, stopChild, waitForLine, type Child } from './children.js';
import { SECOND_GATEWAYS, secondGatewayReport, type SecondFigures, type SecondGateway } from './second-gateway.js';
import { FLOOR } from './verdict.js';
import { runPhase, type Target } from './measure.js';
import { probeArgs } from './probe-client.js';
import { memory } from './proc.js';
import { summariseProfile } from './profile.js';
import { f, grid, type Row } from './report.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import { judgedRows, verdict, type PhaseFigures, type RouteFigures } from './verdict.js';

const USAGE = `usage: npm run bench [-- options]
  --quick             short smoke run: 0.3 s warm-up, 1.5 s measured per target, 10 x 5 MB big bodies
  --scenario W        alpha, images or both (env BENCH_SCENARIO, default both)
  --duration S        measured seconds per target (env BENCH_DURATION, default 5)
  --warmup S          unmeasured seconds before each window (env BENCH_WARMUP, default 1)
  --connections N     concurrent connections = requests in flight (env BENCH_CONNECTIONS, default 50)
  --rounds N          repeat direct, passthrough, gateway N times; report medians (env BENCH_ROUNDS, default 1)
  --rate R            requests/s of the paced phase over the same connections; 0 skips it
                      (env BENCH_RATE, default: half the slowest closed-loop req/s of each route;
                      issue 41's targets are judged at --rate 700)
  --max-requests N    close a window early after N requests (env BENCH_MAX_REQUESTS, default 1000000)
  --big-bodies N      alpha bodies sent at once in the big-body phase; 0 skips it (env BENCH_BIG_BODIES, default 10)
  --big-body-mb S     size of each, in MB (env BENCH_BIG_BODY_MB, default 20, the route's limit; 5 with --quick)
  --second WHAT       a second gateway beside the first, alike but for one setting, as a fourth target,
                      and what that setting costs per request: log (the request log off,
                      GATEWAY_REQUEST_LOG_DAYS=0), store-loop (the embedded store on the event loop,
                      GATEWAY_STORE_THREAD=0) or none (env BENCH_SECOND, default log)
  --log-cost on|off   off: the same as --second none (env BENCH_LOG_COST)
  --profile           run the gateway under node --cpu-prof and print its hot spots
                      (env BENCH_PROFILE_DIR keeps the .cpuprofile there; otherwise it is deleted)`;

const CLI = join(PROJECT_ROOT, 'dist/src/cli.js');
const HERE = join(PROJECT_ROOT, 'dist/bench/overhead');
/** How long after the first idle reading the settled one is taken: the gateway's heap trim needs a few quiet seconds. */
const SETTLE_MS = 12_000;
/** Seconds after start of the settled reading (the first is 1 s after). */
const SETTLED_AT_S = 1 + SETTLE_MS / 1000;

interface Settings {
  readonly scenarios: readonly Scenario[];
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly connections: number;
  readonly rounds: number;
  readonly maxRequests: number;
  /** Paced phase rate; undefined picks half the slowest closed-loop throughput of each route, 0 skips it. */
  readonly rate: number | undefined;
  readonly bigBodies: number;
  readonly bigBodyBytes: number;
  readonly profile: boolean;
  /** A second gateway beside the first, alike but for one setting (second-gateway.ts); null: none. */
  readonly second: SecondGateway | null;
}

function settings(argv: string[]): Settings {
  const values = parseBenchArgs(
    argv,
    {
      quick: { type: 'boolean' },
      scenario: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      rate: { type: 'string' },
      'max-requests': { type: 'string' },
      'big-bodies': { type: 'string' },
      'big-body-mb': { type: 'string' },
      profile: { type: 'boolean' },
      'log-cost': { type: 'string' },
      second: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const env = process.env;
  const num = boundedNumber(USAGE);
  const quick = values.quick === true;
  const scenario = values.scenario ?? env.BENCH_SCENARIO ?? 'both';
  if (scenario !== 'both' && !SCENARIOS.some((sc) => sc.name === scenario)) {
    process.stderr.write(`--scenario must be alpha, images or both, got "${scenario}"\n${USAGE}\n`);
    process.exit(2);
  }
  const logCost = values['log-cost'] ?? env.BENCH_LOG_COST ?? 'on';
  if (logCost !== 'on' && logCost !== 'off') {
    process.stderr.write(`--log-cost must be on or off, got "${logCost}"\n${USAGE}\n`);
    process.exit(2);
  }
  const second = logCost === 'off' ? 'none' : (values.second ?? env.BENCH_SECOND ?? 'log');
  if (second !== 'none' && !(second in SECOND_GATEWAYS)) {
    process.stderr.write(`--second must be log, store-loop or none, got "${second}"\n${USAGE}\n`);
    process.exit(2);
  }
  return {
    scenarios: SCENARIOS.filter((sc) => scenario === 'both' || sc.name === scenario),
    durationMs: 1000 * num('--duration', values.duration ?? env.BENCH_DURATION, quick ? 1.5 : 5, 0.2, 120),
    warmupMs: 1000 * num('--warmup', values.warmup ?? env.BENCH_WARMUP, quick ? 0.3 : 1, 0, 30),
    connections: Math.round(num('--connections', values.connections ?? env.BENCH_CONNECTIONS, 50, 1, 1000)),
    rounds: Math.round(num('--rounds', values.rounds ?? env.BENCH_ROUNDS, 1, 1, 10)),
    maxRequests: Math.round(num('--max-requests', values['max-requests'] ?? env.BENCH_MAX_REQUESTS, 1_000_000, 100, 10_000_000)),
    rate: (values.rate ?? env.BENCH_RATE) ? Math.round(num('--rate', values.rate ?? env.BENCH_RATE, 0, 0, 100_000)) : undefined,
    bigBodies: Math.round(num('--big-bodies', values['big-bodies'] ?? env.BENCH_BIG_BODIES, 10, 0, 100)),
    bigBodyBytes: Math.floor(2 ** 20 * num('--big-body-mb', values['big-body-mb'] ?? env.BENCH_BIG_BODY_MB, quick ? 5 : 20, 0.1, 20)),
    profile: values.profile === true,
    second: second === 'none' ? null : SECOND_GATEWAYS[second as keyof typeof SECOND_GATEWAYS],
  };
}

/** One request to a target, checked for a 200 answer carrying an image, before any load is sent. */
async function sanityCheck(scenario: Scenario, t: Target): Promise<void> {
  const res = await request(`${t.load.origin}${t.load.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...t.load.headers },
    body: t.load.body,
  });
  const text = await res.body.text();
  let ok = false;
  try {
    ok = scenario.isImage(text);
  } catch {
    ok = false;
  }
  if (res.statusCode !== 200 || !ok)
    throw new Error(`${scenario.name} ${t.name}: the check request got HTTP ${res.statusCode}, not an image:\n${text.slice(0, 500)}`);
}

/** The processes behind one route: its simulator and its bare pass-through. */
interface RouteProcesses {
  readonly scenario: Scenario;
  readonly sim: Child;
  readonly simUrl: string;
  readonly simKey: string;
  readonly pass: Child;
  /** The pass-through's environment, which the floor (floor.ts) starts with too. */
  readonly passEnv: NodeJS.ProcessEnv;
}

/** Starts a route's simulator and pass-through (each with the probe), and waits for the simulator. */
async function startRoute(scenario: Scenario, tmp: string, children: Child[]): Promise<RouteProcesses> {
  const name = scenario.name;
  const sim = startChild(
    `${name} simulator`,
    [...probeArgs(), join(HERE, 'sim-process.js')],
    { ...process.env, BENCH_SIM_PROFILE: scenario.simProfile },
    join(tmp, `${name}-simulator.log`),
    PROJECT_ROOT,
  );
  children.push(sim);
  const ready = await waitForLine(sim, (l) => l.ready === 'simulator');
  const simUrl = String(ready.url);
  const simKey = String(ready.key);
  const auth = scenario.auth(simKey);
  const passEnv = {
    ...process.env,
    BENCH_SIM_URL: simUrl,
    BENCH_AUTH_HEADER: auth.header,
    BENCH_AUTH_VALUE: auth.value,
    BENCH_UPSTREAM_PATH: scenario.upstreamPath,
  };
  const pass = startChild(`${name} passthrough`, [...probeArgs(), join(HERE, 'passthrough.js')], passEnv, join(tmp, `${name}-passthrough.log`), PROJECT_ROOT);
  children.push(pass);
  return { scenario, sim, simUrl, simKey, pass, passEnv };
}

async function main(): Promise<number> {
  const s = settings(process.argv.slice(2));
  const { tmp, children, cleanup } = benchWorkspace<Child>('gateway-bench-');
  const profileDir = process.env.BENCH_PROFILE_DIR || join(tmp, 'profile');

  try {
    process.stdout.write(
      machineLine('bench/overhead') +
        `${s.connections} connections; per target and phase ${s.warmupMs / 1000} s warm-up + ${s.durationMs / 1000} s measured; ${s.rounds} round(s)\n` +
        s.scenarios.map((sc) => `${sc.name}: ${Buffer.byteLength(sc.body)} B ${sc.describe}, POST ${sc.path}\n`).join('') +
        '\n',
    );

    const routes: RouteProcesses[] = [];
    for (const sc of s.scenarios) routes.push(await startRoute(sc, tmp, children));

    // Every other channel gets a dead local address: `start` refuses unset variables, and this
    // benchmark measures the scenarios' routes only.
    const otherChannels = deadChannelEnv();
    const gwEnv = {
      ...otherChannels,
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_DB: join(tmp, 'gateway.db'),
      LOG_LEVEL: 'info',
      ...Object.assign({}, ...routes.map((r) => r.scenario.gatewayEnv(r.simUrl, r.simKey))),
    };
    // BENCH_LIMITED_KEY=1: the key has rate limits far above the load, so every request pays for
    // the check (docs/tokens-and-quota.md, "Rate limits") and none is refused.
    const limits = process.env.BENCH_LIMITED_KEY === '1' ? ['--rpm', '1000000', '--max-parallel', '100000'] : [];
    const makeKey = async (env: NodeJS.ProcessEnv) =>
      (await promisify(execFile)(process.execPath, [CLI, 'tokens', 'create', '--group', 'default', ...limits], { env, cwd: PROJECT_ROOT })).stdout.trim();
    const apiKey = await makeKey(gwEnv);
    // The same gateway but for its request log (off) and its own store file: its key is its own.
    const offEnv = { ...gwEnv, GATEWAY_DB: join(tmp, 'gateway-second.db'), ...s.second?.env };
    const offKey = s.second ? await makeKey(offEnv) : '';
    if (s.profile) mkdirSync(profileDir, { recursive: true });
    const oldProfiles = new Set(s.profile ? readdirSync(profileDir) : []);
    const extra = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const gwArgs = [...probeArgs(), ...extra, ...(s.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), CLI, 'start'];
    const gw = startChild('gateway', gwArgs, gwEnv, join(tmp, 'gateway.log'), PROJECT_ROOT);
    children.push(gw);
    const gwOff = s.second ? startChild(s.second.target, [...probeArgs(), CLI, 'start'], offEnv, join(tmp, 'gateway-second.log'), PROJECT_ROOT) : null;
    if (gwOff) children.push(gwOff);

    // The floor of each route (floor.ts), with the gateway's key: what any gateway pays at the least.
    const floors = routes.map((r) =>
      startChild(
        `${r.scenario.name} floor`,
        [...probeArgs(), join(HERE, 'floor.js')],
        { ...r.passEnv, BENCH_FLOOR_KEY: apiKey },
        join(tmp, `${r.scenario.name}-floor.log`),
        PROJECT_ROOT,
      ),
    );
    children.push(...floors);
    const floorUrls = await Promise.all(floors.map(async (c) => String((await waitForLine(c, (l) => l.ready === 'passthrough')).url)));
    const passUrls = await Promise.all(routes.map(async (r) => String((await waitForLine(r.pass, (l) => l.ready === 'passthrough')).url)));
    const gwUrl = String((await waitForLine(gw, (l) => l.msg === 'gateway listening')).url);
    const offUrl = gwOff ? String((await waitForLine(gwOff, (l) => l.msg === 'gateway listening')).url) : '';
    // Idle: started, not yet asked anything; 1 s after start, and again once quiet for a while
    // (the gateway gives memory back when idle: src/heap-trim.ts). The settled figure is the one
    // judged; the big-body ratio keeps counting from the first, as it always has.
    await new Promise((r) => setTimeout(r, 1000));
    const idleMb = new Map(children.map((c) => [c, memory(c.pid).rss / 2 ** 20]));
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const settledMb = new Map(children.map((c) => [c, memory(c.pid).rss / 2 ** 20]));

    // The same request to all three; the bearer key is the gateway's, replaced by the others.
    const common = { authorization: `Bearer ${apiKey}` };
    const targetsOf = (r: RouteProcesses, i: number): Target[] => {
      const { path, body } = r.scenario;
      const auth = r.scenario.auth(r.simKey);
      return [
        { name: 'direct', child: r.sim, load: { origin: r.simUrl, path, body, headers: { ...common, [auth.header]: auth.value } } },
        { name: 'passthrough', child: r.pass, load: { origin: passUrls[i]!, path, body, headers: common } },
        { name: 'gateway', child: gw, load: { origin: gwUrl, path, body, headers: common } },
        ...(gwOff && s.second
          ? [{ name: s.second.target, child: gwOff, load: { origin: offUrl, path, body, headers: { authorization: `Bearer ${offKey}` } } }]
          : []),
        { name: FLOOR, child: floors[i]!, load: { origin: floorUrls[i]!, path, body, headers: common } },
      ];
    };
    const targets = routes.map(targetsOf);
    for (const [i, r] of routes.entries()) for (const t of targets[i]!) await sanityCheck(r.scenario, t);

    const errorLines: string[] = [];
    const figures: RouteFigures[] = [];
    const secondFigures: SecondFigures[] = [];
    for (const [i, r] of routes.entries()) {
      const name = r.scenario.name;
      const closedRounds = new Map<string, Row[]>();
      const pacedRounds = new Map<string, Row[]>();
      const closed = await runPhase(`${name}: closed loop, ${s.connections} connections`, targets[i]!, r.sim, s, 0, errorLines, closedRounds);
      const slowest = Math.min(...closed.slice(0, 3).map((row) => row.reqPerSec));
      const rate = s.rate ?? Math.max(10, Math.floor(slowest / 2 / 10) * 10);
      const paced =
        rate > 0
          ? await runPhase(`${name}: paced at ${rate} req/s over ${s.connections} connections`, targets[i]!, r.sim, s, rate, errorLines, pacedRounds)
          : undefined;
      const byTarget = (rows: Row[]): PhaseFigures => ({
        direct: rows[0]!,
        pass: rows[1]!,
        gw: rows[2]!,
        second: rows[3] && s.second ? { name: s.second.target, row: rows[3] } : undefined,
        // The last target.
        floor: rows.at(-1),
      });
      figures.push({ route: name, closed: byTarget(closed), paced: paced && { rate, ...byTarget(paced) } });
      if (gwOff && s.second) {
        const target = s.second.target;
        const pairs = (byTarget: Map<string, Row[]>) =>
          (byTarget.get('gateway') ?? []).map((first, round) => ({ first, second: byTarget.get(target)?.[round] ?? first }));
        secondFigures.push({ route: name, phase: 'closed loop', first: closed[2]!, second: closed[3]!, rounds: pairs(closedRounds) });
        if (paced) secondFigures.push({ route: name, phase: `paced ${rate}/s`, first: paced[2]!, second: paced[3]!, rounds: pairs(pacedRounds) });
      }
    }
    process.stdout.write(
      'CPU ms/req: the measured process only (the simulator itself for direct); sim CPU ms/req: the same simulator work behind every row.\n' +
        'KB/req: V8 heap allocated by the measured process per request; GCs, GC p99 ms: its GC pauses in the window (probe.ts).\n' +
        'loop p50/p99/max ms: its event-loop delay in the window (monitorEventLoopDelay beyond its 10 ms sampling period, probe.ts).\n' +
        'our cores: measured process + simulator + load generator; all cores: the whole machine (of ' +
        `${cpus().length}), kernel included.\n\n`,
    );

    // Peak over the load phases, read before the big bodies move it.
    const peakMb = new Map(children.map((c) => [c, memory(c.pid).peak / 2 ** 20]));
    const memRows = children.map((c) => [c.name, f(idleMb.get(c)!, 1), f(settledMb.get(c)!, 1), f(peakMb.get(c)!, 1)]);
    process.stdout.write(
      `memory per process: RSS MB 1 s and ${SETTLED_AT_S} s after start (idle, before any request), and its peak over the load phases (VmHWM)\n${grid(['process', 'idle 1 s', `idle ${SETTLED_AT_S} s`, 'peak'], memRows)}\n\n`,
    );

    const alpha = routes.findIndex((r) => r.scenario.name === 'alpha');
    const big: BigBodyResult[] = [];
    if (s.bigBodies > 0 && alpha >= 0) {
      for (const t of targets[alpha]!.slice(1, 3)) {
        big.push(
          await bigBodies(
            t.name,
            { origin: t.load.origin, headers: t.load.headers as Record<string, string>, pid: t.child.pid, idleMb: idleMb.get(t.child)! },
            s.bigBodies,
            s.bigBodyBytes,
          ),
        );
      }
      const size = f(s.bigBodyBytes / 2 ** 20, 0);
      process.stdout.write(
        `big bodies: ${s.bigBodies} x ${size} MB alpha generateContent at once, per target (the pass-through for reference)\n${bigBodyTable(big)}\n\n`,
      );
      for (const b of big) errorLines.push(...b.failures);
    } else if (s.bigBodies > 0) process.stdout.write('big bodies: skipped (they go to the alpha route, not in this run)\n\n');

    const failedRequests =
      figures.flatMap((r) => [...judgedRows(r.closed), ...(r.paced ? judgedRows(r.paced) : [])]).reduce((n, row) => n + row.errors, 0) +
      secondFigures.reduce((n, l) => n + l.second.errors, 0) +
      figures.reduce((n, r) => n + (r.closed.floor?.errors ?? 0) + (r.paced?.floor?.errors ?? 0), 0) +
      big.reduce((n, b) => n + b.failures.length, 0);
    const gwBig = big.find((b) => b.name === 'gateway');
    process.stdout.write(
      `${verdict(
        figures,
        { idleMb: settledMb.get(gw)!, idleAfterS: SETTLED_AT_S, passIdleMb: routes.map((r) => settledMb.get(r.pass)!), peakMb: peakMb.get(gw)!, big: gwBig },
        failedRequests,
      )}\n`,
    );

    const secondReport = s.second ? secondGatewayReport(s.second, secondFigures) : '';
    if (secondReport) process.stdout.write(`\n${secondReport}`);

    const gwLogs = jsonLines(gw).filter((l) => l.probe === undefined);
    const loud = gwLogs.filter((l) => typeof l.level === 'number' && l.level >= 40).length;
    process.stdout.write(`\ngateway log (LOG_LEVEL=info): ${gwLogs.length} line(s), ${loud} at warn or above\n`);
    if (errorLines.length > 0) process.stdout.write(`\nFAILED REQUESTS (figures are not comparable):\n${errorLines.join('\n')}\n`);

    if (s.profile) {
      await stopChild(gw);
      const files = readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile') && !oldProfiles.has(name));
      if (files.length === 0) process.stdout.write('\nno .cpuprofile was written by the gateway\n');
      for (const file of files) {
        process.stdout.write(`\ngateway CPU profile (whole process life: start-up, warm-up and windows; profiling inflates CPU figures)\n`);
        process.stdout.write(`${summariseProfile(join(profileDir, file), PROJECT_ROOT)}\n`);
        if (process.env.BENCH_PROFILE_DIR) process.stdout.write(`kept ${join(profileDir, file)}\n`);
      }
    }
    const failed =
      errorLines.length > 0 || figures.some((r) => [...judgedRows(r.closed), ...(r.paced ? judgedRows(r.paced) : [])].some((row) => row.completed === 0));
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
