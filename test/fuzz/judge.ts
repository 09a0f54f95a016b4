/**
 * What the fuzzer counts as a finding: a 5xx (other than the documented 503 `server_busy` of
 * memory admission), an error body that is not JSON, an error of the wrong shape or status for its
 * catalogue code, an answer that never came (a hang), or no answer to a request that was sent
 * whole and well framed. A crash is found by the harness (the process is gone).
 */
import { catalogue, isErrorCode } from '../../src/errors/catalogue.js';
import type { FuzzRequest } from './hostile-requests.js';
import type { Exchange } from './wire.js';

export type FindingKind = 'crash' | '5xx' | 'non-json' | 'shape' | 'hang' | 'no-answer';

/** The finding an exchange is, or null when the answer is a fair one. */
export function judge(req: FuzzRequest, ex: Exchange): FindingKind | null {
  if (ex.timedOut) return 'hang';
  // Closed before the request was all written (a refusal that did not wait), or framing that
  // allows no answer: fair. A whole, well-framed request must get one.
  if (ex.status === 0) return !ex.sent || req.mayClose ? null : 'no-answer';
  if (ex.status < 200 || (ex.status >= 300 && ex.status < 400)) return 'shape';
  if (ex.status < 300) return null;
  let body: unknown;
  try {
    body = JSON.parse(ex.body);
  } catch {
    return ex.status >= 500 ? '5xx' : 'non-json';
  }
  const code = errorCode(body);
  if (ex.status >= 500 && code !== 'server_busy') return '5xx';
  if (code === null || !isErrorCode(code) || catalogue[code].status !== ex.status) return 'shape';
  return null;
}

/** The code of a shape-A or shape-B error body whose fields are exactly those of its shape; null otherwise. */
function errorCode(body: unknown): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const keys = Object.keys(body).sort().join(',');
  if (keys === 'error') {
    const e = (body as { error: Record<string, unknown> }).error;
    const ok =
      e !== null &&
      typeof e === 'object' &&
      Object.keys(e).sort().join(',') === 'code,message,param,type' &&
      e.type === 'svc_api_error' &&
      typeof e.message === 'string' &&
      e.message !== '' &&
      typeof e.param === 'string';
    return ok && isErrorCode(e.code) && catalogue[e.code].shape === 'A' ? e.code : null;
  }
  if (keys === 'code,data,message') {
    const b = body as { code: unknown; message: unknown; data: unknown };
    return b.data === null && typeof b.message === 'string' && isErrorCode(b.code) && catalogue[b.code].shape === 'B' ? b.code : null;
  }
  return null;
}
