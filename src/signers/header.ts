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
    req.headers[spec.name] = filledFor(spec, ctx);
  },
};

/**
 * The header's value for a channel (`cacheKey`), filled once: its secrets do not change within a
 * loaded config, and filling the template made new strings on every request (issue 41).
 */
const filled = new WeakMap<object, Map<object, string>>();
function filledFor(spec: { value: string }, ctx: Parameters<typeof fill>[1]): string {
  let bySpec = filled.get(ctx.cacheKey);
  if (!bySpec) filled.set(ctx.cacheKey, (bySpec = new Map()));
  let value = bySpec.get(spec);
  if (value === undefined) {
    value = fill(spec.value, ctx);
    bySpec.set(spec, value);
  }
  return value;
}
