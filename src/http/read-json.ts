import type { IncomingMessage } from 'node:http';
import type { CompiledBody } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Admission } from './body-budget.js';
import { parseJsonBytes } from '../json/from-bytes.js';
import { readBody } from './read-body.js';
import { parseMultipart } from './read-multipart.js';
import { jsonErrorPosition } from '../schema/json-syntax.js';

/**
 * Reads, size-checks and parses a JSON body (or a multipart one where the route accepts it),
 * refusing wrong media types and excessive nesting; the bytes read are held within `admission`.
 */
export function readJsonBody(req: IncomingMessage, rules: CompiledBody, admission?: Admission): Promise<unknown>;
/** …and hands the body to `then` in the same step (a caller's own then is a promise more: issue 41). */
export function readJsonBody<T>(req: IncomingMessage, rules: CompiledBody, admission: Admission | undefined, then: (body: unknown) => T): Promise<Awaited<T>>;
export function readJsonBody(req: IncomingMessage, rules: CompiledBody, admission?: Admission, then?: (body: unknown) => unknown): Promise<unknown> {
  // One promise for the read and its parse, no async frame around them: each await is a few
  // hundred bytes of heap (issue 41). A refusal before the read is a rejection all the same.
  try {
    const type = admittedType(req, rules);
    return readBody(req, rules.maxBytes, admission).then((raw) => {
      const body = parseBody(raw, type, req, rules);
      if (!then) return body;
      return body instanceof Promise ? body.then(then) : then(body);
    });
  } catch (err) {
    return Promise.reject(err);
  }
}

/** The body's media type, when the route takes it and it comes uncompressed; else unsupported_media_type. */
function admittedType(req: IncomingMessage, rules: CompiledBody): string {
  const header = req.headers['content-type'] ?? '';
  const semicolon = header.indexOf(';');
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  if (!rules.contentTypes.includes(type)) {
    throw new GatewayError(
      'unsupported_media_type',
      type === ''
        ? `send the body with Content-Type: ${rules.contentTypes.join(' or ')}`
        : `Content-Type ${type.slice(0, 100)} is not accepted; use ${rules.contentTypes.join(' or ')}`,
    );
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') {
    throw new GatewayError('unsupported_media_type', `Content-Encoding ${encoding.slice(0, 50)} is not accepted; send the body uncompressed`);
  }
  return type;
}

/** The body read: parsed as JSON, or as a multipart form where the route takes one, within the route's nesting. */
function parseBody(raw: Buffer, type: string, req: IncomingMessage, rules: CompiledBody): unknown {
  if (type === 'multipart/form-data') {
    return parseMultipart(raw, req.headers['content-type'] ?? '', rules.maxFiles).then((form) => {
      // A field holding JSON (metadata) nests like a JSON body does, under the same limit.
      checkDepth(form, rules.maxDepth);
      return form;
    });
  }
  if (raw.length === 0) throw new GatewayError('invalid_request', 'the request body is empty; a JSON object is expected');
  let body: unknown;
  try {
    body = parseJsonBytes(raw);
  } catch (err) {
    throw new GatewayError('invalid_request', `the request body is not valid JSON${jsonErrorPosition(raw.toString('utf8'), err)}`);
  }
  checkDepth(body, rules.maxDepth);
  return body;
}

/** A body nested deeper than its route allows is the client's `invalid_request`. */
export function checkDepth(body: unknown, maxDepth: number): void {
  if (exceedsDepth(body, maxDepth)) throw new GatewayError('invalid_request', `the request body is nested deeper than ${maxDepth} levels`);
}

/** Iterative, so hostile nesting cannot overflow the stack while it is measured. */
export function exceedsDepth(value: unknown, maxDepth: number): boolean {
  // Two stacks side by side (a value, its depth) and a walk of own keys: no pair or values array per object (issue 41).
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop() as number;
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth) return true;
    if (Array.isArray(v)) {
      for (const child of v) {
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const child = (v as Record<string, unknown>)[k];
      if (child !== null && typeof child === 'object') {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
