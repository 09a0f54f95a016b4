import { encodeJson } from '../json/to-bytes.js';
import type { ServerResponse } from 'node:http';

/**
 * Server-Sent Events as the streaming APIs our routes stand in for send them, and as their official
 * clients read them (docs/routes-yaml.md, "Streams"). A vendor that streams is relayed event by event
 * (relay-stream.ts); one whose operation answers whole is sent as one frame once its answer is
 * complete (`sendSse`): every failure then comes before the first byte and is the route's usual
 * JSON error with its status (error-boundary.ts).
 */

/**
 * One event as bytes: as `sseFrame` gives it, byte for byte, but an event carrying a long string (a
 * base64 image) is one Buffer into which the string was written straight from the value
 * (json/to-bytes.ts): no JSON text of several megabytes made first.
 */
export function sseFrameBytes(value: unknown, event: string | null = null): string | Buffer {
  const json = encodeJson(value);
  if (typeof json === 'string') return sseFrame(value, event, json);
  const head = event === null ? 'data: ' : `event: ${event.replace(/[\r\n]/g, ' ')}\r\ndata: `;
  return Buffer.concat([Buffer.from(head), json, FRAME_END]);
}

const FRAME_END = Buffer.from('\r\n\r\n');

/** The event stream's media type, with no parameters (as those APIs send it). */
export const SSE_CONTENT_TYPE = 'text/event-stream';

/**
 * One event: `data: <json>` and the blank line that ends it, lines ended by CRLF (a line end the
 * SSE format allows, and the one those APIs use; their clients split on it as on LF). JSON.stringify
 * escapes every line break inside strings, so the data is a single line: no second `data:` line.
 */
export function sseFrame(value: unknown, event: string | null = null, json = JSON.stringify(value)): string {
  // An event name is one line: a line break in it would start a field of the client's choosing.
  return event === null ? `data: ${json}\r\n\r\n` : `event: ${event.replace(/[\r\n]/g, ' ')}\r\ndata: ${json}\r\n\r\n`;
}

/**
 * Writes a complete answer as an event stream of one frame. No length is declared (Node sends it
 * chunked), as for a stream: the end of the answer ends the stream; there is no `[DONE]` event.
 */
export function sendSse(res: ServerResponse, answer: unknown, headers: Readonly<Record<string, string>>): void {
  res.writeHead(200, { ...headers, 'content-type': SSE_CONTENT_TYPE });
  res.end(sseFrame(answer));
}
