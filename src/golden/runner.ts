import { deepStrictEqual } from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseDocument } from 'yaml';
import { loadConfigOrThrow } from '../config/load.js';
import { restrictChannels } from '../config/lookups.js';
import type { Snapshot } from '../config/snapshot.js';
import { createGateway } from '../gateway.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/open-store.js';
import { hashKey } from '../tokens/keys.js';
import { sequentialTaskIds } from '../tasks/task-id.js';
import { sequentialLinkSecrets } from '../links/hand-out.js';
import type { GoldenCase, GoldenStep, RecordedRequest } from './golden-case.js';
import { scriptedAnswerProblems, startRecordingVendor, type RecordingVendor } from './recording-vendor.js';

/** Fixed inputs of every golden run, so expected outputs are stable. */
export const GOLDEN_CLOCK = new Date('2026-01-01T00:00:00.000Z');
export const GOLDEN_KEY = 'gw-golden-client-key';
/** The gateway's public URL in golden answers (download links). */
export const GOLDEN_PUBLIC_URL = 'http://gateway.test';

/** The outcome of one case. */
export interface GoldenResult {
  readonly name: string;
  readonly file: string;
  readonly ok: boolean;
  /** What differs, when not ok. */
  readonly diff?: string;
  readonly updated?: boolean;
}

/** Every case file under `dir` (one folder per profile), sorted. */
export function listCases(dir: string): string[] {
  const out: string[] = [];
  for (const profile of readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    for (const f of readdirSync(join(dir, profile.name))
      .filter((f) => f.endsWith('.yaml'))
      .sort())
      out.push(join(dir, profile.name, f));
  }
  return out;
}

interface Exchange {
  recorded: RecordedRequest[];
  response: { status: number; headers: Record<string, string | string[] | undefined>; body: unknown };
}

/**
 * Runs golden cases: the project's config is loaded with every channel of the case's profile
 * pointed at a recording fake vendor, the public request goes through a real gateway over HTTP,
 * and the recorded vendor request and the public answer are compared with the case.
 * With `update`, differing expectations are rewritten in place instead.
 */
export async function runGolden(configDir: string, casesDir: string, opts: { update?: boolean; filter?: string } = {}): Promise<GoldenResult[]> {
  const cases = listCases(casesDir)
    .map((file) => ({ file, name: relative(casesDir, file).replace(/\.yaml$/, '') }))
    .filter((c) => !opts.filter || c.name.includes(opts.filter));
  // Nothing to run: answered before the config is compiled and the vendor started.
  if (cases.length === 0) return [];
  const vendor = await startRecordingVendor();
  const results: GoldenResult[] = [];
  // A config that does not load still stops the recording vendor (its server would keep the process alive).
  try {
    const full = loadConfigOrThrow(configDir, {
      overrideChannel: (channel) => ({
        base_url: vendor.url,
        secrets: Object.fromEntries(Object.keys(channel.secrets ?? {}).map((k) => [k, `golden-${k}`])),
      }),
    });
    for (const { file, name } of cases) {
      const [profile = ''] = name.split('/');
      results.push(
        await runCase(
          file,
          name,
          restrictChannels(full, (c) => c.profile.name === profile),
          vendor,
          opts.update ?? false,
        ),
      );
    }
  } finally {
    await vendor.close();
  }
  return results;
}

/** One case against a gateway of its own, on a store of its own. */
async function runCase(file: string, name: string, snapshot: Snapshot, vendor: RecordingVendor, update: boolean): Promise<GoldenResult> {
  // A store per case: task ids restart at task_golden1… in every case.
  const store = await openStore(':memory:');
  await store.createToken({ name: 'golden', keyHash: hashKey(GOLDEN_KEY), group: 'default', models: null, quota: null });
  // No background polling: every vendor call is one a step asked for, and each task query asks.
  const gateway = createGateway({
    snapshot: () => snapshot,
    store,
    log: silentLogger(),
    clock: () => GOLDEN_CLOCK,
    random: () => 0,
    poll: false,
    newTaskId: sequentialTaskIds(),
    newLinkSecret: sequentialLinkSecrets(),
    publicUrl: GOLDEN_PUBLIC_URL,
    // Synchronous routes over asynchronous vendors look again at once: the vendor here is scripted.
    awaitIntervalMs: 0,
    // One "no such task" answer shows the profile's verdict (in service it must repeat for a while).
    lostAfterMs: 0,
  });
  await gateway.listen(0);
  try {
    const doc = parseDocument(readFileSync(file, 'utf8'));
    // A case that is not valid YAML (a key given twice, say) must fail, not run on half of it.
    if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('\n'));
    const gcase = doc.toJS() as GoldenCase;
    const steps = gcase.steps ?? [gcase];
    const malformed = steps.flatMap((step, i) => scriptedAnswerProblems(step).map((p) => (gcase.steps ? `step ${i + 1}: ${p}` : p)));
    if (malformed.length > 0) return { name, file, ok: false, diff: `the case is malformed: ${malformed.join('\n')}` };
    const diffs: string[] = [];
    let updated = false;
    for (const [i, step] of steps.entries()) {
      vendor.play(step);
      const response = await send(gateway.url(), step);
      const at = gcase.steps ? ['steps', i] : [];
      const r = compare(step, { recorded: vendor.recorded(), response }, doc, at, update);
      if (r.diff) diffs.push(gcase.steps ? `step ${i + 1} (${step.request.method} ${step.request.path}):\n${r.diff}` : r.diff);
      updated ||= r.updated;
    }
    if (updated) writeFileSync(file, doc.toString({ lineWidth: 0 }));
    return diffs.length === 0 ? { name, file, ok: true, updated } : { name, file, ok: false, diff: diffs.join('\n') };
  } catch (err) {
    return { name, file, ok: false, diff: `runner error: ${(err as Error).stack ?? String(err)}` };
  } finally {
    await gateway.close();
    await store.close();
  }
}

function send(base: string, gcase: GoldenStep): Promise<Exchange['response']> {
  const headers: Record<string, string> = { ...gcase.request.headers };
  if (gcase.request.auth !== false) headers.authorization ??= `Bearer ${GOLDEN_KEY}`;
  let payload: string | undefined;
  if (gcase.request.raw_body !== undefined) payload = gcase.request.raw_body;
  else if (gcase.request.body !== undefined) {
    payload = JSON.stringify(gcase.request.body);
    headers['content-type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${gcase.request.path}`, { method: gcase.request.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = String(res.headers['content-type']).startsWith('text/event-stream') ? sseEvents(text) : JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * An event stream as a case records it: its frames in order, each its data parsed as JSON, or
 * `{event, data}` when the frame names its event, when the text is exactly such frames (an optional
 * `event: <name>` line, one `data: <json>` line, a blank line, CRLF line ends). Anything else throws,
 * and the caller records the text itself: a change of framing shows in the diff.
 */
function sseEvents(text: string): unknown[] {
  const frames = text.split('\r\n\r\n');
  if (frames.pop() !== '') throw new Error('the stream does not end with a whole frame');
  return frames.map((f) => {
    const named = /^event: ([^\r\n]*)\r\n(data: [^\r\n]*)$/.exec(f);
    const line = named ? (named[2] ?? '') : f;
    if (!line.startsWith('data: ') || /[\r\n]/.test(line)) throw new Error(`not a one-line data frame: ${f.slice(0, 40)}`);
    const data = JSON.parse(line.slice('data: '.length)) as unknown;
    return named ? { event: named[1], data } : data;
  });
}

function same(a: unknown, b: unknown): string | null {
  try {
    deepStrictEqual(a, b);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Compares one step with what happened; with `update`, writes the observed values into the document at `at`. */
function compare(
  step: GoldenStep,
  got: Exchange,
  doc: ReturnType<typeof parseDocument>,
  at: (string | number)[],
  update: boolean,
): { diff?: string; updated: boolean } {
  const expectedHeaders = step.response.headers ?? {};
  const gotHeaders: Record<string, string> = {};
  for (const k of Object.keys(expectedHeaders)) gotHeaders[k] = String(got.response.headers[k.toLowerCase()] ?? '');
  const gotResponse = { status: got.response.status, ...(step.response.headers ? { headers: gotHeaders } : {}), body: got.response.body };
  const calls = JSON.parse(JSON.stringify(got.recorded)) as RecordedRequest[];
  const later = step.then ?? [];
  const diffs = [
    same(calls[0] ?? null, step.upstream ?? null),
    ...later.map((t, k) => same(calls[k + 1] ?? null, t.upstream)),
    calls.length > later.length + 1 ? `the gateway made ${calls.length} vendor calls; the case scripts ${later.length + 1}` : null,
    same(gotResponse, { status: step.response.status, ...(step.response.headers ? { headers: expectedHeaders } : {}), body: step.response.body }),
  ].filter((d): d is string => d !== null);
  if (diffs.length === 0) return { updated: false };
  if (update) {
    doc.setIn([...at, 'upstream'], calls[0] ?? null);
    later.forEach((_t, k) => {
      doc.setIn([...at, 'then', k, 'upstream'], calls[k + 1] ?? null);
    });
    doc.setIn([...at, 'response'], gotResponse);
    return { updated: true };
  }
  return { diff: diffs.join('\n'), updated: false };
}
