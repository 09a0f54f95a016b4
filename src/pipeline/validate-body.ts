import type { ValidateFunction } from 'ajv';
import { GatewayError } from '../errors/gateway-error.js';
import { describeError, dottedPath, usefulErrors } from '../schema/describe-error.js';

/** Checks a body against its route's JSON Schema; the first problem becomes invalid_request naming the field. */
export function validateBody(validate: ValidateFunction, body: unknown): void {
  if (validate(body)) return;
  const errors = usefulErrors(validate.errors ?? []);
  const first = errors[0] ?? validate.errors?.[0];
  if (!first) throw new GatewayError('invalid_request', 'the request body is invalid');
  const problem = describeError(first, 'body');
  throw new GatewayError('invalid_request', problem.message, { param: dottedPath(problem.path) });
}
