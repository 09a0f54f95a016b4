import type { EventFraming } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * A vendor's event stream cut into its events as the bytes arrive (docs/channels-yaml.md, "Streamed
 * answers"): Server-Sent Events as the WHATWG HTML standard parses them (`event:` and `data:` fields,
 * several `data:` lines joined by a line feed, comments and other fields ignored, CRLF, LF or CR line
 * ends, an event dispatched at a blank line), or newline-delimited JSON (one event per non-blank
 * line). Only the event being read is held, never the stream: an event of several megabytes (a
 * base64 image) is joined once, from the chunks it came in, when its end arrives.
 *
 * The bytes are parsed synchronously as each chunk arrives (`Buffer.indexOf` finds the line ends:
 * a byte-by-byte loop took 20 ms on a 4 MB event); between chunks the reader keeps only its parser's
 * state and the events not yet asked for, so a stream held open mid-way (a stalled vendor) keeps no
 * copy of an event already handed on.
 */

export type { EventFraming };

/** One event as the vendor sent it: its name (SSE `event:`; null when none) and its data, as text. */
export interface VendorEvent {
  readonly event: string | null;
  readonly data: string;
}

const LF = 0x0a;
const CR = 0x0d;

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('bad_response', `an event of the upstream stream is larger than ${maxBytes} bytes`, { upstream: { phase: 'unknown' } });
}

/**
 * Reads the events of `chunks` in order, one `next()` at a time. An event larger than `maxBytes` is
 * the vendor's fault (bad_response); bytes after the last complete event when the stream ends are
 * dropped, as the SSE standard drops them (the caller decides what an early end means).
 */
export class EventReader {
  readonly #chunks: AsyncIterator<Buffer>;
  readonly #lines: LineSplitter;
  readonly #framing: EventFraming;
  readonly #maxBytes: number;
  /** Events parsed and not yet asked for (a chunk may end several). */
  #ready: VendorEvent[] = [];
  #ended = false;
  // The SSE event being read.
  #name: string | null = null;
  #data: string[] = [];
  #size = 0;

  constructor(chunks: AsyncIterable<Buffer>, framing: EventFraming, maxBytes: number) {
    this.#chunks = chunks[Symbol.asyncIterator]();
    this.#lines = new LineSplitter(maxBytes);
    this.#framing = framing;
    this.#maxBytes = maxBytes;
  }

  /** The next event; null once the stream has ended. */
  async next(): Promise<VendorEvent | null> {
    while (this.#ready.length === 0) {
      if (this.#ended) return null;
      const r = await this.#chunks.next();
      if (r.done) this.#end();
      else this.#feed(r.value);
    }
    return this.#ready.shift() ?? null;
  }

  #feed(chunk: Buffer): void {
    for (const line of this.#lines.push(chunk)) this.#line(line);
  }

  #end(): void {
    this.#ended = true;
    // NDJSON's last line may lack its line end.
    const rest = this.#lines.rest();
    if (this.#framing === 'ndjson' && rest.trim() !== '') this.#ready.push({ event: null, data: rest });
  }

  #line(line: string): void {
    if (this.#framing === 'ndjson') {
      if (line.trim() !== '') this.#ready.push({ event: null, data: line });
      return;
    }
    if (line === '') {
      // A blank line ends the event; one without data is no event (the standard resets and waits).
      if (this.#data.length > 0) this.#ready.push({ event: this.#name, data: this.#data.join('\n') });
      this.#name = null;
      this.#data = [];
      this.#size = 0;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      // An event of many data lines is bounded as a whole, as one long line is.
      this.#size += value.length + 1;
      if (this.#size > this.#maxBytes) throw tooLarge(this.#maxBytes);
      this.#data.push(value);
    } else if (field === 'event') this.#name = value;
  }
}

/**
 * Splits bytes into lines ended by CRLF, LF or CR, holding only the line not yet ended. A CR at
 * the end of a chunk may be the first half of a CRLF: the LF that starts the next chunk is skipped.
 */
class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipLf = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): string[] {
    const out: string[] = [];
    let start = 0;
    if (this.skipLf && chunk.length > 0 && chunk[0] === LF) start = 1;
    this.skipLf = false;
    let lf = chunk.indexOf(LF, start);
    let cr = chunk.indexOf(CR, start);
    while (lf !== -1 || cr !== -1) {
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      out.push(this.take(chunk.subarray(start, end)));
      start = end + 1;
      if (end === cr) {
        if (start < chunk.length) {
          if (chunk[start] === LF) start++;
        } else this.skipLf = true;
      }
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
    return out;
  }

  /** What remains after the last line end, as text. */
  rest(): string {
    return this.take(Buffer.alloc(0));
  }

  private hold(piece: Buffer): void {
    this.pendingBytes += piece.length;
    if (this.pendingBytes > this.maxBytes) throw tooLarge(this.maxBytes);
    // A small tail is copied: it must not keep the whole chunk it came in alive while the stream waits.
    this.pending.push(piece.length * 2 < piece.buffer.byteLength ? Buffer.from(piece) : piece);
  }

  private take(last: Buffer): string {
    if (this.pending.length === 0) return last.toString('utf8');
    const size = this.pendingBytes + last.length;
    if (size > this.maxBytes) throw tooLarge(this.maxBytes);
    this.pending.push(last);
    const line = Buffer.concat(this.pending, size).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    return line;
  }
}
