/**
 * Validators of an OpenAPI document's schemas by the gateway's own ajv (draft 2020-12, strict): the
 * document is added whole under an id, so `#/components/...` references resolve as a client's would.
 * For the tests of the document (test/docs/openapi*.test.ts).
 *
 *   const schemas = documentSchemas(openApiDocument(snapshot));
 *   const validate = schemas.answer('/v1/videos/{task_id}', 'get', '200');
 */
import { basename } from 'node:path';
import type { ValidateFunction } from 'ajv';
import type { CompiledRoute } from '../../src/config/snapshot.js';
import type { HttpMethod, OpenApiDocument, Operation } from '../../src/openapi/openapi-types.js';
import { createAjv } from '../../src/schema/ajv.js';

/** Compiles schemas of the document by where they are in it. */
export interface DocumentSchemas {
  /** `components/schemas/<name>`. */
  component(name: string): ValidateFunction;
  /** The JSON body of `components/responses/<name>`. */
  response(name: string): ValidateFunction;
  /** The request body of an operation, of one media type. */
  body(path: string, method: string, type: string): ValidateFunction;
  /** The answer of an operation with `status`, of one media type (default JSON). */
  answer(path: string, method: string, status: string, type?: string): ValidateFunction;
}

export function documentSchemas(doc: OpenApiDocument): DocumentSchemas {
  const ajv = createAjv({ allErrors: true });
  // Document members, not keywords: strict ajv must not refuse them, and never validates with them.
  for (const k of ['components', 'paths']) ajv.addKeyword(k);
  const id = 'https://openapi.test/openapi.json';
  ajv.addSchema({ $id: id, components: doc.components, paths: doc.paths });
  const pointer = (...parts: string[]) => parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
  const at = (...parts: string[]) => ajv.compile({ $ref: `${id}#/${pointer(...parts)}` });
  return {
    component: (name) => at('components', 'schemas', name),
    response: (name) => at('components', 'responses', name, 'content', 'application/json', 'schema'),
    body: (path, method, type) => at('paths', path, method, 'requestBody', 'content', type, 'schema'),
    answer: (path, method, status, type = 'application/json') => at('paths', path, method, 'responses', status, 'content', type, 'schema'),
  };
}

/** The operation of a route in the document: on the path of its template's shape (parameter names may differ), with its id. */
export function operationOfRoute(doc: OpenApiDocument, r: CompiledRoute): { path: string; method: HttpMethod; op: Operation } | null {
  const shape = (p: string) => p.replace(/\{[^{}]*\}/g, '{}');
  const path = Object.keys(doc.paths).find((p) => shape(p) === shape(r.path));
  const method = r.method.toLowerCase() as HttpMethod;
  const op = path ? doc.paths[path]?.[method] : undefined;
  return path && op?.['x-route-ids'].includes(r.id) ? { path, method, op } : null;
}

/**
 * A validator of a route's JSON answers as the document states them: the operation's answer with
 * `status`; on a route that always streams, of each frame's data (its declared answer's component).
 */
export function answerValidator(doc: OpenApiDocument, schemas: DocumentSchemas, r: CompiledRoute, status = '200'): ValidateFunction {
  if (r.kind === 'sync' && r.stream !== null && r.stream.askedBy === null) {
    if (!r.response) throw new Error(`route ${r.id} declares no answer schema`);
    return schemas.component(basename(r.response.schemaFile).replace(/\.json$/, ''));
  }
  const found = operationOfRoute(doc, r);
  if (!found) throw new Error(`route ${r.id} is not in the document`);
  return schemas.answer(found.path, found.method, status);
}
