/**
 * The big-body phase: N clients each post one S MB alpha body (a legal generateContent with an
 * inline image) to a target, all at once; the target's peak RSS meanwhile, to set against the
 * bytes in flight (N × S).
 */
import { Agent, request } from 'undici';
import { memory, watchPeak } from './proc.js';
import { f, grid } from './report.js';
import { BIG_BODY_PATH, bigAlphaBody } from './scenarios.js';

/** What one big-body phase measured. */
export interface BigBodyResult {
  readonly name: string;
  readonly count: number;
  readonly bodyBytes: number;
  /** RSS of the target after its start, before any load (what the ratio is taken over). */
  readonly idleMb: number;
  /** RSS of the target just before the bodies were sent. */
  readonly restMb: number;
  /** Peak RSS of the target while they were in flight. */
  readonly peakMb: number;
  readonly served: number;
  /** One line per request that did not come back 200 with an image. */
  readonly failures: readonly string[];
  readonly seconds: number;
}

/** One answer of sendAtOnce: its status, headers and text, or the transport error. */
export type Answer =
  | { readonly status: number; readonly headers: Record<string, string | string[] | undefined>; readonly text: string }
  | { readonly error: string };

/** Posts `body` to `url` `count` times at once, over as many connections; every answer, in no particular order. */
export async function sendAtOnce(url: string, headers: Record<string, string>, body: Buffer, count: number): Promise<Answer[]> {
  const agent = new Agent({ connections: count, headersTimeout: 300_000, bodyTimeout: 300_000 });
  try {
    return await Promise.all(
      Array.from({ length: count }, async (): Promise<Answer> => {
        try {
          const res = await request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json', ...headers }, body });
          return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
        } catch (err) {
          return { error: (err as Error).message };
        }
      }),
    );
  } finally {
    await agent.close();
  }
}

/** Sends `count` bodies of `bytes` bytes at once to the target and watches its peak RSS meanwhile. */
export async function bigBodies(
  name: string,
  target: { origin: string; headers: Record<string, string>; pid: number; idleMb: number },
  count: number,
  bytes: number,
): Promise<BigBodyResult> {
  const body = bigAlphaBody(bytes);
  const restMb = memory(target.pid).rss / 2 ** 20;
  const peak = watchPeak(target.pid);
  const started = performance.now();
  const answers = await sendAtOnce(`${target.origin}${BIG_BODY_PATH}`, target.headers, body, count);
  const seconds = (performance.now() - started) / 1000;
  const peakMb = peak.stop() / 2 ** 20;
  const failures = answers.flatMap((a) =>
    'error' in a
      ? [`${name}: big body: ${a.error}`]
      : a.status === 200 && a.text.includes('inlineData')
        ? []
        : [`${name}: big body: HTTP ${a.status} ${a.text.slice(0, 200)}`],
  );
  return { name, count, bodyBytes: body.length, idleMb: target.idleMb, restMb, peakMb, served: count - failures.length, failures, seconds };
}

/** Peak RSS over idle, as a multiple of the bytes in flight. */
export function bigBodyRatio(r: BigBodyResult): number {
  return (r.peakMb - r.idleMb) / ((r.count * r.bodyBytes) / 2 ** 20);
}

/** The phase's table: one line per target. */
export function bigBodyTable(results: readonly BigBodyResult[]): string {
  const head = [
    'target',
    'served',
    'seconds',
    'idle RSS MB',
    'RSS before MB',
    'peak RSS MB',
    'in flight MB',
    '(peak - idle) / in flight',
    '(peak - before) / in flight',
  ];
  const body = results.map((r) => {
    const inFlight = (r.count * r.bodyBytes) / 2 ** 20;
    return [
      r.name,
      `${r.served}/${r.count}`,
      f(r.seconds, 1),
      f(r.idleMb, 1),
      f(r.restMb, 1),
      f(r.peakMb, 1),
      f(inFlight, 0),
      `x${f(bigBodyRatio(r), 2)}`,
      `x${f((r.peakMb - r.restMb) / inFlight, 2)}`,
    ];
  });
  return grid(head, body);
}
