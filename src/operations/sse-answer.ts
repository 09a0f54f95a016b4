import type { ServerResponse } from 'node:http';

/**
 * Server-Sent Events as the streaming APIs our routes stand in for send them, and as their official
 * clients read them (docs/routes-yaml.md, "Streams"). A vendor that streams is relayed event by event
 * (relay-stream.ts); one whose operation answers whole is sent as one frame once its answer is
 * complete (`sendSse`): every failure then comes before the first byte and is the route's usual
 * JSON error with its status (error-boundary.ts).
 */

/** The event stream's media type, with no parameters (as those APIs send it). */
export const SSE_CONTENT_TYPE = 'text/event-stream';

/**
 * One event: `data: <json>` and the blank line that ends it, lines ended by CRLF (a line end the
 * SSE format allows, and the one those APIs use; their clients split on it as on LF). JSON.stringify
 * escapes every line break inside strings, so the data is a single line: no second `data:` line.
 */
export function sseFrame(value: unknown, event: string | null = null): string {
  // An event name is one line: a line break in it would start a field of the client's choosing.
  return event === null ? `data: ${JSON.stringify(value)}\r\n\r\n` : `event: ${event.replace(/[\r\n]/g, ' ')}\r\ndata: ${JSON.stringify(value)}\r\n\r\n`;
}

/**
 * Writes a complete answer as an event stream of one frame. No length is declared (Node sends it
 * chunked), as for a stream: the end of the answer ends the stream; there is no `[DONE]` event.
 */
export function sendSse(res: ServerResponse, answer: unknown, headers: Readonly<Record<string, string>>): void {
  res.writeHead(200, { ...headers, 'content-type': SSE_CONTENT_TYPE });
  res.end(sseFrame(answer));
}
