import type { EventFraming } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * A vendor's event stream cut into its events as the bytes arrive (docs/channels-yaml.md, "Streamed
 * answers"): Server-Sent Events as the WHATWG HTML standard parses them (`event:` and `data:` fields,
 * several `data:` lines joined by a line feed, comments and other fields ignored, CRLF, LF or CR line
 * ends, an event dispatched at a blank line), or newline-delimited JSON (one event per non-blank
 * line). Only the event being read is held, never the stream: an event of several megabytes (a
 * base64 image) is joined once, from the chunks it came in, when its end arrives.
 */

export type { EventFraming };

/** One event as the vendor sent it: its name (SSE `event:`; null when none) and its data, as text. */
export interface VendorEvent {
  readonly event: string | null;
  readonly data: string;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * The events of `chunks`, in order. An event larger than `maxBytes` is the vendor's fault
 * (bad_response); bytes after the last complete event when the stream ends are dropped, as the SSE
 * standard drops them (the caller decides what an early end means).
 */
export async function* vendorEvents(chunks: AsyncIterable<Buffer>, framing: EventFraming, maxBytes: number): AsyncGenerator<VendorEvent> {
  const lines = new LineSplitter(maxBytes);
  let name: string | null = null;
  let data: string[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    for (const line of lines.push(chunk)) {
      if (framing === 'ndjson') {
        if (line.trim() !== '') yield { event: null, data: line };
        continue;
      }
      if (line === '') {
        // A blank line ends the event; one without data is no event (the standard resets and waits).
        if (data.length > 0) yield { event: name, data: data.join('\n') };
        name = null;
        data = [];
        size = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        // An event of many data lines is bounded as a whole, as one long line is.
        size += value.length + 1;
        if (size > maxBytes) throw tooLarge(maxBytes);
        data.push(value);
      } else if (field === 'event') name = value;
    }
  }
  // NDJSON's last line may lack its line end.
  const rest = lines.rest();
  if (framing === 'ndjson' && rest.trim() !== '') yield { event: null, data: rest };
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('bad_response', `an event of the upstream stream is larger than ${maxBytes} bytes`, { upstream: { phase: 'unknown' } });
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
    for (let i = start; i < chunk.length; i++) {
      const b = chunk[i];
      if (b !== LF && b !== CR) continue;
      out.push(this.take(chunk.subarray(start, i)));
      if (b === CR) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === LF) i++;
        } else this.skipLf = true;
      }
      start = i + 1;
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
    this.pending.push(piece);
  }

  private take(last: Buffer): string {
    if (this.pending.length === 0) return last.toString('utf8');
    this.hold(last);
    const line = Buffer.concat(this.pending, this.pendingBytes).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    return line;
  }
}
