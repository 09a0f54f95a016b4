import type { Signer } from './signer.js';

/** `auth: {type: none}`: the vendor takes requests unsigned (a private network, a test double). */
export const noneSigner: Signer<{ type: 'none' }, null> = {
  type: 'none',
  schema: { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'none' } } },
  compile: () => ({ spec: null, secrets: [] }),
  sign() {
    // nothing to add
  },
};
