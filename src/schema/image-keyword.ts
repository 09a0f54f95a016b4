import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import { readImageHeader, type ImageFormat, type ImageHeader } from './image-header.js';
import { inlineImage } from './inline-image.js';
import { parseSize, sizeWords as bytes } from './sizes.js';

/**
 * The `image` keyword of the gateway's JSON Schemas: bounds on an inline image's dimensions, aspect
 * ratio, byte size and format, read from its header (image-header.ts), so a route's schema or a
 * family's limits can say docs/spec/interface.md section 8's "at least 128*128, within 1:4 to 4:1" as data.
 * It looks at strings only; an http(s) URL passes unread, since the gateway never fetches a URL a
 * client names (docs/routes-yaml.md, "Families, modes and limits").
 */

/** The keyword's name in a schema. */
export const IMAGE_KEYWORD = 'image';

/** The value of the `image` keyword as a schema writes it. */
export interface ImageRule {
  readonly min_width?: number;
  readonly min_height?: number;
  readonly max_width?: number;
  readonly max_height?: number;
  /** Width over height: a number (0.25) or a ratio ("1:4"). */
  readonly min_aspect?: number | string;
  readonly max_aspect?: number | string;
  /** The decoded image's size: bytes, or `50mb` as other config sizes. */
  readonly max_bytes?: number | string;
  /** Formats taken (`jpg` is `jpeg`); default all three whose headers are read. */
  readonly formats?: readonly string[];
}

const FORMAT_NAMES: Readonly<Record<string, ImageFormat>> = { png: 'png', jpeg: 'jpeg', jpg: 'jpeg', webp: 'webp' };
const FORMAT_LABELS: Readonly<Record<ImageFormat, string>> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP' };
const RATIO = '^[0-9]+(\\.[0-9]+)?:[0-9]+(\\.[0-9]+)?$';
const ASPECT_SCHEMA = {
  anyOf: [
    { type: 'number', exclusiveMinimum: 0 },
    { type: 'string', pattern: RATIO },
  ],
};
const PIXELS_SCHEMA = { type: 'integer', minimum: 1 };

/** What ajv checks an `image` keyword's value against when a schema is compiled. */
const RULE_SCHEMA = {
  type: 'object',
  // Unknown fields are refused by compileImageRule, which can name them (ajv's words cannot).
  minProperties: 1,
  properties: {
    min_width: PIXELS_SCHEMA,
    min_height: PIXELS_SCHEMA,
    max_width: PIXELS_SCHEMA,
    max_height: PIXELS_SCHEMA,
    min_aspect: ASPECT_SCHEMA,
    max_aspect: ASPECT_SCHEMA,
    max_bytes: {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', pattern: '^[0-9]+(b|kb|mb|gb)$' },
      ],
    },
    formats: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: Object.keys(FORMAT_NAMES) } },
  },
};

interface Aspect {
  readonly value: number;
  readonly label: string;
}

/** An ImageRule with its defaults filled in and its sizes and ratios parsed, once per schema. */
interface CompiledImageRule {
  readonly minWidth: number;
  readonly minHeight: number;
  readonly maxWidth: number;
  readonly maxHeight: number;
  readonly minAspect: Aspect | null;
  readonly maxAspect: Aspect | null;
  readonly maxBytes: number;
  readonly formats: readonly ImageFormat[];
}

/** Why an image is refused, and the figures behind it for a program reading the ajv error. */
interface ImageProblem {
  readonly message: string;
  readonly params: Record<string, unknown>;
}

/** A compiled keyword as ajv calls it: the data in, its errors left on the function. */
type DataCheck = ((data: unknown) => boolean) & { errors?: Partial<ErrorObject>[] };

/** Registers the `image` keyword on an ajv of the project (schema/ajv.ts). */
export function addImageKeyword(ajv: Ajv2020): void {
  ajv.addKeyword({
    keyword: IMAGE_KEYWORD,
    schemaType: 'object',
    metaSchema: RULE_SCHEMA,
    errors: true,
    compile(schema: ImageRule) {
      const rule = compileImageRule(schema);
      const validate: DataCheck = (data: unknown) => {
        // Like every type-specific keyword, other types are the `type` keyword's business.
        if (typeof data !== 'string') return true;
        const problem = imageProblem(rule, data);
        if (!problem) return true;
        validate.errors = [{ keyword: IMAGE_KEYWORD, message: problem.message, params: problem.params }];
        return false;
      };
      return validate;
    },
  });
}

/** The rule in words, for the catalogue: "128x128 or more, aspect 1:4 to 4:1, at most 50 MB; PNG, JPEG, WebP". */
export function describeImageRule(schema: ImageRule): string {
  const r = compileImageRule(schema);
  const parts: string[] = [];
  const min = pixels(r.minWidth, r.minHeight, 0);
  const max = pixels(r.maxWidth, r.maxHeight, Infinity);
  if (min && max) parts.push(`${min} to ${max}`);
  else if (min) parts.push(`${min} or more`);
  else if (max) parts.push(`at most ${max}`);
  const aspect = aspectBounds(r);
  if (aspect) parts.push(`aspect ${aspect}`);
  if (r.maxBytes < Infinity) parts.push(`at most ${bytes(r.maxBytes)}`);
  const formats = r.formats.map((f) => FORMAT_LABELS[f]).join(', ');
  return parts.length > 0 ? `${parts.join(', ')}; ${formats}` : formats;
}

/** Fills in defaults and parses sizes and ratios; throws on bounds that contradict each other. */
function compileImageRule(schema: ImageRule): CompiledImageRule {
  const unknown = Object.keys(schema).filter((k) => !(k in RULE_SCHEMA.properties));
  if (unknown.length > 0) throw new Error(`${IMAGE_KEYWORD}: unknown field ${unknown.join(', ')} (it takes ${Object.keys(RULE_SCHEMA.properties).join(', ')})`);
  const rule: CompiledImageRule = {
    minWidth: schema.min_width ?? 0,
    minHeight: schema.min_height ?? 0,
    maxWidth: schema.max_width ?? Infinity,
    maxHeight: schema.max_height ?? Infinity,
    minAspect: schema.min_aspect !== undefined ? aspectOf(schema.min_aspect) : null,
    maxAspect: schema.max_aspect !== undefined ? aspectOf(schema.max_aspect) : null,
    maxBytes: schema.max_bytes !== undefined ? parseSize(schema.max_bytes) : Infinity,
    formats: [...new Set((schema.formats ?? ['png', 'jpeg', 'webp']).flatMap((f) => FORMAT_NAMES[f] ?? []))],
  };
  const clash = (lo: string, hi: string) => new Error(`${IMAGE_KEYWORD}: ${lo} is above ${hi}`);
  if (rule.minWidth > rule.maxWidth) throw clash('min_width', 'max_width');
  if (rule.minHeight > rule.maxHeight) throw clash('min_height', 'max_height');
  if (rule.minAspect && rule.maxAspect && rule.minAspect.value > rule.maxAspect.value) throw clash('min_aspect', 'max_aspect');
  return rule;
}

function aspectOf(v: number | string): Aspect {
  if (typeof v === 'number') return { value: v, label: v >= 1 ? `${round(v)}:1` : `1:${round(1 / v)}` };
  const [w, h] = v.split(':').map(Number) as [number, number];
  if (!(w > 0 && h > 0)) throw new Error(`${IMAGE_KEYWORD}: the aspect ratio "${v}" must have both sides above 0`);
  return { value: w / h, label: v };
}

/** The first thing wrong with the image `value`, or null when it passes (a URL always does). */
function imageProblem(r: CompiledImageRule, value: string): ImageProblem | null {
  const image = inlineImage(value);
  if (image.kind === 'url') return null;
  if (image.kind === 'invalid') {
    return { message: `the image must be an http(s) URL, a data:image/<type>;base64,… URI or bare base64; this ${image.why}`, params: { rule: 'data' } };
  }
  const size = image.source.size;
  if (size > r.maxBytes)
    return { message: `the image is ${bytes(size)}; at most ${bytes(r.maxBytes)} is allowed`, params: { rule: 'max_bytes', bytes: size, limit: r.maxBytes } };
  const head = readImageHeader(image.source);
  const allowed = r.formats.map((f) => FORMAT_LABELS[f]);
  if (!head) return { message: `the image is not ${article(orList(allowed))} (its header could not be read)`, params: { rule: 'format' } };
  if (!r.formats.includes(head.format)) {
    return {
      message: `the image is ${article(FORMAT_LABELS[head.format])}; only ${orList(allowed)} is accepted`,
      params: { rule: 'format', format: head.format },
    };
  }
  return dimensionProblem(r, head);
}

function dimensionProblem(r: CompiledImageRule, h: ImageHeader): ImageProblem | null {
  const params = { width: h.width, height: h.height };
  const is = `the image is ${h.width}x${h.height}`;
  if (h.width < r.minWidth || h.height < r.minHeight) {
    return { message: `${is}; at least ${pixels(r.minWidth, r.minHeight, 0)} is required`, params: { rule: 'min_size', ...params } };
  }
  if (h.width > r.maxWidth || h.height > r.maxHeight) {
    return { message: `${is}; at most ${pixels(r.maxWidth, r.maxHeight, Infinity)} is allowed`, params: { rule: 'max_size', ...params } };
  }
  // A hair of tolerance: a ratio written as a decimal (0.5625) is not exact in binary.
  const ratio = h.width / h.height;
  const outside = (r.minAspect && ratio < r.minAspect.value * (1 - 1e-9)) || (r.maxAspect && ratio > r.maxAspect.value * (1 + 1e-9));
  if (outside) {
    const g = gcd(h.width, h.height);
    return {
      message: `${is}, an aspect ratio of ${h.width / g}:${h.height / g}; it must be ${aspectBounds(r, (lo, hi) => `between ${lo} and ${hi}`)}`,
      params: { rule: 'aspect', ...params },
    };
  }
  return null;
}

/** "1:4 to 4:1" (the catalogue) or "between 1:4 and 4:1" (a refusal); one bound alone as "at least 1:4". */
function aspectBounds(r: CompiledImageRule, range = (lo: string, hi: string) => `${lo} to ${hi}`): string {
  if (r.minAspect && r.maxAspect) return range(r.minAspect.label, r.maxAspect.label);
  if (r.minAspect) return `at least ${r.minAspect.label}`;
  if (r.maxAspect) return `at most ${r.maxAspect.label}`;
  return '';
}

/** "128x128", or one side alone ("128 pixels wide"); empty when neither side is bounded (`none`). */
function pixels(width: number, height: number, none: number): string {
  if (width !== none && height !== none) return `${width}x${height}`;
  if (width !== none) return `${width} pixels wide`;
  if (height !== none) return `${height} pixels high`;
  return '';
}

const round = (n: number) => String(Math.round(n * 100) / 100);
const orList = (words: readonly string[]) => (words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`);
const article = (phrase: string) => `${/^[AEIOU]/.test(phrase) ? 'an' : 'a'} ${phrase}`;

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
