import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from './context.js';

/** Where a route reads a value of the request: a path or query parameter, or a JSON pointer into the body. */
export interface ValueSource {
  readonly from: 'path' | 'query' | 'body';
  readonly name: string;
  /** `body`: the JSON pointer's segments. */
  readonly pointer?: readonly string[];
}

/** The value at `where` (undefined when the request has none there). */
export function valueAt(ctx: Pick<RequestContext, 'params' | 'query'>, where: ValueSource, body: unknown): unknown {
  if (where.from === 'path') return ctx.params[where.name];
  if (where.from === 'query') return ctx.query[where.name];
  let value = body;
  for (const seg of where.pointer ?? []) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[seg] : undefined;
  return value;
}

/** The non-empty string at `where`, or `invalid_request` naming it as required. */
export function requiredString(ctx: Pick<RequestContext, 'params' | 'query'>, where: ValueSource, body: unknown): string {
  const value = valueAt(ctx, where, body);
  if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_request', `${where.name} is required`, { param: where.name });
  return value;
}
