import type { ServerResponse } from 'node:http';

/**
 * The answer of a route with `stream: sse` (docs/routes-yaml.md, "routes.yaml reference"): Server-Sent Events
 * as the streaming APIs these routes stand in for send them, and as their official clients read
 * them. The vendors behind such routes answer whole, so the gateway sends the mapped answer as one
 * frame once it is complete: every failure comes before the first byte and is the route's usual
 * JSON error with its status (error-boundary.ts), which the clients read as they do for the JSON
 * route. Nothing is left to fail once the first byte is written, so no error frame is needed.
 */

/** The event stream's media type, with no parameters (as those APIs send it). */
export const SSE_CONTENT_TYPE = 'text/event-stream';

/**
 * One event: `data: <json>` and the blank line that ends it, lines ended by CRLF (a line end the
 * SSE format allows, and the one those APIs use; their clients split on it as on LF). JSON.stringify
 * escapes every line break inside strings, so the data is a single line: no second `data:` line.
 */
export function sseFrame(value: unknown): string {
  return `data: ${JSON.stringify(value)}\r\n\r\n`;
}

/**
 * Writes a complete answer as an event stream of one frame. No length is declared (Node sends it
 * chunked), as for a stream: the end of the answer ends the stream; there is no `[DONE]` event.
 */
export function sendSse(res: ServerResponse, answer: unknown, headers: Readonly<Record<string, string>>): void {
  res.writeHead(200, { ...headers, 'content-type': SSE_CONTENT_TYPE });
  res.end(sseFrame(answer));
}
