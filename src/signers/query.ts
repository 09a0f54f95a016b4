import { fill, secretsIn, TEMPLATE, type Signer } from './signer.js';

/** `auth: {type: query, name, value}`: one query parameter, its value a `{secret}` template. */
export const querySigner: Signer<{ type: 'query'; name: string; value: string }, { name: string; value: string }> = {
  type: 'query',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'name', 'value'],
    description: 'One query parameter whose value is a template: `{name}` is replaced by the channel secret of that name.',
    properties: { type: { const: 'query' }, name: { type: 'string', minLength: 1 }, value: TEMPLATE },
  },
  compile: (raw) => ({ spec: { name: raw.name, value: raw.value }, secrets: secretsIn(raw.value) }),
  sign(spec, req, ctx) {
    req.query[spec.name] = fill(spec.value, ctx);
  },
};
