import { Invalid, oneOf, text, type Fields, type Upload } from './zeta-openai-body.js';
import type { SimTask } from './task-book.js';
import { makeFlatWebp } from './zeta-webp.js';

/**
 * The video create checks of the zeta-openai simulator and the pictures of its content variants.
 * The rules are written out in the top comment of zeta-openai.ts; the official `openai` package
 * (6.49.0) is their source: its `VideoCreateParams` and `VideoDownloadContentParams`.
 */

/** The content route's variants, in the order of the simulator's `result(id, index)`. */
export const VARIANTS: readonly string[] = ['video', 'thumbnail', 'spritesheet'];
const ZETA_SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'];
const WIDE_SIZES = [...ZETA_SIZES, '1920x1080', '1080x1920'];
const REF_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'video/mp4'];
/** `input_reference[image_url]`: "a fully qualified URL or base64-encoded data URL" (the package's words). */
const IMAGE_URL = /^(https?:\/\/\S+|data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/]+={0,2})$/;
/** The default video model, the vendor's counterpart of the package's documented default `sora-2`. */
const DEFAULT_VIDEO_MODEL = 'zeta-video-2';
/** The epsilon line speaks the protocol with its own extensions (seconds 1-20, two more sizes, several uploads). */
const isEpsilon = (model: string) => model.startsWith('epsilon-');

/** What a video task keeps of its submit body. */
export interface VideoBody {
  seconds: string;
  size: string;
  references: number;
  remixOf: string | null;
}

/**
 * The pictures of a video create, as the package sends them: file parts named `input_reference`
 * (one; the epsilon line takes several), or one object `{image_url}` or `{file_id}` (JSON, or the
 * parts `input_reference[image_url]` / `input_reference[file_id]` of a form), never both. A string
 * or an array of strings, which the package cannot send, is refused. Returns how many there are.
 */
function checkReferences(model: string, fields: Fields, files: Upload[]): number {
  for (const f of files) {
    if (f.field !== 'input_reference') throw new Invalid(`Unexpected file field '${f.field}'.`, f.field, 'invalid_value');
    if (!REF_TYPES.includes(f.mimeType))
      throw new Invalid(`Invalid file format for 'input_reference': ${f.mimeType}. Supported: ${REF_TYPES.join(', ')}.`, 'input_reference', 'invalid_value');
  }
  if (files.length > 1 && !isEpsilon(model))
    throw new Invalid(`Invalid 'input_reference': expected one file, but got ${files.length}.`, 'input_reference', 'invalid_value');
  const ref = fields.input_reference;
  if (ref === undefined || ref === null) return files.length;
  if (typeof ref !== 'object' || Array.isArray(ref)) {
    throw new Invalid(
      `Invalid type for 'input_reference': expected a file or an object with image_url or file_id, but got ${Array.isArray(ref) ? 'an array' : typeof ref} instead.`,
      'input_reference',
      'invalid_type',
    );
  }
  if (files.length > 0) throw new Invalid("Invalid 'input_reference': give a file or an object, not both.", 'input_reference', 'invalid_value');
  const obj = ref as Record<string, unknown>;
  const keys = Object.keys(obj);
  const extra = keys.find((k) => k !== 'image_url' && k !== 'file_id');
  if (extra) throw new Invalid(`Unknown parameter: 'input_reference.${extra}'.`, `input_reference.${extra}`, 'unknown_parameter');
  if (keys.length !== 1) throw new Invalid("Invalid 'input_reference': expected exactly one of image_url or file_id.", 'input_reference', 'invalid_value');
  if (keys[0] === 'file_id') {
    // The simulator keeps no files, so every file id is one it does not have.
    throw new Invalid(`Invalid 'input_reference.file_id': no file with id '${String(obj.file_id).slice(0, 80)}'.`, 'input_reference.file_id', 'invalid_value');
  }
  if (typeof obj.image_url !== 'string' || !IMAGE_URL.test(obj.image_url)) {
    throw new Invalid(
      "Invalid 'input_reference.image_url': expected an http(s) URL or a base64 data URL of a PNG, JPEG or WebP image.",
      'input_reference.image_url',
      'invalid_value',
    );
  }
  return 1;
}

/** Checks a video create body; the normalised model, prompt and kept fields. */
export function checkVideo(fields: Fields, files: Upload[]): { model: string; prompt: string; body: VideoBody } {
  const model = text(fields, 'model', false) ?? DEFAULT_VIDEO_MODEL;
  const prompt = text(fields, 'prompt', true);
  const wide = isEpsilon(model);
  const seconds = text(fields, 'seconds', false) ?? '4';
  oneOf('seconds', seconds, wide ? Array.from({ length: 20 }, (_, i) => String(i + 1)) : ['4', '8', '12']);
  const size = oneOf('size', text(fields, 'size', false) ?? '720x1280', wide ? WIDE_SIZES : ZETA_SIZES);
  const references = checkReferences(model, fields, files);
  return { model, prompt, body: { seconds, size, references, remixOf: null } };
}

/**
 * The picture served for a variant of a video (`thumbnail`, `spritesheet`: four frames side by side),
 * 1/16 of its size: a WebP, the image type OpenAI's specification gives the content route.
 */
export function variantBytes(task: SimTask, variant: string): Buffer {
  const [w, h] = (task.body as VideoBody).size.split('x').map((n) => Math.max(4, Math.round(Number(n) / 16))) as [number, number];
  const seed = parseInt(task.id.slice(6, 8), 16);
  return variant === 'spritesheet' ? makeFlatWebp(w * 4, h, seed) : makeFlatWebp(w, h, seed);
}

/**
 * One page of `GET /v1/videos` in the list envelope of OpenAI's specification (`VideoListResource`):
 * `order` desc (default, newest first) or asc, `limit` 0..100 (default 20), `after` the last id of the
 * page before. `all` is oldest first.
 */
export function videoList(all: readonly SimTask[], query: URLSearchParams, view: (t: SimTask) => unknown): Record<string, unknown> {
  const order = oneOf('order', query.get('order') ?? 'desc', ['asc', 'desc']);
  const rawLimit = query.get('limit') ?? '20';
  const limit = Number(rawLimit);
  if (!/^[0-9]{1,3}$/.test(rawLimit) || limit > 100)
    throw new Invalid(`Invalid 'limit': expected an integer from 0 to 100, but got '${rawLimit.slice(0, 20)}'.`, 'limit', 'invalid_value');
  const sorted = order === 'desc' ? [...all].reverse() : [...all];
  const after = query.get('after');
  let start = 0;
  if (after !== null) {
    const at = sorted.findIndex((t) => t.id === after);
    if (at < 0) throw new Invalid(`Invalid 'after': no video with id '${after.slice(0, 80)}'.`, 'after', 'invalid_value');
    start = at + 1;
  }
  const page = sorted.slice(start, start + limit);
  return {
    object: 'list',
    data: page.map(view),
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: start + page.length < sorted.length,
  };
}
