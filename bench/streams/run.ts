/**
 * Benchmark bench/streams (issue 39, item 7): vendor event streams relayed by the gateway. The
 * zeta-openai simulator streams OpenAI image events (`image_generation.partial_image` × N, then
 * `image_generation.completed`) with a wait between them; the same stream request goes to the
 * simulator directly, through a bare streaming pass-through, and through the gateway, all in one
 * run. Prints
 *   1. the time from sending the request to the first partial image, p50/p90/p99 per target, and
 *      what the gateway adds over direct (target: under 5 ms at p50);
 *   2. many streams (500) held open at once mid-stream per target: the RSS of the target, the
 *      simulator before and while they are held, the growth per held stream, then
 *      every stream released to its completed event and checked;
 *   3. phase 1 again with full-size images (a photograph's weight in every event), and
 *   4. phase 2 again with full-size images and fewer streams.
 * Timings are printed, never asserted: the exit code is 0 unless something crashed or a stream
 * failed.
 *
 * Usage: npm run bench:streams [-- --quick] [--requests N] [--rounds N] [--streams N] …
 *        (see bench/README.md)
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { boundedNumber, parseBenchArgs } from '../args.js';
import { jsonLines, stopChild, type Child } from '../overhead/children.js';
import { percentile } from '../overhead/load.js';
import { f, grid } from '../overhead/report.js';
import { benchWorkspace, machineLine } from '../workspace.js';
import { firstPartial, type FirstPartialRow } from './first-partial.js';
import { fdCount, hold, type HoldRow } from './hold.js';
import { startParties, STREAM_PATH, type Parties } from './parties.js';

const USAGE = `usage: npm run bench:streams [-- options]
  --quick            smoke run: 40 streams per target in 2 rounds, 100 held, 2 s stall, 3 full-size, none held full-size
                     (~40 s after the build)
  --requests N       measured streams per target for the time to the first partial (env BENCH_REQUESTS, default 300)
  --rounds N         rounds, the targets' order rotating each round (env BENCH_ROUNDS, default 3)
  --warmup N         unmeasured streams per target first (env BENCH_WARMUP, default 10)
  --concurrency N    streams at once per target in phase 1 (env BENCH_CONCURRENCY, default 1: one after another)
  --partials N       partial_images asked (1 to 3; env BENCH_PARTIALS, default 2)
  --gap-ms MS        the simulator's wait between two events (env BENCH_GAP_MS, default 50)
  --streams N        streams held at once per target in phase 2; 0 skips it (env BENCH_STREAMS, default 500;
                     cut to what the open-file limit allows, and said so)
  --stall-ms MS      how long each held stream stalls after its first event (env BENCH_STALL_MS, default 10000;
                     under the channel's 60 s idle limit)
  --full-size N      streams per target of phase 1 again with full-size images; 0 skips it
                     (env BENCH_FULL_SIZE, default 30)
  --full-size-held N streams held at once per target as in phase 2, with full-size images; 0 skips it
                     (env BENCH_FULL_SIZE_HELD, default 40, max 100: the gateway holds megabytes per stream)
  env BENCH_GATEWAY_NODE_ARGS  more node flags for the gateway, space separated`;

/** Descriptors kept free beside the sockets: logs, the store and its WAL, pipes, the probe. */
const FD_MARGIN = 64;

interface Settings {
  readonly requests: number;
  readonly rounds: number;
  readonly warmup: number;
  readonly concurrency: number;
  readonly partials: number;
  readonly gapMs: number;
  readonly streams: number;
  readonly stallMs: number;
  readonly fullSize: number;
  readonly fullSizeHeld: number;
  /** The quiet wait before each hold's idle reading. */
  readonly restMs: number;
}

function settings(argv: string[]): Settings {
  const values = parseBenchArgs(
    argv,
    {
      quick: { type: 'boolean' },
      requests: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      concurrency: { type: 'string' },
      partials: { type: 'string' },
      'gap-ms': { type: 'string' },
      streams: { type: 'string' },
      'stall-ms': { type: 'string' },
      'full-size': { type: 'string' },
      'full-size-held': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  const env = process.env;
  const num = boundedNumber(USAGE);
  const quick = values.quick === true;
  const int = (name: string, raw: string | undefined, fallback: number, min: number, max: number) => Math.round(num(name, raw, fallback, min, max));
  return {
    requests: int('--requests', values.requests ?? env.BENCH_REQUESTS, quick ? 40 : 300, 1, 10_000),
    rounds: int('--rounds', values.rounds ?? env.BENCH_ROUNDS, quick ? 2 : 3, 1, 10),
    warmup: int('--warmup', values.warmup ?? env.BENCH_WARMUP, quick ? 3 : 10, 1, 1000),
    concurrency: int('--concurrency', values.concurrency ?? env.BENCH_CONCURRENCY, 1, 1, 50),
    partials: int('--partials', values.partials ?? env.BENCH_PARTIALS, 2, 1, 3),
    gapMs: int('--gap-ms', values['gap-ms'] ?? env.BENCH_GAP_MS, 50, 0, 2000),
    streams: int('--streams', values.streams ?? env.BENCH_STREAMS, quick ? 100 : 500, 0, 5000),
    stallMs: int('--stall-ms', values['stall-ms'] ?? env.BENCH_STALL_MS, quick ? 2000 : 10_000, 1000, 50_000),
    restMs: quick ? 1000 : 2000,
    fullSize: int('--full-size', values['full-size'] ?? env.BENCH_FULL_SIZE, quick ? 3 : 30, 0, 1000),
    fullSizeHeld: int('--full-size-held', values['full-size-held'] ?? env.BENCH_FULL_SIZE_HELD, quick ? 0 : 40, 0, 100),
  };
}

/** This process's limit on open files (the children inherit it). */
function fdLimit(): number {
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
}

/** The stream request: one 1024x1024 image with `partials` partial images, and a fault in its prompt if any. */
function streamBody(partials: number, fault?: string): string {
  const prompt = fault ? `a red bicycle [sim:fault=${fault}]` : 'a red bicycle';
  return JSON.stringify({ model: 'zeta-image-1', prompt, size: '1024x1024', stream: true, partial_images: partials });
}

const mark = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
const mb = (bytes: number): string => f(bytes / 2 ** 20, 1);
const kbPer = (bytes: number, n: number): string => f(bytes / 1024 / Math.max(1, n), 1);
const progress = (line: string): void => void process.stderr.write(line);

/** Phase 1's table and its verdict lines. */
function firstPartialReport(rows: readonly FirstPartialRow[], target: boolean): { table: string; lines: string[] } {
  const [direct, pass, gw] = rows as [FirstPartialRow, FirstPartialRow, FirstPartialRow];
  const p = (r: FirstPartialRow, q: number) => percentile(r.first, q);
  const table = grid(
    [
      'target',
      'streams',
      'failed',
      'headers p50',
      'first p50',
      'p90',
      'p99',
      'max',
      '+p50',
      '+p99',
      'completed p50',
      'CPU ms/stream',
      'sim CPU',
      'heap KB/stream',
      'GCs',
    ],
    rows.map((r) => [
      r.name,
      String(r.streams),
      String(r.failed),
      f(percentile(r.headers, 0.5), 2),
      f(p(r, 0.5), 2),
      f(p(r, 0.9), 2),
      f(p(r, 0.99), 2),
      f(r.first.at(-1) ?? NaN, 1),
      r === direct ? '' : f(p(r, 0.5) - p(direct, 0.5), 2),
      r === direct ? '' : f(p(r, 0.99) - p(direct, 0.99), 2),
      f(percentile(r.completed, 0.5), 1),
      f(r.cpuMsPerStream, 2),
      f(r.simCpuMsPerStream, 2),
      f(r.heapKbPerStream, 0),
      String(r.gcs),
    ]),
  );
  const added50 = p(gw, 0.5) - p(direct, 0.5);
  const lines = [
    `first partial p50 by round (ms): ${rows.map((r) => `${r.name} ${r.roundP50.map((v) => f(v, 2)).join(' / ')}`).join(';  ')}`,
    `added over direct at p50 / p99: gateway ${f(added50, 2)} / ${f(p(gw, 0.99) - p(direct, 0.99), 2)} ms, passthrough ${f(p(pass, 0.5) - p(direct, 0.5), 2)} / ${f(p(pass, 0.99) - p(direct, 0.99), 2)} ms; ` +
      `gateway over passthrough at p50 ${f(p(gw, 0.5) - p(pass, 0.5), 2)} ms`,
  ];
  if (target) lines.push(`target (issue 39, item 7): time to the first partial image, under 5 ms added at p50: ${f(added50, 2)} ms  ${mark(added50 < 5)}`);
  return { table, lines };
}

/** Phase 2's table and its lines. */
function holdReport(rows: readonly HoldRow[]): { table: string; lines: string[] } {
  const table = grid(
    [
      'target',
      'streams',
      'all held ms',
      'held at read',
      'fds idle',
      'fds held',
      'RSS idle MB',
      'held MB',
      'KB/stream',
      'peak MB',
      'after MB',
      'sim KB/stream',
      'completed',
      'failed',
      'drain ms',
    ],
    rows.map((r) => [
      r.name,
      String(r.streams),
      f(r.allHeldMs, 0),
      String(r.heldAtRead),
      String(r.fds.idle),
      String(r.fds.held),
      mb(r.rss.idle),
      mb(r.rss.held),
      kbPer(r.rss.held - r.rss.idle, r.heldAtRead),
      mb(r.rss.peak),
      mb(r.rss.after),
      r.name === 'direct' ? '' : kbPer(r.simRss.held - r.simRss.idle, r.heldAtRead),
      String(r.completed),
      String(r.failed),
      f(r.drainMs, 0),
    ]),
  );
  const lines = rows.map((r) => {
    const d = r.simDelta;
    return (
      `${r.name}: simulator saw ${d.streams ?? 0} streams, ${d.events ?? 0} events, ${d.abandoned ?? 0} abandoned, ${d.blocked ?? 0} still blocked; ` +
      `${r.completed}/${r.streams} ended with their completed event; at most ${r.maxHeld} held at once`
    );
  });
  const gw = rows.find((r) => r.name === 'gateway');
  const pass = rows.find((r) => r.name === 'passthrough');
  if (gw) {
    const per = (gw.rss.held - gw.rss.idle) / 1024 / Math.max(1, gw.heldAtRead);
    const passPer = pass ? (pass.rss.held - pass.rss.idle) / 1024 / Math.max(1, pass.heldAtRead) : NaN;
    lines.push(
      `gateway RSS growth per held stream: ${f(per, 1)} KB (passthrough ${f(passPer, 1)} KB, x${f(per / passPer, 2)}); ` +
        `${gw.heldAtRead} held at the reading, ${gw.failed} failed  ${gw.failed === 0 && gw.heldAtRead === gw.streams ? 'all held and completed' : 'NOT ALL HELD OR COMPLETED'}`,
    );
  }
  return { table, lines };
}

/** Holds `n` streams through each target in turn (hold.ts) and gives the report; failures are added to `failures`. */
async function holds(parties: Parties, n: number, s: Settings, failures: string[]): Promise<string> {
  const rows: HoldRow[] = [];
  const body = streamBody(s.partials, `stream-stall:${s.stallMs}`);
  for (const t of parties.targets) {
    progress(`bench/streams: ${n} streams held through ${t.name}…\n`);
    // Let the last phase's sockets close and the processes come to rest before the idle reading.
    await new Promise((r) => setTimeout(r, s.restMs));
    rows.push(await hold(t, parties.sim.pid, parties.simStats, { streams: n, partials: s.partials, stallMs: s.stallMs, body, settleMs: 1000 }));
  }
  for (const h of rows) failures.push(...h.failures);
  const report = holdReport(rows);
  return (
    `RSS idle: just before the streams were opened; held: 1 s after the last client got its first event; KB/stream: (held - idle) / streams held;\n` +
    `sim KB/stream: the simulator's growth over the same moments (direct: the simulator is the target); after: 0.5 s after the last stream ended\n` +
    `${report.table}\n${report.lines.join('\n')}\n`
  );
}

/** The gateway's log lines (its probe's lines left out), and how many at warn or above. */
function gatewayLog(gw: Child): string {
  const lines = jsonLines(gw).filter((l) => l.probe === undefined);
  const loud = lines.filter((l) => typeof l.level === 'number' && l.level >= 40);
  const left = lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('the client left the stream')).length;
  const sample = loud
    .slice(0, 3)
    .map((l) => `  ${JSON.stringify(l).slice(0, 300)}`)
    .join('\n');
  return `gateway log (LOG_LEVEL=info): ${lines.length} line(s), ${loud.length} at warn or above, ${left} "client left the stream"${sample ? `\n${sample}` : ''}\n`;
}

async function main(): Promise<number> {
  const s = settings(process.argv.slice(2));
  const { tmp, children, cleanup } = benchWorkspace<Child>('gateway-streams-');
  try {
    const limit = fdLimit();
    const parties: Parties = await startParties(tmp, children, { gapMs: s.gapMs, fullSize: false }, '');
    const { pass, gw } = parties;
    const failures: string[] = [];

    // A proxy holds two sockets per stream (its client's and its vendor call's) besides what it
    // holds idle, and the limit on open files is per process: it caps the streams one proxy can hold.
    await new Promise((r) => setTimeout(r, 1000));
    const idleFds = Math.max(fdCount(gw.pid), fdCount(pass.pid));
    const allowed = Math.max(0, Math.floor((limit - idleFds - FD_MARGIN) / 2));
    const streams = Math.min(s.streams, allowed);
    const perStream = s.partials * s.gapMs;
    process.stdout.write(
      machineLine('bench/streams') +
        `POST ${STREAM_PATH} ${streamBody(s.partials)}\n` +
        `simulator: zeta-openai, ${s.gapMs} ms between events (a stream lasts about ${perStream} ms after its first event), small images (64x64 PNG)\n` +
        `phase 1: ${s.requests} measured streams per target (+${s.warmup} warm-up), ${s.concurrency} at a time, ${s.rounds} round(s), the order rotating\n` +
        `phase 2: ${streams} streams held at once per target, each stalled ${s.stallMs} ms after its first event ([sim:fault=stream-stall:${s.stallMs}])\n` +
        `phases 3 and 4: ${s.fullSize} streams per target as in 1 and ${Math.min(s.fullSizeHeld, allowed)} held as in 2, with full-size images (0: skipped)\n` +
        `gateway: the shipped config (channel zeta-images, operation streamImage); pass-through: node:http -> undici Pool, answer piped\n` +
        `open files: limit ${limit} per process; a proxy holds ${idleFds} idle + 2 per stream\n`,
    );
    if (streams < s.streams) process.stdout.write(`  ASKED FOR ${s.streams} HELD STREAMS, RAN ${streams}: the limit on open files\n`);
    process.stdout.write('\n');

    // Phase 1: the time to the first partial image.
    const rows = await firstPartial(
      parties.targets,
      parties.sim.pid,
      { requests: s.requests, rounds: s.rounds, warmup: s.warmup, concurrency: s.concurrency, partials: s.partials, body: streamBody(s.partials) },
      progress,
    );
    for (const r of rows) failures.push(...r.failures);
    const one = firstPartialReport(rows, true);
    process.stdout.write(
      `1. time to the first partial image (ms from sending the request to the end of the first image_generation.partial_image event)\n` +
        `${one.table}\n${one.lines.join('\n')}\n\n`,
    );

    // Phase 2: streams held at once.
    if (streams > 0) {
      const two = await holds(parties, streams, s, failures);
      process.stdout.write(`2. ${streams} streams held at once, stalled after their first event, then released to their completed event\n${two}\n`);
    }
    process.stdout.write(gatewayLog(gw));

    // Phases 3 and 4: phases 1 and 2 with full-size images, on a simulator (and so a gateway and a
    // pass-through) of their own.
    const fullHeld = Math.min(s.fullSizeHeld, allowed);
    if (s.fullSize > 0 || fullHeld > 0) {
      for (const c of [parties.gw, parties.pass, parties.sim]) await stopChild(c);
      const full = await startParties(tmp, children, { gapMs: s.gapMs, fullSize: true }, ' (full size)');
      await new Promise((r) => setTimeout(r, 1000));
      if (s.fullSize > 0) {
        const fullRows = await firstPartial(
          full.targets,
          full.sim.pid,
          {
            requests: s.fullSize,
            rounds: Math.min(s.rounds, s.fullSize),
            warmup: Math.min(s.warmup, 3),
            concurrency: 1,
            partials: s.partials,
            body: streamBody(s.partials),
          },
          progress,
        );
        for (const r of fullRows) failures.push(...r.failures);
        const three = firstPartialReport(fullRows, false);
        process.stdout.write(
          `\n3. the same as 1 with full-size images (a 1024x1024 PNG of random pixels, ~4 MB of base64 in every event), ${s.fullSize} streams per target\n` +
            `${three.table}\n${three.lines.join('\n')}\n`,
        );
      }
      if (fullHeld > 0) {
        const four = await holds(full, fullHeld, s, failures);
        process.stdout.write(`\n4. the same as 2 with full-size images, ${fullHeld} streams held at once per target\n${four}`);
      }
      process.stdout.write(gatewayLog(full.gw));
    }

    process.stdout.write(
      `\n${cpus().length} cores shared by every process; timings are printed, never asserted.\n` +
        (failures.length > 0
          ? `\nFAILED STREAMS (${failures.length}; the figures are not comparable):\n${failures.slice(0, 20).join('\n')}\n`
          : 'zero failed streams\n'),
    );
    return failures.length > 0 ? 1 : 0;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench/streams failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
