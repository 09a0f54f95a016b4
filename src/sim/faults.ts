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
 */
export type Fault =
  | { kind: 'status'; status: number; waitS?: number }
  | { kind: 'proxy'; status: number }
  | { kind: 'slow-headers'; ms: number }
  | { kind: 'slow-body'; ms: number }
  | { kind: 'reset' }
  | { kind: 'malformed-json' }
  | { kind: 'hang' };

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
  }
}
