import { type ConfigIssue, errorsSince } from './issues.js';
import { compileMappingAt as mapping } from './compile-mapping.js';
import { modelSet } from './compile-route-draft.js';
import type { Mapping } from '../mapping/mapping.js';
import { parseSize } from '../schema/sizes.js';
import type { CompiledOperation, EventFraming } from './snapshot.js';
import type { YamlSource } from './yaml-source.js';

/**
 * One operation of a profile (channels.yaml `profiles.*.operations.*`, and a task protocol's
 * lookups), compiled: its request, response and error mappings, how its answer is read (JSON,
 * bytes, or a stream of events: docs/channels-yaml.md "Streamed answers"), the vendor models it
 * serves, and an awaited task's rules.
 */

/** An operation as channels.schema.json admits it. */
export interface RawOperation {
  request: { method: string; path: string; query?: string; headers?: string; body?: string; encoding?: 'json' | 'multipart' };
  response: {
    body: string;
    max_bytes?: number | string;
    type?: 'json' | 'bytes' | 'stream';
    events?: EventFraming;
    idle_ms?: number;
    max_ms?: number;
  };
  error?: string;
  models?: string[];
  await?: { answer: string; interval_ms?: number; timeout_ms?: number; result_type?: string };
}

const DEFAULT_RESPONSE_BYTES = 64 * 1024 * 1024;
/** The longest a streamed answer may last unless its operation says (`response.max_ms`). */
const DEFAULT_STREAM_MS = 600_000;
/** A synchronous route over an asynchronous vendor: how often to look, and for how long. */
const DEFAULT_AWAIT = { intervalMs: 1_000, timeoutMs: 120_000, resultType: 'image' };

/** Compiles one operation's mappings; null when one of them failed (the failure is an issue). */
export function compileOperation(src: YamlSource, op: RawOperation, at: (string | number)[], issues: ConfigIssue[]): CompiledOperation | null {
  const m = (expr: string | undefined, ...rest: string[]): Mapping | null => (expr === undefined ? null : mapping(src, expr, [...at, ...rest], issues));
  const before = issues.length;
  // Compiled in this order, so their issues come in it.
  const path = m(op.request.path, 'request', 'path');
  const query = m(op.request.query, 'request', 'query');
  const headers = m(op.request.headers, 'request', 'headers');
  const body = m(op.request.body, 'request', 'body');
  const answerBody = m(op.response.body, 'response', 'body');
  const error = m(op.error, 'error');
  const awaited = op.await ? m(op.await.answer, 'await', 'answer') : null;
  const maxBytes = op.response.max_bytes === undefined ? DEFAULT_RESPONSE_BYTES : parseSize(op.response.max_bytes);
  const type = op.response.type ?? 'json';
  const r = op.response;
  if (type !== 'stream') {
    for (const key of ['events', 'idle_ms', 'max_ms'] as const)
      if (r[key] !== undefined) issues.push(src.issue([...at, 'response', key], `${key} is for a streamed answer (response.type: stream)`));
  }
  if (type === 'stream' && op.await) issues.push(src.issue([...at, 'await'], 'a streamed answer cannot be awaited as a task'));
  if (errorsSince(issues, before) || !path || !answerBody || (op.await && !awaited)) return null;
  return {
    request: { method: op.request.method, path, query, headers, body, encoding: op.request.encoding ?? 'json' },
    response: {
      body: answerBody,
      maxBytes,
      type,
      stream: type === 'stream' ? Object.freeze({ framing: r.events ?? 'sse', idleMs: r.idle_ms ?? null, maxMs: r.max_ms ?? DEFAULT_STREAM_MS }) : null,
    },
    error,
    models: op.models ? modelSet(op.models) : null,
    await:
      op.await && awaited
        ? {
            answer: awaited,
            intervalMs: op.await.interval_ms ?? DEFAULT_AWAIT.intervalMs,
            timeoutMs: op.await.timeout_ms ?? DEFAULT_AWAIT.timeoutMs,
            resultType: op.await.result_type ?? DEFAULT_AWAIT.resultType,
          }
        : null,
  };
}
