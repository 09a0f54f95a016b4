/**
 * The client side of bench/streams: one image stream read as it arrives. The request goes out on
 * an undici Pool, its answer's events are cut as they arrive (`sseEvents` below: LF and CRLF line
 * ends alike, so the simulator's frames and the gateway's are read by the same code), and each
 * moment that matters is timed with performance.now(): the answer's headers, the first partial
 * image, the completed event, the end of the body. Every event is checked: its data is JSON whose
 * `type` is the event's name, and an image event carries base64.
 */
import type { Dispatcher } from 'undici';

/** Where a stream is asked for: the same path and body for every target, only origin and headers differ. */
export interface StreamTarget {
  readonly name: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * How a stream ended, from the client's side: its completed event after every partial image, then
 * the end of the body; or anything else (a status, an error event, a malformed event, a cut body,
 * a transport error).
 */
export type StreamEnd = 'completed' | 'failed';

/** What one stream did. Times are ms from the moment the request was handed to undici; NaN where it did not happen. */
export interface StreamResult {
  readonly end: StreamEnd;
  readonly status: number;
  readonly headersMs: number;
  readonly firstPartialMs: number;
  readonly completedMs: number;
  readonly endMs: number;
  readonly partials: number;
  /** Why it failed (status, event, error), for the report. */
  readonly failure?: string;
}

/** Moments a caller may act on: the first event in (whatever it is). */
export interface StreamHooks {
  readonly onFirstEvent?: () => void;
}

const PARTIAL = 'image_generation.partial_image';
const COMPLETED = 'image_generation.completed';
/** The largest event read: one base64 image (the gateway's `max_bytes` for the route). */
const MAX_EVENT_BYTES = 64 * 2 ** 20;
const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;

/** Sends one stream request and reads it to its end; never throws (a failure is in the result). */
export async function readStream(dispatcher: Dispatcher, target: StreamTarget, body: string, partials: number, hooks: StreamHooks = {}): Promise<StreamResult> {
  const t0 = performance.now();
  let status = 0;
  let headersMs = NaN;
  let firstPartialMs = NaN;
  let completedMs = NaN;
  let seen = 0;
  let events = 0;
  const fail = (failure: string): StreamResult => ({
    end: 'failed',
    status,
    headersMs,
    firstPartialMs,
    completedMs,
    endMs: performance.now() - t0,
    partials: seen,
    failure,
  });
  try {
    const res = await dispatcher.request({
      method: 'POST',
      path: target.path,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...target.headers },
      body,
    });
    headersMs = performance.now() - t0;
    status = res.statusCode;
    const type = String(res.headers['content-type'] ?? '');
    if (status !== 200 || !type.startsWith('text/event-stream')) {
      const text = await res.body.text();
      return fail(`HTTP ${status} ${type}: ${text.slice(0, 300)}`);
    }
    for await (const ev of sseEvents(res.body as AsyncIterable<Buffer>)) {
      const at = performance.now() - t0;
      if (events++ === 0) hooks.onFirstEvent?.();
      let data: { type?: unknown; b64_json?: unknown; partial_image_index?: unknown };
      try {
        data = JSON.parse(ev.data) as typeof data;
      } catch {
        return fail(`malformed event ${ev.event}: ${ev.data.slice(0, 200)}`);
      }
      if (ev.event !== data.type) return fail(`event ${ev.event} carries ${String(data.type)}: ${ev.data.slice(0, 300)}`);
      if (ev.event === PARTIAL && typeof data.b64_json === 'string' && data.b64_json !== '' && data.partial_image_index === seen) {
        if (seen++ === 0) firstPartialMs = at;
      } else if (ev.event === COMPLETED && typeof data.b64_json === 'string' && data.b64_json !== '' && seen === partials && Number.isNaN(completedMs)) {
        completedMs = at;
      } else return fail(`unexpected event ${ev.event} after ${seen} partial(s): ${ev.data.slice(0, 300)}`);
    }
    if (Number.isNaN(completedMs)) return fail(`the stream ended after ${seen} partial(s) without its completed event`);
    return { end: 'completed', status, headersMs, firstPartialMs, completedMs, endMs: performance.now() - t0, partials: seen };
  } catch (err) {
    const e = err as { code?: string; name?: string; message?: string };
    return fail(`${e.code ?? e.name ?? 'Error'}: ${e.message ?? String(err)}`);
  }
}

/**
 * The events of an SSE body whose lines end in LF or CRLF (what the simulator and the gateway
 * send; a lone CR is not looked for): `event:` and `data:` fields, an event ended by a blank line.
 * Only line ends are looked at byte by byte (Buffer.indexOf, native): the client must cost little
 * beside the processes it measures, also when an event carries megabytes of base64.
 */
export async function* sseEvents(chunks: AsyncIterable<Buffer>): AsyncGenerator<{ event: string | null; data: string }> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  /** Bytes of the line being read so far (a CR right before its LF not counted), across chunks. */
  let lineBytes = 0;
  let lastByte = -1;
  for await (const chunk of chunks) {
    let from = 0;
    let lineStart = 0;
    for (let lf = chunk.indexOf(LF); lf !== -1; lf = chunk.indexOf(LF, lf + 1)) {
      const before = lf > 0 ? chunk[lf - 1] : lastByte;
      const length = lineBytes + (lf - lineStart) - (before === CR ? 1 : 0);
      lineStart = lf + 1;
      lineBytes = 0;
      if (length !== 0) continue;
      // A blank line: the event is what came before it.
      held.push(chunk.subarray(from, lf + 1));
      heldBytes += lf + 1 - from;
      from = lf + 1;
      const ev = fields(Buffer.concat(held, heldBytes));
      held = [];
      heldBytes = 0;
      if (ev) yield ev;
    }
    lineBytes += chunk.length - lineStart;
    lastByte = chunk.length > 0 ? chunk[chunk.length - 1]! : lastByte;
    if (from < chunk.length) {
      held.push(chunk.subarray(from));
      heldBytes += chunk.length - from;
      if (heldBytes > MAX_EVENT_BYTES) throw new Error(`an event larger than ${MAX_EVENT_BYTES} bytes`);
    }
  }
}

/** The `event:` and `data:` fields of one event's bytes (its lines); null when it has no data. */
function fields(buf: Buffer): { event: string | null; data: string } | null {
  let event: string | null = null;
  const data: string[] = [];
  for (let start = 0; start < buf.length; ) {
    let end = buf.indexOf(LF, start);
    if (end === -1) end = buf.length;
    const stop = end > start && buf[end - 1] === CR ? end - 1 : end;
    const colon = buf.indexOf(COLON, start);
    if (colon !== -1 && colon < stop) {
      const name = buf.toString('latin1', start, colon);
      const from = buf[colon + 1] === SPACE ? colon + 2 : colon + 1;
      if (name === 'event') event = buf.toString('utf8', from, stop);
      else if (name === 'data') data.push(buf.toString('utf8', from, stop));
    }
    start = end + 1;
  }
  return data.length > 0 ? { event, data: data.join('\n') } : null;
}
