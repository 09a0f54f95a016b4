/**
 * Request ids, traces, the access log and the metrics (docs/admin-and-metrics.md, "Request ids, traces and the access
 * log"), end to end: a real gateway on port 0 in front of every simulator, its log lines captured,
 * real HTTP. The simulators record the x-request-id and traceparent each vendor call came with.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { Heard, Simulator } from '../../src/sim/http.js';
import { reportTaskGauges, TASK_COUNT_TTL_MS } from '../../src/tasks/task-gauges.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { silentLogger } from '../../src/log.js';
import type { Poller } from '../../src/tasks/poller.js';
import type { Store } from '../../src/store/store.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { until } from '../helpers/until.js';

const ADMIN_KEY = 'observability-admin-key';
const ALPHA_MODEL = 'alpha-3-pro-image-preview';
const ALPHA_PATH = `/v1beta/models/${ALPHA_MODEL}:generateContent`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

const alphaBody = (prompt: string) => ({
  contents: [{ role: 'user', parts: [{ text: prompt }] }],
  generationConfig: { imageConfig: {}, responseModalities: ['IMAGE'] },
});

/** A log line as pino writes it. */
type Line = Record<string, unknown> & { msg: string; level: number };

/** A task harness whose gateway logs (info and up) into `lines`, with the admin routes open. */
async function startRig(opts: { finishMs?: number; pollMs?: number } = {}): Promise<{ h: TaskHarness; lines: Line[] }> {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  const h = await startTaskHarness({ ...opts, log: pino({ level: 'info' }, sink), adminKey: ADMIN_KEY });
  return { h, lines };
}

/** What every simulator heard with this request id, oldest first. */
function heard(sims: Readonly<Record<string, Simulator>>, requestId: string): (Heard & { sim: string })[] {
  return Object.entries(sims).flatMap(([name, s]) => s.traces.filter((t) => t.requestId === requestId).map((t) => ({ ...t, sim: name })));
}

/** The access log lines of one request id. */
const accessLines = (lines: Line[], requestId: string) => lines.filter((l) => l.msg === 'request' && l.req_id === requestId);

/** Sends a request with raw header bytes fetch would refuse to send. */
function rawPost(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  assert.equal(res.status, 200);
  return res.text();
}

/** The value of one sample line of an exposition (labels in the order prom-client writes them), or null. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (.+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(/,(?=[a-zA-Z_]+=")/) : [];
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(m[3]);
  }
  return null;
}

describe('request ids, traces, the access log and request metrics', () => {
  let h: TaskHarness;
  let lines: Line[];
  let tokenId: string;
  before(async () => {
    ({ h, lines } = await startRig());
    tokenId = (await h.store.listTokens())[0]!.id;
  });
  after(() => h.close());

  test("a caller's x-request-id is kept: echoed in the answer, sent to the vendor, on the access log line", async () => {
    const id = 'client-req.42:a_b-C';
    const res = await h.post(ALPHA_PATH, alphaBody('a kite'), { 'x-request-id': id });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-request-id'), id);
    const calls = heard(h.sims, id);
    assert.equal(calls.length, 1, 'the vendor call carried the id');
    assert.equal(calls[0]!.sim, 'alpha-native');
    const mine = accessLines(lines, id);
    assert.equal(mine.length, 1, 'one access line per request');
    const line = mine[0]!;
    assert.equal(line.level, 30, 'at info');
    assert.equal(line.method, 'POST');
    assert.equal(line.route, 'alpha-generate-content');
    assert.equal(line.path, '/v1beta/models/{model}:generateContent');
    assert.equal(line.model, ALPHA_MODEL);
    assert.equal(h.snapshot.channelsByName.get(String(line.channel))?.profile.name, 'alpha-native', `the serving channel: ${String(line.channel)}`);
    assert.equal(line.token, tokenId);
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, 'number');
    assert.match(String(line.trace_id), /^[0-9a-f]{32}$/);
    assert.match(String(line.ref), UUID, 'the internal reference is our own');
    assert.ok(!JSON.stringify(line).includes(h.key), 'never the key');
  });

  test('without an x-request-id the gateway makes one, and the answer, the vendor and the log agree', async () => {
    const res = await h.post(ALPHA_PATH, alphaBody('a kite'));
    assert.equal(res.status, 200, res.text);
    const id = res.headers.get('x-request-id')!;
    assert.match(id, UUID);
    assert.equal(heard(h.sims, id).length, 1);
    assert.equal(accessLines(lines, id).length, 1);
    assert.equal(accessLines(lines, id)[0]!.ref, id, 'our own id is its own reference');
  });

  test('a hostile or oversized x-request-id is replaced, never echoed, sent or logged', async () => {
    const hostile = ['x'.repeat(129), 'two words', 'semi;colon', '<script>', 'quote"d', 'caf\u00e9', 'a/b', ''];
    for (const bad of hostile) {
      const res = await rawPost(h.url, ALPHA_PATH, { authorization: `Bearer ${h.key}`, 'x-request-id': bad }, alphaBody('a kite'));
      assert.equal(res.status, 200, `for ${JSON.stringify(bad)}`);
      const id = String(res.headers['x-request-id']);
      assert.match(id, UUID, `${JSON.stringify(bad)} replaced`);
      assert.equal(heard(h.sims, id).length, 1);
      assert.equal(accessLines(lines, id).length, 1);
    }
    const everything = JSON.stringify(lines) + JSON.stringify(Object.values(h.sims).flatMap((s) => s.traces));
    for (const bad of hostile.filter((b) => b !== '')) assert.ok(!everything.includes(JSON.stringify(bad).slice(1, -1)), `${JSON.stringify(bad)} went nowhere`);
    // The longest kept id is 128 characters.
    const longest = 'y'.repeat(128);
    const res = await h.post(ALPHA_PATH, alphaBody('a kite'), { 'x-request-id': longest });
    assert.equal(res.headers.get('x-request-id'), longest);
  });

  test('a traceparent is continued: same trace, our span as the parent upstream, echoed in the answer', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const res = await h.post(ALPHA_PATH, alphaBody('a kite'), { traceparent: `00-${traceId}-${parent}-01`, tracestate: 'congo=t61rcWkgMzE' });
    assert.equal(res.status, 200, res.text);
    const answer = TRACEPARENT.exec(res.headers.get('traceparent') ?? '');
    assert.ok(answer, `the answer carries a traceparent: ${res.headers.get('traceparent')}`);
    assert.equal(answer[1], traceId, 'the same trace');
    assert.notEqual(answer[2], parent, 'our own span');
    assert.equal(answer[3], '01', "the caller's flags");
    const id = res.headers.get('x-request-id')!;
    const up = TRACEPARENT.exec(heard(h.sims, id)[0]?.traceparent ?? '');
    assert.ok(up, 'the vendor call carried a traceparent');
    assert.equal(up[1], traceId);
    assert.equal(up[2], answer[2], "the vendor call is a child of our span, not of the caller's");
    const line = accessLines(lines, id)[0]!;
    assert.equal(line.trace_id, traceId);
    assert.equal(line.span_id, answer[2]);
  });

  test('an invalid traceparent is ignored: a new trace starts, not sampled', async () => {
    const invalid = [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
      'garbage',
    ];
    for (const tp of invalid) {
      const res = await h.post(ALPHA_PATH, alphaBody('a kite'), { traceparent: tp });
      assert.equal(res.status, 200, res.text);
      const answer = TRACEPARENT.exec(res.headers.get('traceparent') ?? '');
      assert.ok(answer, tp);
      assert.notEqual(answer[1], '4bf92f3577b34da6a3ce929d0e0e4736', `${tp} not continued`);
      assert.notEqual(answer[1], '0'.repeat(32));
      assert.equal(answer[3], '00');
      const up = heard(h.sims, res.headers.get('x-request-id')!)[0]!;
      assert.equal(TRACEPARENT.exec(up.traceparent ?? '')?.[1], answer[1], 'the vendor sees the new trace');
    }
    // A later version is read as version 00 when its first four fields are well formed (W3C).
    const later = await h.post(ALPHA_PATH, alphaBody('a kite'), { traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more' });
    assert.equal(TRACEPARENT.exec(later.headers.get('traceparent') ?? '')?.[1], '4bf92f3577b34da6a3ce929d0e0e4736');
  });

  test('two priced requests at once with the same x-request-id hold and settle apart', async () => {
    const key = await h.createKey(10);
    const token = (await h.store.listTokens()).find((t) => t.quota === 10)!;
    const id = 'resent-by-the-client';
    // The vendor takes its time, so both holds are open at once.
    const send = () => h.post(ALPHA_PATH, alphaBody('a kite [sim:fault=slow-headers:500]'), { authorization: `Bearer ${key}`, 'x-request-id': id });
    const [a, b] = await Promise.all([send(), send()]);
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.equal(a.headers.get('x-request-id'), id);
    assert.equal(b.headers.get('x-request-id'), id);
    const rows = await h.store.ledger(token.id, null, 100);
    const debits = rows.filter((r) => r.kind === 'debit');
    assert.equal(debits.length, 2, JSON.stringify(rows));
    assert.notEqual(debits[0]!.ref, debits[1]!.ref, 'two references');
    assert.ok(
      debits.every((r) => r.ref !== id),
      "the client's id is no ledger reference",
    );
    assert.deepEqual(await h.store.ledgerBalance(token.id), { used: 2, debit: 2, refund: 0, settle: 0 });
    const refs = accessLines(lines, id).map((l) => l.ref);
    assert.deepEqual([...refs].sort(), debits.map((r) => r.ref).sort(), 'each line names its own reference');
  });

  test('a failed request has its access line too: status, route, no token, no key', async () => {
    const res = await h.post(ALPHA_PATH, alphaBody('a kite'), { authorization: 'Bearer gw-not-a-key', 'x-request-id': 'unauth-1' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-request-id'), 'unauth-1', 'an error answer carries it too');
    assert.match(res.headers.get('traceparent') ?? '', TRACEPARENT);
    const [line] = accessLines(lines, 'unauth-1');
    assert.ok(line);
    assert.equal(line.status, 401);
    assert.equal(line.route, 'alpha-generate-content');
    assert.equal(line.token, null);
    assert.equal(line.channel, null);
    assert.ok(!JSON.stringify(line).includes('gw-not-a-key'));
    const none = await fetch(`${h.url}/no/such/path`, { headers: { 'x-request-id': 'lost-1' } });
    assert.equal(none.status, 404);
    assert.deepEqual(
      accessLines(lines, 'lost-1').map((l) => [l.route, l.path, l.status]),
      [['none', null, 404]],
    );
  });

  test('a synchronous request over a signed, asynchronous vendor: every call carries the ids, and the signature still holds', async () => {
    const id = 'gamma-sync-1';
    const res = await h.post('/v1/images/generations', { model: 'gamma-4.5', prompt: 'a kite' }, { 'x-request-id': id });
    assert.equal(res.status, 200, res.text);
    const calls = heard(h.sims, id);
    assert.ok(calls.length >= 2, `the submission and the looks: ${calls.length}`);
    assert.ok(calls.every((c) => c.sim === 'gamma-volc'));
    assert.equal(new Set(calls.map((c) => c.traceparent)).size, 1, 'one span of ours for the whole request');
  });

  test('/metrics: process metrics, request durations by route, model and status, vendor calls by channel and outcome', async () => {
    await h.post(ALPHA_PATH, alphaBody('a kite'));
    const unknown = await h.post('/v1/images/generations', { model: 'no-such-model-zz9', prompt: 'x' });
    assert.equal(unknown.status, 404, unknown.text);
    const text = await scrape(h.url);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      assert.ok(sample(text, name) !== null, `${name} is served`);
    }
    const count = sample(text, 'gateway_request_duration_seconds_count', { route: 'alpha-generate-content', model: ALPHA_MODEL, status: '200' });
    assert.ok(count !== null && count >= 1, 'the request histogram counts it');
    assert.ok(
      (sample(text, 'gateway_request_duration_seconds_count', { route: 'images-generations', model: 'other', status: '404' }) ?? 0) >= 1,
      'an unknown model is "other"',
    );
    assert.ok(!text.includes('no-such-model-zz9'), 'a model name the client made up is no label');
    assert.ok((sample(text, 'gateway_request_duration_seconds_count', { route: 'none', model: 'none', status: '404' }) ?? 0) >= 1, 'no route, no model');
    const alpha = [...h.snapshot.channelsByName.values()].filter((c) => c.profile.name === 'alpha-native').map((c) => c.name);
    assert.ok(
      alpha.some((c) => (sample(text, 'gateway_upstream_seconds_count', { channel: c, outcome: 'ok' }) ?? 0) >= 1),
      'vendor calls by channel and outcome',
    );
    // A scrape is quiet at info.
    assert.ok(!lines.some((l) => l.msg === 'request' && l.path === '/metrics'));
  });
});

describe('task metrics', () => {
  let h: TaskHarness;
  before(async () => {
    // Tasks that take a while: the first scrape sees them unfinished.
    ({ h } = await startRig({ finishMs: 3_000, pollMs: 50 }));
  });
  after(() => h.close());

  test('task gauges by status, the tasks this replica follows, and the poll lag; a download carries the ids', async () => {
    const sub = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'a paper boat' }, { 'x-request-id': 'submit-1' });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(heard(h.sims, 'submit-1').length, 1, 'the submission carried the id');
    const first = await scrape(h.url);
    const unfinished = ['submitting', 'queued', 'in_progress'].map((status) => sample(first, 'gateway_tasks', { status }));
    assert.ok(
      unfinished.every((n) => n !== null),
      `every unfinished status is reported: ${unfinished.join(', ')}`,
    );
    assert.equal(
      unfinished.reduce((a, b) => a! + b!, 0),
      1,
      'one task under way',
    );
    assert.equal(sample(first, 'gateway_tasks_followed'), 1);
    await until('a look by the poller', () => h.gateway.poller.stats.queries > 0);
    const later = await scrape(h.url);
    assert.ok((sample(later, 'gateway_task_poll_lag_seconds_count') ?? 0) >= 1, 'each look of the poller is timed against its due time');
    const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed');
    const dl = await h.get(`/v1/videos/${done.id}/content`, { 'x-request-id': 'download-1' });
    assert.equal(dl.status, 200);
    assert.equal(dl.headers.get('x-request-id'), 'download-1');
    assert.ok(heard(h.sims, 'download-1').length >= 1, 'the download from the vendor carried the id');
  });
});

describe('task gauges from the store', () => {
  test('the store is counted at most once per TTL however often it is scraped, and a failed count keeps the last figures', async () => {
    let counts = 0;
    let fail = false;
    const store = {
      async countUnfinishedTasks() {
        counts++;
        if (fail) throw new Error('store away');
        return { submitting: 0, queued: counts, in_progress: 0 };
      },
    } as unknown as Store;
    let now = 1_000;
    const metrics = new Metrics();
    reportTaskGauges(store, { size: 3 } as unknown as Poller, metrics, silentLogger(), () => now);
    const queued = async () => sample(await metrics.text(), 'gateway_tasks', { status: 'queued' });
    assert.deepEqual(await Promise.all([queued(), queued(), queued()]), [1, 1, 1], 'scrapes at once share one count');
    now += TASK_COUNT_TTL_MS - 1;
    assert.equal(await queued(), 1);
    assert.equal(counts, 1);
    now += 1;
    assert.equal(await queued(), 2, 'counted again once the TTL is over');
    fail = true;
    now += TASK_COUNT_TTL_MS;
    assert.equal(await queued(), 2, 'the last figures stand');
    assert.equal(sample(await metrics.text(), 'gateway_tasks_followed'), 3);
  });
});

describe('process metrics', () => {
  test('are registered once per process, whatever the number of gateways', async () => {
    const a = await new Metrics().text();
    const b = await new Metrics().text();
    const times = (text: string) => text.split('\n').filter((l) => l.startsWith('# TYPE process_cpu_user_seconds_total ')).length;
    assert.equal(times(a), 1);
    assert.equal(times(b), 1);
  });
});
