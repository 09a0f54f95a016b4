/**
 * The measured phases of bench/download, each run against one target (the pass-through or the
 * gateway) with the same files: downloads at full speed (throughput, RSS, CPU), slow readers
 * (how far the vendor gets ahead of the client: backpressure), and ranged requests (the bytes
 * checked). The vendor's counters (vendor-process.ts, `/_bench/stats`) say what it has sent.
 */
import { request } from 'undici';
import { generatedBytes } from '../../src/sim/generated-file.js';
import type { Child } from '../overhead/children.js';
import { markWindow, readWindow } from '../overhead/probe-client.js';
import { cpuMs, memory, watchPeak } from '../overhead/proc.js';
import { drain, open, readSlowly } from './client.js';

/** A file to download through a target: its URL and headers (the gateway's key). */
export interface Fetchable {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly size: number;
}

/** A target: its name and process. */
export interface Target {
  readonly name: string;
  readonly child: Child;
}

/** One answer of a file as the vendor counts it. */
export interface VendorTransfer {
  readonly id: string;
  readonly status: number;
  readonly start: number;
  readonly end: number;
  readonly sent: number;
  readonly done: boolean;
  readonly aborted: boolean;
}

/** The vendor's counters. */
export async function transfers(vendorUrl: string): Promise<VendorTransfer[]> {
  const res = await request(`${vendorUrl}/_bench/stats`);
  return ((await res.body.json()) as { transfers: VendorTransfer[] }).transfers;
}

/** The seed of a file the vendor named (`video_7b…`). */
export const seedOf = (id: string): number => Number(/_([0-9]+)b/.exec(id)?.[1] ?? NaN);

const MB = 2 ** 20;
/** Bytes of the head and tail of each body compared with what the vendor made. */
const CHECKED = 256 * 1024;

/** Figures of downloads read as fast as they come. */
export interface FastRow {
  readonly target: string;
  readonly downloads: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly mbPerSec: number;
  readonly rssBeforeMb: number;
  readonly peakMb: number;
  readonly growthMb: number;
  readonly cpuMsPerGb: number;
  /** GC pauses of the target in the window (bench/overhead/probe.ts): how many, and their total per GB. */
  readonly gcs: number;
  readonly gcMsPerGb: number;
  /** What went wrong (status, length, bytes); empty when every download was whole and right. */
  readonly problems: string[];
  /** MB/s of each round, when the row is the median of several. */
  readonly rounds?: number[];
}

/** Downloads `files` at once through `target`, each read as fast as it comes; checks each body's length and its first and last bytes. */
export async function fullSpeed(target: Target, vendorUrl: string, files: readonly Fetchable[], headers: Record<string, string> = {}): Promise<FastRow> {
  const seen = (await transfers(vendorUrl)).length;
  const rssBefore = memory(target.child.pid).rss;
  const cpuBefore = cpuMs(target.child.pid);
  markWindow(target.child);
  const peak = watchPeak(target.child.pid);
  const t0 = performance.now();
  const bodies = await Promise.all(
    files.map(async (file) => {
      const o = await open(file.url, { ...file.headers, ...headers });
      return { o, d: await drain(o, CHECKED) };
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const peakBytes = peak.stop();
  const cpu = cpuMs(target.child.pid) - cpuBefore;
  const gc = await readWindow(target.child, markWindow(target.child));
  const made = (await transfers(vendorUrl)).slice(seen);
  const problems: string[] = [];
  const bytes = bodies.reduce((n, b) => n + b.d.bytes, 0);
  for (const [i, { o, d }] of bodies.entries()) {
    const size = files[i]!.size;
    if (o.status !== 200) problems.push(`${target.name}: download ${i} answered HTTP ${o.status}`);
    else if (d.cut || d.bytes !== size) problems.push(`${target.name}: download ${i} got ${d.bytes} of ${size} bytes${d.cut ? ' (cut)' : ''}`);
  }
  // Each body against the file the vendor made for it (the same size: any of the new ones whose head matches).
  for (const [i, { o, d }] of bodies.entries()) {
    if (o.status !== 200 || d.bytes !== files[i]!.size) continue;
    const size = files[i]!.size;
    const right = made.some(
      (t) =>
        generatedBytes(seedOf(t.id), 0, Math.min(CHECKED, size) - 1).equals(d.head) &&
        generatedBytes(seedOf(t.id), Math.max(0, size - CHECKED), size - 1).equals(d.tail),
    );
    if (!right) problems.push(`${target.name}: download ${i} is not the vendor's bytes`);
  }
  return {
    target: target.name,
    downloads: files.length,
    bytes,
    seconds,
    mbPerSec: bytes / MB / seconds,
    rssBeforeMb: rssBefore / MB,
    peakMb: peakBytes / MB,
    growthMb: (peakBytes - rssBefore) / MB,
    cpuMsPerGb: cpu / (bytes / 2 ** 30),
    gcs: gc.gcs,
    gcMsPerGb: gc.gcMs / (bytes / 2 ** 30),
    problems,
  };
}

/** Figures of slow readers. */
export interface SlowRow {
  readonly target: string;
  readonly clients: number;
  readonly seconds: number;
  /** What the clients read, per client per second (MB). */
  readonly readMbPerSec: number;
  /** Vendor bytes sent minus client bytes read, per client: the largest sample, and the last. */
  readonly gapMaxMb: number;
  readonly gapEndMb: number;
  /** The vendor's bytes sent per client at the end (what a buffering proxy would have pulled in). */
  readonly vendorSentMb: number;
  readonly rssBeforeMb: number;
  readonly peakMb: number;
  readonly growthMb: number;
  /** After the clients hung up: how many vendor answers were cut, and how long after the hang-up the last one was. */
  readonly abortedVendor: number;
  readonly abortMs: number;
  readonly problems: string[];
}

/**
 * Opens `files` at once through `target` and reads each at `bytesPerSecond` for `seconds`,
 * sampling every 500 ms the vendor's bytes sent against the bytes read; then hangs up and waits
 * (up to 10 s) for the vendor to see each of its answers cut.
 */
export async function slowReaders(target: Target, vendorUrl: string, files: readonly Fetchable[], bytesPerSecond: number, seconds: number): Promise<SlowRow> {
  const seen = (await transfers(vendorUrl)).length;
  const rssBefore = memory(target.child.pid).rss;
  const peak = watchPeak(target.child.pid);
  const opened = await Promise.all(files.map((file) => open(file.url, file.headers)));
  const problems = opened.flatMap((o, i) => (o.status === 200 ? [] : [`${target.name}: slow download ${i} answered HTTP ${o.status}`]));
  const readers = opened.map((o) => readSlowly(o, bytesPerSecond));
  const t0 = performance.now();
  let gapMax = 0;
  let gapEnd = 0;
  let sentEnd = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const mine = (await transfers(vendorUrl)).slice(seen);
    const sent = mine.reduce((n, t) => n + t.sent, 0);
    const read = readers.reduce((n, r) => n + r.read(), 0);
    gapEnd = (sent - read) / files.length;
    sentEnd = sent / files.length;
    gapMax = Math.max(gapMax, gapEnd);
    if (performance.now() - t0 >= seconds * 1000) break;
  }
  const elapsed = (performance.now() - t0) / 1000;
  const read = readers.reduce((n, r) => n + r.read(), 0);
  const peakBytes = peak.stop();
  const hungUp = performance.now();
  for (const r of readers) r.stop();
  let abortedVendor = 0;
  let abortMs = Number.NaN;
  while (performance.now() - hungUp < 10_000) {
    const mine = (await transfers(vendorUrl)).slice(seen);
    abortedVendor = mine.filter((t) => t.aborted).length;
    if (mine.length >= files.length && mine.every((t) => t.aborted || t.done)) {
      abortMs = performance.now() - hungUp;
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  if (abortedVendor < files.length) problems.push(`${target.name}: ${files.length - abortedVendor} vendor answer(s) not cut 10 s after the client hung up`);
  return {
    target: target.name,
    clients: files.length,
    seconds: elapsed,
    readMbPerSec: read / MB / elapsed / files.length,
    gapMaxMb: gapMax / MB,
    gapEndMb: gapEnd / MB,
    vendorSentMb: sentEnd / MB,
    rssBeforeMb: rssBefore / MB,
    peakMb: peakBytes / MB,
    growthMb: (peakBytes - rssBefore) / MB,
    abortedVendor,
    abortMs,
    problems,
  };
}

/** One ranged request and what came back. */
export interface RangeRow {
  readonly target: string;
  readonly what: string;
  readonly sent: string;
  readonly expected: string;
  readonly got: string;
  readonly ok: boolean;
  /** MB/s of the body when it was read (an open range read to its end). */
  readonly mbPerSec: number;
}

/**
 * A resume: `Range: bytes=N-` of `file`, read to the end; 206 with `Content-Range: bytes N-(size-1)/size`
 * and the vendor's bytes from N on (head and tail checked, the length counted).
 */
export async function resume(target: Target, vendorUrl: string, what: string, file: Fetchable, from: number): Promise<RangeRow> {
  const seen = (await transfers(vendorUrl)).length;
  const o = await open(file.url, { ...file.headers, range: `bytes=${from}-` });
  const d = await drain(o, CHECKED);
  const t = (await transfers(vendorUrl)).slice(seen)[0];
  const want = `206 bytes ${from}-${file.size - 1}/${file.size}, ${file.size - from} bytes`;
  const got = `${o.status} ${o.headers['content-range'] ?? '(no content-range)'}, ${d.bytes} bytes`;
  const seed = t ? seedOf(t.id) : Number.NaN;
  const bytesRight =
    t !== undefined && generatedBytes(seed, from, from + CHECKED - 1).equals(d.head) && generatedBytes(seed, file.size - CHECKED, file.size - 1).equals(d.tail);
  return {
    target: target.name,
    what,
    sent: `Range: bytes=${from}-`,
    expected: want,
    got: `${got}${bytesRight ? ', bytes right' : ', BYTES WRONG'}`,
    ok: want === got && bytesRight,
    mbPerSec: d.bytes / MB / (d.ms / 1000),
  };
}

/**
 * A resume whose answer is only looked at, its body not read: `Range: bytes=N-` with `extra`
 * headers (an `If-Range`), or to a file whose server ignores Range; 206 or 200 expected.
 */
export async function headOnly(
  target: Target,
  what: string,
  file: Fetchable,
  from: number,
  extra: Record<string, string>,
  expect: 200 | 206,
): Promise<RangeRow> {
  const o = await open(file.url, { ...file.headers, range: `bytes=${from}-`, ...extra });
  o.res.destroy();
  const want = expect === 206 ? `206 bytes ${from}-${file.size - 1}/${file.size}` : `200 (whole file, ${file.size} bytes)`;
  const got =
    o.status === 206 ? `206 ${o.headers['content-range'] ?? '(no content-range)'}` : `${o.status} (whole file, ${o.headers['content-length'] ?? '?'} bytes)`;
  const sent = [`Range: bytes=${from}-`, ...Object.entries(extra).map(([k, v]) => `${k}: ${v}`)].join(', ');
  return { target: target.name, what, sent, expected: want, got, ok: want === got, mbPerSec: Number.NaN };
}
