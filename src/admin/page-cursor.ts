/**
 * The cursor of a paged admin list (tasks, the request log, the audit log): the last row's (time,
 * id) as base64url JSON. Opaque to clients, and a position rather than a row, so a page goes on even
 * when that row was deleted meanwhile.
 */
import { GatewayError } from '../errors/gateway-error.js';

/** The cursor after a row at `at` (Unix ms) with `id`. */
export function writeCursor(at: number, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/** The position a `before` cursor names; null when none was given; invalid_request naming `before` when it is not one of ours. */
export function readCursor(raw: string | null, maxId: number): { at: number; id: string } | null {
  if (raw === null || raw === '') return null;
  const bad = () => new GatewayError('invalid_request', 'before must be the `next` of a previous page', { param: 'before' });
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(raw)) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 2 || !Number.isSafeInteger(v[0]) || v[0] < 0 || typeof v[1] !== 'string' || v[1].length > maxId) throw bad();
  return { at: v[0] as number, id: v[1] };
}
