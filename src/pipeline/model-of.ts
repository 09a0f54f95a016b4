import type { CompiledRoute } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';

/** Reads the public model name from where the route says it is: a path parameter, a body field, or the route's fixed model. */
export function modelOf(route: CompiledRoute, params: Readonly<Record<string, string>>, body: unknown): string {
  const where = route.model!;
  if (where.from === 'value') return where.name;
  let value: unknown;
  if (where.from === 'path') {
    value = params[where.name];
  } else {
    value = body;
    for (const seg of where.pointer) {
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[seg] : undefined;
    }
  }
  const param = where.from === 'path' ? '' : where.pointer.join('.');
  if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_request', 'model is required', { param: param || 'model' });
  return value;
}
