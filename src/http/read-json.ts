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
export async function readJsonBody(req: IncomingMessage, rules: CompiledBody, admission?: Admission): Promise<unknown> {
  const header = req.headers['content-type'] ?? '';
  const type = (header.split(';')[0] ?? '').trim().toLowerCase();
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
  const raw = await readBody(req, rules.maxBytes, admission);
  if (type === 'multipart/form-data') {
    const form = await parseMultipart(raw, header, rules.maxFiles);
    // A field holding JSON (metadata) nests like a JSON body does, under the same limit.
    checkDepth(form, rules.maxDepth);
    return form;
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
  const stack: [unknown, number][] = [[value, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top;
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
