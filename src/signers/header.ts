import { fill, secretsIn, TEMPLATE, type Signer } from './signer.js';

/** `auth: {type: header, name, value}`: one header, its value a `{secret}` template. */
export const headerSigner: Signer<{ type: 'header'; name: string; value: string }, { name: string; value: string }> = {
  type: 'header',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'name', 'value'],
    description: 'One request header whose value is a template: `{name}` is replaced by the channel secret of that name.',
    properties: { type: { const: 'header' }, name: { type: 'string', minLength: 1 }, value: TEMPLATE },
  },
  compile: (raw) => ({ spec: { name: raw.name.toLowerCase(), value: raw.value }, secrets: secretsIn(raw.value) }),
  sign(spec, req, ctx) {
    req.headers[spec.name] = fill(spec.value, ctx);
  },
};
