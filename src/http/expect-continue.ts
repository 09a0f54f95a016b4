import type { IncomingMessage, ServerResponse } from 'node:http';

/** A client that waits for `100 Continue` before it sends its body. */
export function expectsContinue(req: IncomingMessage): boolean {
  // The test Node itself uses to send such a request to 'checkContinue'.
  return /(?:^|\W)100-continue(?:$|\W)/i.test(String(req.headers.expect ?? ''));
}

/** Tells a waiting client to send its body (once). */
export function sendContinue(req: IncomingMessage, res: ServerResponse, seen: { continued: boolean }): void {
  if (seen.continued || !expectsContinue(req)) return;
  seen.continued = true;
  res.writeContinue();
}
