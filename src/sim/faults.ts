import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { json } from './http.js';

/**
 * Faults every simulator can produce on demand. A fault is chosen per request by, in order: the
 * `x-sim-fault` header, the `sim_fault` query parameter, a `[sim:fault=…]` marker in the prompt,
 * or the simulator's queue (`sim.faults.push(…)`). Forms:
 *   `429`, `500`, `503`, … any status: the vendor's own error body for that status
 *   `STATUS:wait:S`    that status with a wait of S seconds stated the vendor's own way in its
 *                      error body, and no Retry-After header (vendors whose error body has no place
 *                      for a wait state none: alpha-native and eta-operations have one)
 *   `proxy:STATUS`     that status from something in front of the vendor (a proxy, a load
 *                      balancer): an HTML page that is nobody's JSON, e.g. `proxy:404`
 *   `slow-headers:MS`  wait MS before answering normally
 *   `slow-body:MS`     send headers and half the body, wait MS, send the rest
 *   `reset`            destroy the connection without an answer
 *   `malformed-json`   a 200 whose body is cut-off JSON
 *   `hang`             never answer
 * Forms that act inside a streamed answer (Server-Sent Events), each after its first event has been
 * written; on an answer that is not streamed they are ignored and the answer is normal:
 *   `stream-stall:MS`  wait MS before the rest of the events (a stalled vendor; the wait ends if
 *                      the client goes away)
 *   `stream-cut`       destroy the connection: the chunked body never ends
 *   `stream-error`     the vendor's own mid-stream error event, then the end of the stream
 *   `stream-malformed` one frame whose data is cut-off JSON, then the end of the stream
 * On a streamed answer `slow-body:MS` stalls before the second half of the events, as a slow vendor
 * streams; every other form acts as on any answer, before it (a status is the vendor's JSON error).
 * sendEventStream below writes a stream and applies these; the vendor's error event and malformed
 * frame are the simulator's own.
 */
export type Fault =
  | { kind: 'status'; status: number; waitS?: number }
  | { kind: 'proxy'; status: number }
  | { kind: 'slow-headers'; ms: number }
  | { kind: 'slow-body'; ms: number }
  | { kind: 'reset' }
  | { kind: 'malformed-json' }
  | { kind: 'hang' }
  | { kind: 'stream-stall'; ms: number }
  | { kind: 'stream-cut' }
  | { kind: 'stream-error' }
  | { kind: 'stream-malformed' };

/** The faults that act inside a streamed answer (slow-body among them: a stream is slow between its events). */
export type StreamFault = Extract<Fault, { kind: 'slow-body' | 'stream-stall' | 'stream-cut' | 'stream-error' | 'stream-malformed' }>;

/** Parses a fault form; null when it is not one. */
export function parseFault(text: string | null | undefined): Fault | null {
  if (!text) return null;
  const t = text.trim();
  if (/^[1-5][0-9][0-9]$/.test(t)) return { kind: 'status', status: Number(t) };
  const w = /^([1-5][0-9][0-9]):wait:([0-9]{1,6})$/.exec(t);
  if (w) return { kind: 'status', status: Number(w[1]), waitS: Number(w[2]) };
  const p = /^proxy:([1-5][0-9][0-9])$/.exec(t);
  if (p) return { kind: 'proxy', status: Number(p[1]) };
  const m = /^(slow-headers|slow-body):([0-9]{1,6})$/.exec(t);
  if (m) return { kind: m[1] as 'slow-headers' | 'slow-body', ms: Number(m[2]) };
  if (t === 'reset' || t === 'malformed-json' || t === 'hang') return { kind: t };
  const s = /^stream-stall:([0-9]{1,6})$/.exec(t);
  if (s) return { kind: 'stream-stall', ms: Number(s[1]) };
  if (t === 'stream-cut' || t === 'stream-error' || t === 'stream-malformed') return { kind: t };
  return null;
}

const MARKER = /\[sim:fault=([a-z0-9:-]+)\]/;

/** The fault requested for this request, if any (consumes one queued fault only when no other source names one). */
export function pickFault(req: IncomingMessage, url: URL, prompt: string, queue: string[]): Fault | null {
  const header = req.headers['x-sim-fault'];
  const named = (typeof header === 'string' ? header : null) ?? url.searchParams.get('sim_fault') ?? MARKER.exec(prompt)?.[1] ?? null;
  if (named) return parseFault(named);
  return queue.length > 0 ? parseFault(queue.shift()) : null;
}

/**
 * Applies a fault. Returns true when the fault replaced the answer; false when the caller should
 * answer normally (after a slow-headers wait). `answer` sends the normal answer for slow-body.
 */
export async function applyFault(
  fault: Fault,
  res: ServerResponse,
  /** The vendor's error body for a status, stating `waitS` seconds where its protocol has a place for it. */
  vendorError: (status: number, waitS?: number) => unknown,
  normalBody: () => unknown,
): Promise<boolean> {
  switch (fault.kind) {
    case 'status':
      // A stated wait is in the body only, so a test sees the body's wait reach the client.
      if (fault.waitS !== undefined) json(res, fault.status, vendorError(fault.status, fault.waitS));
      else json(res, fault.status, vendorError(fault.status), fault.status === 429 ? { 'retry-after': '2' } : {});
      return true;
    case 'proxy': {
      const title = `${fault.status} ${STATUS_CODES[fault.status] ?? 'Error'}`;
      const page = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
      res.writeHead(fault.status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(page) });
      res.end(page);
      return true;
    }
    case 'slow-headers':
      await delay(fault.ms);
      return false;
    case 'slow-body': {
      const text = JSON.stringify(normalBody());
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      const half = Math.floor(text.length / 2);
      res.write(text.slice(0, half));
      await delay(fault.ms);
      if (!res.destroyed) res.end(text.slice(half));
      return true;
    }
    case 'reset':
      res.socket?.destroy();
      return true;
    case 'malformed-json':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data": [ {"partial": ');
      return true;
    case 'hang':
      return true;
    // Mid-stream faults mean nothing to an answer that is not a stream: it is answered normally.
    case 'stream-stall':
    case 'stream-cut':
    case 'stream-error':
    case 'stream-malformed':
      return false;
  }
}

/** The fault as one acting inside a stream, or null when it acts before the answer (or there is none). */
export function streamFault(fault: Fault | null): StreamFault | null {
  if (!fault) return null;
  const k = fault.kind;
  return k === 'slow-body' || k === 'stream-stall' || k === 'stream-cut' || k === 'stream-error' || k === 'stream-malformed' ? fault : null;
}

// ---- event streams --------------------------------------------------------------------------------

/** What the stream writer does, counted for a simulator's stats. */
export interface StreamStats {
  /** Events written (handed to the socket), all streams. */
  events: number;
  /** Streams now waiting for their client to take what was written ('drain'). */
  blocked: number;
}

/** A simulator's event stream, as sendEventStream writes it. */
export interface EventStream {
  /** The events in order, each a whole frame, built only when it is about to be written. */
  readonly frames: readonly (() => string)[];
  /** The vendor's own mid-stream error event, a whole frame (`stream-error`). */
  readonly errorFrame: string;
  /** A frame whose data is cut-off JSON (`stream-malformed`). */
  readonly malformedFrame: string;
  /** Milliseconds between two events (a paced vendor); 0 by default. */
  readonly gapMs?: number;
  readonly fault?: StreamFault | null;
  readonly stats?: StreamStats;
}

/** How a stream ended: all written, ended by its fault, or left by the client first. */
export type StreamEnd = 'complete' | 'fault' | 'gone';

/**
 * Writes an event stream (200, `text/event-stream`) the way a vendor does: one write per event, and
 * the next event only once the socket took the last one ('drain'), so a slow reader slows the
 * simulator and a stream is never held whole in memory; it stops when the client goes away, in a
 * wait as much as in a write. A stream fault acts as the module comment says.
 */
export async function sendEventStream(res: ServerResponse, s: EventStream): Promise<StreamEnd> {
  // 'close' also comes after a normal end, but the writer has stopped looking by then.
  let closed = false;
  res.once('close', () => (closed = true));
  const gone = () => closed || res.destroyed;
  const stats = s.stats ?? { events: 0, blocked: 0 };
  // Resolves once the last frame left the process (a cut must not drop the event it cuts after).
  let flushed: Promise<void> = Promise.resolve();
  const write = async (frame: string): Promise<boolean> => {
    if (gone()) return false;
    stats.events++;
    let taken = true;
    flushed = new Promise((resolve) => {
      taken = res.write(frame, () => resolve());
    });
    if (!taken) {
      stats.blocked++;
      await until(res, 'drain');
      stats.blocked--;
    }
    return !gone();
  };
  const fault = s.fault ?? null;
  // slow-body stalls before the second half of the events, as it did before streams had faults of their own.
  const half = Math.ceil(s.frames.length / 2);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [i, frame] of s.frames.entries()) {
    const pause = i === 0 ? 0 : fault?.kind === 'slow-body' && i === half ? fault.ms : (s.gapMs ?? 0);
    if (pause > 0 && !gone()) await wait(res, pause);
    if (!(await write(frame()))) return 'gone';
    if (i > 0 || !fault) continue;
    if (fault.kind === 'stream-stall') await wait(res, fault.ms);
    else if (fault.kind === 'stream-cut') {
      // The first write with the headers is corked until the next tick: destroyed now, it would be lost.
      await Promise.race([flushed, until(res, 'close')]);
      res.destroy();
      return 'fault';
    } else if (fault.kind === 'stream-error' || fault.kind === 'stream-malformed') {
      if (!(await write(fault.kind === 'stream-error' ? s.errorFrame : s.malformedFrame))) return 'gone';
      res.end();
      return 'fault';
    }
  }
  if (gone()) return 'gone';
  res.end();
  return 'complete';
}

/** Resolves on `event` or when the response closes (the client went away), whichever is first. */
function until(res: ServerResponse, event: string): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off(event, done);
      res.off('close', done);
      resolve();
    };
    res.on(event, done);
    res.on('close', done);
  });
}

/** Waits `ms`, or less when the client goes away meanwhile. */
function wait(res: ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on('close', done);
  });
}
