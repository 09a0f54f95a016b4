import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import type { CompiledBody } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import { createAjv } from '../schema/ajv.js';

/**
 * What the admin routes take from a request: their JSON bodies and their query parameters, each
 * refused as `invalid_request` naming the parameter. One place, so every admin route reads its
 * input alike.
 */

/**
 * The admin bodies' own validator, made with the first body an admin route reads: a gateway without
 * GATEWAY_ADMIN_KEY never reads one, and making it and compiling the 14 bodies at start cost
 * about 0.3 MB of heap and 40 ms of the start (issue 41).
 */
let ajv: Ajv2020 | null = null;

/**
 * An admin JSON body: a few fields, so a small limit by default (the route is only reached with the
 * admin key); a route that takes a pasted client body (the playground) names larger ones. Its
 * validator is compiled when first asked for.
 */
export function adminBody(schema: Record<string, unknown>, limits: { maxBytes?: number; maxDepth?: number } = {}): CompiledBody {
  let validate: ValidateFunction | null = null;
  return {
    maxBytes: limits.maxBytes ?? 64 * 1024,
    maxDepth: limits.maxDepth ?? 4,
    contentTypes: ['application/json'],
    maxFiles: 0,
    get validate() {
      ajv ??= createAjv({ allErrors: true });
      validate ??= ajv.compile(schema);
      return validate;
    },
    schemaFile: '(admin)',
    schema,
  };
}

/** A parameter of the admin route's path (`{token_id}`): its router matched it, so it is there. */
export function pathParam(params: Readonly<Record<string, string>>, name: string): string {
  const value = params[name];
  if (value === undefined) throw new GatewayError('internal_error', `the admin route has no path parameter ${name}`);
  return value;
}

/** A whole-number query parameter within bounds; null when it is absent. */
export function wholeParam(raw: string | null, name: string, min: number, max: number): number | null {
  if (raw === null || raw === '') return null;
  const n = /^[0-9]{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) throw new GatewayError('invalid_request', `${name} must be a whole number from ${min} to ${max}`, { param: name });
  return n;
}

/** A text query parameter (a filter) of at most `max` characters; null when absent or empty (a form's blank field filters nothing). */
export function textParam(raw: string | null, name: string, max: number): string | null {
  if (raw === null || raw === '') return null;
  if (raw.length > max) throw new GatewayError('invalid_request', `${name} must be at most ${max} characters`, { param: name });
  return raw;
}
