import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import { inlineMedia } from './inline-media.js';
import { groupDigits, parseSize, sizeWords } from './sizes.js';

/**
 * The `media` keyword of the gateway's JSON Schemas: a bound on the DECODED size of a media string
 * (a video, an audio clip, any file) given inline as a `data:<type>;base64,…` URI or bare base64,
 * so docs/spec/interface.md section 8's "omni-fast-v2v reference video: up to 15MB" is counted in the bytes
 * the vendor gets, not in characters of base64 (4 for every 3 bytes). The size is counted from the
 * text's length and padding, exactly, without decoding it; the whole text is checked to be base64
 * first, since a stray character (a line break of MIME base64) would be counted as data. An http(s)
 * URL passes unread: the gateway never fetches a URL a client names (the vendor does, and checks
 * its size). Images whose pixels matter have the `image` keyword (image-keyword.ts).
 */

/** The keyword's name in a schema. */
export const MEDIA_KEYWORD = 'media';

/** The value of the `media` keyword as a schema writes it. */
export interface MediaRule {
  /** The decoded size at most: bytes, or `15mb` as other config sizes (binary: 15 × 1,048,576). */
  readonly max_bytes: number | string;
}

/** What ajv checks a `media` keyword's value against when a schema is compiled. */
const RULE_SCHEMA = {
  type: 'object',
  // Unknown fields are refused by compileMediaRule, which can name them (ajv's words cannot).
  required: ['max_bytes'],
  properties: {
    max_bytes: {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', pattern: '^[0-9]+(b|kb|mb|gb)$' },
      ],
    },
  },
};

/** A compiled keyword as ajv calls it: the data in, its errors left on the function. */
type DataCheck = ((data: unknown) => boolean) & { errors?: Partial<ErrorObject>[] };

/** Registers the `media` keyword on an ajv of the project (schema/ajv.ts). */
export function addMediaKeyword(ajv: Ajv2020): void {
  ajv.addKeyword({
    keyword: MEDIA_KEYWORD,
    schemaType: 'object',
    metaSchema: RULE_SCHEMA,
    errors: true,
    compile(schema: MediaRule) {
      const maxBytes = compileMediaRule(schema);
      const validate: DataCheck = (data: unknown) => {
        // Like every type-specific keyword, other types are the `type` keyword's business.
        if (typeof data !== 'string') return true;
        const error = mediaProblem(maxBytes, data);
        if (!error) return true;
        validate.errors = [error];
        return false;
      };
      return validate;
    },
  });
}

/** The rule in words, for the catalogue: "at most 15 MB decoded (15,728,640 bytes)". */
export function describeMediaRule(schema: MediaRule): string {
  const maxBytes = compileMediaRule(schema);
  // The exact count beside the rounded one: "MB" is binary here (sizes.ts), which a reader may not assume.
  return maxBytes < 1024 ? `at most ${maxBytes} bytes decoded` : `at most ${sizeWords(maxBytes)} decoded (${groupDigits(maxBytes)} bytes)`;
}

/** The bound in bytes; throws on a field the keyword does not take. */
function compileMediaRule(schema: MediaRule): number {
  const unknown = Object.keys(schema).filter((k) => !(k in RULE_SCHEMA.properties));
  if (unknown.length > 0) throw new Error(`${MEDIA_KEYWORD}: unknown field ${unknown.join(', ')} (it takes ${Object.keys(RULE_SCHEMA.properties).join(', ')})`);
  return parseSize(schema.max_bytes);
}

/** The ajv error for `value`, or null when it passes (a URL always does). */
function mediaProblem(maxBytes: number, value: string): Partial<ErrorObject> | null {
  const media = inlineMedia(value, 'whole');
  if (media.kind === 'url') return null;
  if (media.kind === 'invalid') {
    return {
      keyword: MEDIA_KEYWORD,
      message: `must be an http(s) URL, a data:<type>;base64,… URI or bare base64; this ${media.why}`,
      params: { rule: 'data' },
    };
  }
  if (media.size <= maxBytes) return null;
  return {
    keyword: MEDIA_KEYWORD,
    message: `decodes to ${groupDigits(media.size)} bytes; at most ${groupDigits(maxBytes)} bytes${maxBytes >= 1024 ? ` (${sizeWords(maxBytes)})` : ''} are allowed`,
    params: { rule: 'max_bytes', bytes: media.size, limit: maxBytes },
  };
}
