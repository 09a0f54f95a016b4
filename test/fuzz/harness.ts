/**
 * The fuzz loop: hostile requests (hostile-requests.ts) go to a real gateway process over a few
 * connections at once, each answer is judged (judge.ts), and a process that dies is a crash
 * finding blamed on the requests in flight, then started again so the run goes on. Bounded in
 * count and in time; reproducible from its seed.
 */
import fc from 'fast-check';
import { CATEGORIES, hostileRequestArb, wireBytes, type FuzzRequest, type Targets } from './hostile-requests.js';
import { judge, type FindingKind } from './judge.js';
import { exchange, type Exchange } from './wire.js';

/** The gateway under test, as the harness drives it. */
export interface FuzzedGateway {
  port(): number;
  alive(): boolean;
  /** Resolves true as soon as the process exits, false when it is still running after `ms`. */
  exits(ms: number): Promise<boolean>;
  /** Starts a fresh process after a crash (same store, same config). */
  restart(): Promise<void>;
}

export interface FuzzOptions {
  readonly requests: number;
  /** Stops early after this long. */
  readonly seconds: number;
  readonly concurrency: number;
  readonly seed: number;
  /** Time one exchange may take before it is a hang. */
  readonly timeoutMs: number;
}

/** One thing found, with enough of the request to replay it. */
export interface Finding {
  readonly kind: FindingKind;
  readonly category: string;
  readonly request: string;
  readonly bodyBytes: number;
  readonly answer: string;
}

/** Per category: what was sent and what came back. */
export interface CategoryStats {
  sent: number;
  ok2xx: number;
  refused4xx: number;
  failed5xx: number;
  /** Closed without an answer, fairly (a refusal that did not wait, or broken framing). */
  closed: number;
}

export interface FuzzReport {
  readonly seed: number;
  readonly sent: number;
  readonly seconds: number;
  readonly crashes: number;
  readonly byCategory: ReadonlyMap<string, CategoryStats>;
  readonly findings: readonly Finding[];
}

const BATCH = 200;

function describe(r: FuzzRequest): string {
  const head = `${r.method} ${r.target.length > 200 ? `${r.target.slice(0, 200)}…(${r.target.length})` : r.target}`;
  const headers = r.headers.map(([k, v]) => `${k}: ${v.length > 60 ? `${v.slice(0, 60)}…(${v.length})` : v}`).join('; ');
  const body =
    r.body === null ? '' : ` body ${JSON.stringify(r.body.subarray(0, 240).toString('latin1'))}${r.body.length > 240 ? `…(${r.body.length} bytes)` : ''}`;
  return `${head} [${headers}]${body}`;
}

/** Runs the fuzz loop against `gateway`; `progress` hears about every 1,000 requests. */
export async function runFuzz(
  targets: Targets,
  gateway: FuzzedGateway,
  opts: FuzzOptions,
  progress: (sent: number) => void = () => undefined,
): Promise<FuzzReport> {
  const arb = hostileRequestArb(targets);
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const byCategory = new Map<string, CategoryStats>(CATEGORIES.map((c) => [c, { sent: 0, ok2xx: 0, refused4xx: 0, failed5xx: 0, closed: 0 }]));
  const findings: Finding[] = [];
  const inFlight = new Set<FuzzRequest>();
  let crashes = 0;
  let sent = 0;
  let next = 0;
  let batch: FuzzRequest[] = [];
  let batchNo = 0;
  let restarting: Promise<void> | null = null;

  const take = (): FuzzRequest | null => {
    if (next >= opts.requests || performance.now() > deadline) return null;
    const i = next++ % BATCH;
    if (i === 0) batch = fc.sample(arb, { numRuns: BATCH, seed: opts.seed + batchNo++ });
    return batch[i] ?? null;
  };

  const record = (r: FuzzRequest, ex: Exchange) => {
    const stats = byCategory.get(r.category)!;
    stats.sent++;
    if (ex.status === 0) stats.closed++;
    else if (ex.status < 400) stats.ok2xx++;
    else if (ex.status < 500) stats.refused4xx++;
    else stats.failed5xx++;
    const kind = judge(r, ex);
    if (kind)
      findings.push({ kind, category: r.category, request: describe(r), bodyBytes: r.body?.length ?? 0, answer: `${ex.status} ${ex.body.slice(0, 300)}` });
  };

  /** The process died: every request in flight is a suspect; start it again (once, whoever notices). */
  const crashed = async () => {
    if (!restarting) {
      crashes++;
      for (const r of inFlight)
        findings.push({ kind: 'crash', category: r.category, request: describe(r), bodyBytes: r.body?.length ?? 0, answer: 'the process exited' });
      restarting = gateway.restart().finally(() => (restarting = null));
    }
    await restarting;
  };

  const worker = async () => {
    for (let r = take(); r !== null; r = take()) {
      if (restarting) await restarting;
      inFlight.add(r);
      const ex = await exchange(gateway.port(), wireBytes(r), opts.timeoutMs);
      // A connection cut without an answer may be the process dying: give it a moment to say so.
      if (!gateway.alive() || (ex.status === 0 && (await gateway.exits(1000)))) {
        await crashed();
        inFlight.delete(r);
        continue;
      }
      inFlight.delete(r);
      record(r, ex);
      if (++sent % 1000 === 0) progress(sent);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return { seed: opts.seed, sent, seconds: (performance.now() - started) / 1000, crashes, byCategory, findings };
}

/** The report as text: a table by category, then the findings by kind (a few of each). */
export function formatReport(r: FuzzReport, examplesPerKind = 5): string {
  const pad = (s: string | number, n: number) => String(s).padEnd(n);
  const lines = [`${pad('category', 16)}${pad('sent', 8)}${pad('2xx', 8)}${pad('4xx', 8)}${pad('5xx', 8)}closed`];
  for (const [name, s] of r.byCategory)
    lines.push(`${pad(name, 16)}${pad(s.sent, 8)}${pad(s.ok2xx, 8)}${pad(s.refused4xx, 8)}${pad(s.failed5xx, 8)}${s.closed}`);
  lines.push('', `${r.sent} requests in ${r.seconds.toFixed(1)} s (seed ${r.seed}); crashes: ${r.crashes}; findings: ${r.findings.length}`);
  const kinds = new Map<string, Finding[]>();
  for (const f of r.findings) kinds.set(f.kind, [...(kinds.get(f.kind) ?? []), f]);
  for (const [kind, list] of kinds) {
    lines.push('', `${kind}: ${list.length}`);
    for (const f of list.slice(0, examplesPerKind)) lines.push(`  [${f.category}] ${f.request}`, `    -> ${f.answer}`);
  }
  return lines.join('\n');
}
