import { randomFillSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { TraceContext } from '../upstream/trace-headers.js';

/**
 * The ids of one request (docs/admin-and-metrics.md, "Request ids, traces and the access log"): the request id the
 * client sees, a reference of our own that no other request shares, and the trace it belongs to.
 */
export interface RequestIds {
  /** The client's `x-request-id` when it is a safe one, else one we made: echoed, logged, sent upstream. */
  readonly requestId: string;
  /**
   * Unique to this request whatever the client sent (clients resend, or reuse, their ids): the
   * reference of its quota hold and ledger rows. The request id itself when we made that.
   */
  readonly ref: string;
  readonly trace: TraceContext;
}

/** Longest client request id kept; longer ones are replaced. */
export const MAX_REQUEST_ID = 128;
/** What a kept client request id may be made of: nothing that could break a header, a log line or a label. */
const SAFE_ID = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_REQUEST_ID}}$`);
/** Longest `tracestate` passed on: W3C asks propagators to keep at least 512 characters; a longer one is dropped whole, not cut mid-member. */
const MAX_TRACESTATE = 512;
/** A tracestate must be printable ASCII (W3C's own charset is narrower); anything else is dropped. */
const SAFE_TRACESTATE = /^[\x20-\x7e]*$/;
/** `version-traceid-parentid-flags`, lower-case hex; a later version may append fields after a `-`. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** A caller's trace as W3C defines it, or null when the header is absent or invalid (then a new trace starts). */
export function parseTraceparent(header: string | string[] | undefined): { traceId: string; parentId: string; flags: string } | null {
  // Two traceparent headers are one invalid header: which trace would we continue?
  if (typeof header !== 'string') return null;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return null;
  const [, version, traceId, parentId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  // Version ff is forbidden; version 00 has exactly four fields. A later version is read as 00 (the spec's rule).
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return null;
  return { traceId, parentId, flags };
}

/**
 * Random bytes for trace and span ids, drawn from a pool filled 4 KB at a time: a `randomBytes`
 * call per id (two or three per request) was 4 % of the gateway's CPU (bench/overhead, issue
 * #14). The bytes are the same CSPRNG's; node's randomUUID pools its own the same way.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

/**
 * A new UUID of version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Our request
 * ids and references are these rather than random ones (version 4) because they are keys of the
 * store's indexes (the request log's, the ledger's and the holds' `ref`): ids that grow with time
 * are appended at the end of each B-tree, where random ones dirty a page of it per row. Measured on
 * the request log's table: about 22 µs of CPU per record instead of 69 (bench/RESULTS.md).
 */
export function newRequestUuid(now = Date.now()): string {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 10;
  return formatUuid7(Math.max(0, Math.floor(now)), pool, at);
}

const HEX = '0123456789abcdef';

/** Hex digit `k` of the bytes at `at`: the high half of a byte first. */
function nibble(bytes: Buffer, at: number, k: number): number {
  const b = bytes[at + (k >> 1)] ?? 0;
  return k & 1 ? b & 15 : b >> 4;
}
/** Where a UUID is written before it becomes its string: one string a UUID, not a dozen pieces joined (issue 41). */
const uuidBytes = Buffer.alloc(36);

/**
 * (Exported for its test.) The version 7 UUID of `ms` (its low 48 bits) and the 10 random bytes at
 * `at` in `bytes`: the time in its first 12 hex digits, then `7`, random digits 0-2, the variant
 * (8 to b, from digit 4), random digits 5-7 and 8-19, as lower-case hex of the random bytes.
 */
export function formatUuid7(ms: number, bytes: Buffer, at: number): string {
  const out = uuidBytes;
  let t = ms % 2 ** 48;
  // The time's 12 digits, last first, around the dash after the 8th.
  for (let i = 11; i >= 0; i--) {
    out[i < 8 ? i : i + 1] = HEX.charCodeAt(t % 16);
    t = Math.floor(t / 16);
  }
  out[8] = 0x2d;
  out[13] = 0x2d;
  out[14] = 0x37; // '7'
  for (let k = 0; k < 3; k++) out[15 + k] = HEX.charCodeAt(nibble(bytes, at, k));
  out[18] = 0x2d;
  out[19] = HEX.charCodeAt(0x8 | (nibble(bytes, at, 4) & 0x3));
  for (let k = 5; k < 8; k++) out[15 + k] = HEX.charCodeAt(nibble(bytes, at, k));
  out[23] = 0x2d;
  for (let k = 8; k < 20; k++) out[16 + k] = HEX.charCodeAt(nibble(bytes, at, k));
  return out.toString('latin1', 0, 36);
}

/** A new span id: 8 random bytes in hex (never all zero, which W3C reserves for "none"). */
export function newSpanId(): string {
  for (;;) {
    const id = randomHex(8);
    if (!/^0+$/.test(id)) return id;
  }
}

/** A new trace id: 16 random bytes in hex. */
function newTraceId(): string {
  for (;;) {
    const id = randomHex(16);
    if (!/^0+$/.test(id)) return id;
  }
}

/**
 * The ids of a request from its headers. A client's `x-request-id` is kept when it is 1 to 128
 * characters of `A-Z a-z 0-9 . _ : -`; anything else is replaced by a new UUID (version 7: ordered by time), so no hostile byte
 * is echoed into a header or a log. A valid `traceparent` is continued (its trace id and flags, a new
 * span of ours); an invalid or missing one starts a new trace, not sampled (flags 00): we record no
 * spans ourselves, so we do not claim to.
 */
export function requestIds(headers: IncomingHttpHeaders): RequestIds {
  const given = headers['x-request-id'];
  const kept = typeof given === 'string' && SAFE_ID.test(given) ? given : null;
  const requestId = kept ?? newRequestUuid();
  const ref = kept === null ? requestId : newRequestUuid();
  const parent = parseTraceparent(headers.traceparent);
  const state = headers.tracestate;
  const trace: TraceContext = parent
    ? {
        traceId: parent.traceId,
        spanId: newSpanId(),
        flags: parent.flags,
        state: typeof state === 'string' && state.length <= MAX_TRACESTATE && SAFE_TRACESTATE.test(state) && state.trim() !== '' ? state.trim() : null,
      }
    : { traceId: newTraceId(), spanId: newSpanId(), flags: '00', state: null };
  return { requestId, ref, trace };
}
