import { Ajv2020 } from 'ajv/dist/2020.js';
import { createRequire } from 'node:module';
import type { Ajv } from 'ajv';
import { addImageKeyword } from './image-keyword.js';
import { addMediaKeyword } from './media-keyword.js';

// ajv-formats is CommonJS with a default export that NodeNext typing cannot see; require() it.
const addFormats = createRequire(import.meta.url)('ajv-formats') as (ajv: Ajv) => Ajv;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict standard base64 (RFC 4648 section 4, padded): what upstreams decode without guessing. */
export function isBase64(s: string): boolean {
  return s.length % 4 === 0 && BASE64.test(s);
}

/** A new ajv for JSON Schema draft 2020-12 with the formats the project's schemas use. */
export function createAjv(options: { allErrors: boolean; verbose?: boolean }): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: options.allErrors,
    // Errors carry the failing sub-schema, so its `description` can be the message (family limits).
    verbose: options.verbose ?? false,
    strict: true,
    // `required` inside if/contains/prefixItems names properties declared elsewhere: that is fine.
    strictRequired: false,
    // prefixItems without items is how "the first item must be X" is said; not a mistake here.
    strictTuples: false,
    allowUnionTypes: true,
    // Bodies are parsed JSON that is ours to keep; coercion or defaults would hide client errors.
    coerceTypes: false,
    useDefaults: false,
  });
  addFormats(ajv as unknown as Ajv);
  ajv.addFormat('base64', { type: 'string', validate: isBase64 });
  // Editors' hints in schema files; harmless to validation.
  ajv.addKeyword('x-note');
  // Section 8's image bounds as data, in any schema the config gives (docs/routes-yaml.md, "Families, modes and limits").
  addImageKeyword(ajv);
  // Section 8's byte sizes of other media (a reference video), counted decoded.
  addMediaKeyword(ajv);
  return ajv;
}
