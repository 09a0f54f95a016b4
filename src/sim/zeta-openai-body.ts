import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { group } from './invariants.js';

/**
 * Request bodies of the zeta-openai simulator (see zeta-openai.ts for the routes): reading JSON or
 * multipart/form-data, the field checks shared by the video and image routes, and the vendor's
 * error body. A failed check throws `Invalid`, answered as one 400 by the route handler.
 */

const MAX_UPLOAD = 50 * 1024 * 1024;
/** A multipart part named `name[key]`: one key of an object field. */
const OBJECT_KEY = /^([A-Za-z_][A-Za-z0-9_]*)\[([A-Za-z_][A-Za-z0-9_]*)\]$/;
const DEFAULTS: Record<number, [type: string, code: string | null, message: string]> = {
  400: ['invalid_request_error', null, 'Invalid request.'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'],
  404: ['invalid_request_error', null, 'Not found.'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests. Please try again in 2s.'],
};

/** The vendor's error body for a status (docs/spec/upstream-protocols.md, zeta-openai). */
export function zetaError(status: number, message?: string, param: string | null = null, code?: string | null): unknown {
  const [type, defCode, defMessage] =
    DEFAULTS[status] ??
    (status >= 500
      ? ['server_error', 'server_error', 'The server had an error while processing your request. Sorry about that!']
      : ['invalid_request_error', null, `Simulated error ${status}.`]);
  return { error: { message: message ?? defMessage, type, param, code: code === undefined ? defCode : code } };
}

/** Body fields: JSON values, or multipart text parts (a repeated part becomes an array of strings, `name[key]` parts an object). */
export type Fields = Record<string, unknown>;
/** An uploaded file part: its field name as sent, declared content type and byte count. */
export interface Upload {
  field: string;
  mimeType: string;
  size: number;
}
/** A read body; `form` tells multipart (text values) from JSON (typed values). */
export interface Body {
  fields: Fields;
  files: Upload[];
  form: boolean;
}

/** A vendor 400, thrown by the body checks and answered in one place. */
export class Invalid extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** True when the request says it carries multipart/form-data. */
export const isMultipart = (req: IncomingMessage): boolean => (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');

/** Reads a multipart body already held in memory; repeated text fields become arrays. */
function parseMultipart(req: IncomingMessage, raw: Buffer): Promise<Body> {
  return new Promise((resolve, reject) => {
    const fields: Fields = {};
    const files: Upload[] = [];
    let truncated = false;
    const bb = busboy({ headers: req.headers, limits: { fileSize: MAX_UPLOAD, fieldSize: MAX_UPLOAD } });
    // Data URIs come as text parts, so text parts get the file limit, not busboy's 1 MB.
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) truncated = true;
      // The official client sends an object as one part per key, `name[key]` (`input_reference[image_url]`).
      const sub = OBJECT_KEY.exec(name);
      const key = sub ? group(sub, 1) : name;
      const had = fields[key];
      if (sub) {
        const obj = had !== null && typeof had === 'object' && !Array.isArray(had) ? (had as Record<string, unknown>) : {};
        obj[group(sub, 2)] = value;
        // A text part of the same name as well stays beside the object, for the checks to refuse.
        fields[key] = had === undefined || had === obj ? obj : [...(Array.isArray(had) ? had : [had]), obj];
        return;
      }
      fields[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
    });
    bb.on('file', (field, stream, info) => {
      const up: Upload = { field, mimeType: info.mimeType, size: 0 };
      files.push(up);
      stream.on('data', (c: Buffer) => (up.size += c.length));
      stream.on('limit', () => (truncated = true));
    });
    bb.on('error', reject);
    bb.on('close', () => (truncated ? reject(new Error('part too large')) : resolve({ fields, files, form: true })));
    bb.end(raw);
  });
}

/** The request body as fields and uploaded files; throws Invalid when it cannot be read. */
export async function readBody(req: IncomingMessage, raw: Buffer): Promise<Body> {
  if (isMultipart(req)) {
    try {
      return await parseMultipart(req, raw);
    } catch (err) {
      throw new Invalid(`Could not parse multipart form: ${(err as Error).message}.`, null, null);
    }
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Invalid('We could not parse the JSON body of your request.', null, 'invalid_json');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Invalid('The body must be a JSON object.', null, 'invalid_type');
  return { fields: body as Fields, files: [], form: false };
}

/** A string field; undefined when absent and optional. */
export function text(fields: Fields, name: string, required: true): string;
export function text(fields: Fields, name: string, required: boolean): string | undefined;
export function text(fields: Fields, name: string, required: boolean): string | undefined {
  const v = fields[name];
  if (v === undefined || v === null) {
    if (required) throw new Invalid(`Missing required parameter: '${name}'.`, name, 'missing_required_parameter');
    return undefined;
  }
  if (typeof v !== 'string')
    throw new Invalid(`Invalid type for '${name}': expected a string, but got ${Array.isArray(v) ? 'an array' : typeof v} instead.`, name, 'invalid_type');
  if (required && v.trim() === '') throw new Invalid(`'${name}' must not be empty.`, name, 'invalid_value');
  return v;
}

/** `value` when it is one of `allowed`, else the vendor's "Supported values are" 400 on `name`. */
export function oneOf(name: string, value: string, allowed: readonly string[]): string {
  if (!allowed.includes(value))
    throw new Invalid(`Invalid value: '${value}'. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, name, 'invalid_value');
  return value;
}

/** An optional integer field in [min, max]: a JSON number, or a decimal text part of a multipart form. */
export function integer(body: Body, name: string, fallback: number, min: number, max: number): number {
  const v = body.fields[name];
  if (v === undefined || v === null) return fallback;
  // Multipart carries everything as text, so there a decimal string is the integer; JSON wants a number.
  const n = body.form && typeof v === 'string' && /^-?[0-9]+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw new Invalid(`Invalid type for '${name}': expected an integer, but got ${Array.isArray(v) ? 'an array' : typeof v} instead.`, name, 'invalid_type');
  if (n < min || n > max) {
    const range = min === max ? `exactly ${min}` : `an integer from ${min} to ${max}`;
    throw new Invalid(`Invalid value for '${name}': expected ${range}, but got ${n} instead.`, name, 'invalid_value');
  }
  return n;
}
