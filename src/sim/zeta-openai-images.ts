import { randomBytes } from 'node:crypto';
import { group } from './invariants.js';
import { makeNoisePng, makePng } from './png.js';
import { integer, Invalid, oneOf, text, type Body, type Fields, type Upload } from './zeta-openai-body.js';

/**
 * The synchronous image routes of the zeta-openai simulator (generations and edits): their checks
 * and answers, and the PNG files behind `url` answers (a streamed answer's events are made from the
 * same answer: zeta-openai-stream.ts). The rules are written out in the top comment of
 * zeta-openai.ts; where the official `openai` package (6.49.0) documents a rule, it is the source.
 */

const IMAGE_LINE = ['auto', '1024x1024', '1536x1024', '1024x1536'];
/** The official sizes per model (default "auto" where listed, else 1024x1024); models not listed take any WxH. */
const SIZES: Record<string, readonly string[]> = {
  'zeta-image-1': IMAGE_LINE,
  'zeta-image-2': IMAGE_LINE,
  'zeta-draw-3': ['1024x1024', '1792x1024', '1024x1792'],
  'zeta-draw-2': ['256x256', '512x512', '1024x1024'],
};
/**
 * The GPT-image-style models (the package's GPT image models): they always answer base64, refuse
 * `response_format` as the real ones do, report token usage and revise no prompt.
 */
export const GPT_IMAGE_MODELS: readonly string[] = ['zeta-image-1', 'zeta-image-2'];
/** Parameters only GPT image models take: naming one picks a GPT image model when no model is given. */
const GPT_ONLY = ['background', 'moderation', 'output_compression', 'output_format', 'partial_images', 'stream', 'input_fidelity'];
/** The largest `n` per model; others allow 10. */
const MAX_N: Record<string, number> = { 'zeta-draw-3': 1 };
const EDIT_MODELS = ['zeta-image-1', 'zeta-image-2', 'zeta-draw-2'];
const EDIT_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
const MB = 1024 * 1024;
/** Edit files: 50 MB each for GPT image models (and other lines); the dall-e-2 style takes one PNG under 4 MB, as does every mask. */
const MAX_EDIT_FILE = 50 * MB;
const MAX_SMALL_FILE = 4 * MB;
const MAX_EDIT_IMAGES = 16;
/** Defaults as the package documents them: generations the dall-e-2 style, edits a GPT image model. */
const DEFAULT_GENERATION_MODEL = 'zeta-draw-2';
const DEFAULT_GPT_MODEL = 'zeta-image-1';
/** Tokens an answer reports per output image and per input image of an edit (arbitrary, stable). */
const OUT_TOKENS = 1056;
const IN_IMAGE_TOKENS = 272;
/** OpenAI's PartialImages: 0 to 3 partial images before the final one. */
const MAX_PARTIAL_IMAGES = 3;

/** How a model's line answers: GPT image (base64 only, usage), dall-e style (no usage), or another line speaking the protocol. */
type Style = 'gpt' | 'draw' | 'other';
const styleOf = (model: string): Style => (GPT_IMAGE_MODELS.includes(model) ? 'gpt' : model.startsWith('zeta-draw-') ? 'draw' : 'other');

/** A checked image request: what the answer needs. */
export interface ImageJob {
  readonly prompt: string;
  readonly model: string;
  readonly n: number;
  readonly w: number;
  readonly h: number;
  readonly b64: boolean;
  /** Input images of an edit (0 for a generation, whose `image` strings are not counted). */
  readonly inputs: number;
  readonly edit: boolean;
  /** What a GPT image answer reports it made (its top-level `background`, `output_format`, `quality`). */
  readonly background: string;
  readonly outputFormat: string;
  readonly quality: string;
  /** Answered as Server-Sent Events (`stream: true`), with `partials` partial images before the final one. */
  readonly stream: boolean;
  readonly partials: number;
}

/** The pixel size of `size` for `model`: one of the model's official sizes, else "auto" or WxH of 64..4096. */
function checkSize(model: string, size: string | undefined): [number, number] {
  const official = SIZES[model];
  const fallback = !official || official.includes('auto') ? 'auto' : '1024x1024';
  const value = size ?? fallback;
  if (official) oneOf('size', value, official);
  const m = /^([0-9]{2,4})x([0-9]{2,4})$/.exec(value === 'auto' ? '1024x1024' : value);
  const w = Number(m?.[1] ?? 0);
  const h = Number(m?.[2] ?? 0);
  if (!m || w < 64 || h < 64 || w > 4096 || h > 4096)
    throw new Invalid(`Invalid value: '${value}'. Expected 'auto' or WIDTHxHEIGHT with each side from 64 to 4096.`, 'size', 'invalid_value');
  return [w, h];
}

/**
 * `stream` (a JSON boolean, or the text "true"/"false" of a form, as the package sends it) and
 * `partial_images` (an integer 0..3, default 0; a decimal string in a form). Only the GPT image
 * models stream, as OpenAI documents `stream`; the others refuse `true` the way OpenAI refuses a
 * value a model does not support. A stream makes one image: its events carry no image index, so
 * the images of n > 1 could not be told apart, and the simulator refuses n > 1 with `stream`.
 */
function checkStream(body: Body, gpt: boolean, n: number): { stream: boolean; partials: number } {
  const v = body.fields.stream;
  const stream = v === undefined || v === null ? false : body.form && (v === 'true' || v === 'false') ? v === 'true' : v;
  if (typeof stream !== 'boolean')
    throw new Invalid(`Invalid type for 'stream': expected a boolean, but got ${Array.isArray(v) ? 'an array' : typeof v} instead.`, 'stream', 'invalid_type');
  const partials = integer(body, 'partial_images', 0, 0, MAX_PARTIAL_IMAGES);
  if (stream && !gpt)
    throw new Invalid(
      "Unsupported value: 'stream' does not support true with this model. Only the default (false) value is supported.",
      'stream',
      'unsupported_value',
    );
  if (stream && n > 1) throw new Invalid(`Invalid value for 'n': a streamed request makes exactly 1 image, but got ${n} instead.`, 'n', 'invalid_value');
  return { stream, partials };
}

/** The fields both image routes share: n, size, response_format, quality, background, output_format, stream, partial_images. */
function checkCommon(body: Body, prompt: string, model: string, inputs: number, edit: boolean): ImageJob {
  const max = MAX_N[model] ?? 10;
  const n = integer(body, 'n', 1, 1, max);
  const [w, h] = checkSize(model, text(body.fields, 'size', false));
  const gpt = styleOf(model) === 'gpt';
  // The real GPT image models refuse the parameter outright: they always answer base64.
  if (gpt && body.fields.response_format !== undefined && body.fields.response_format !== null) {
    throw new Invalid("Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter');
  }
  const format = gpt ? 'b64_json' : oneOf('response_format', text(body.fields, 'response_format', false) ?? 'url', ['url', 'b64_json']);
  const background = text(body.fields, 'background', false);
  if (background !== undefined) oneOf('background', background, ['auto', 'transparent', 'opaque']);
  const output = text(body.fields, 'output_format', false);
  if (output !== undefined) oneOf('output_format', output, ['png', 'jpeg', 'webp']);
  const quality = text(body.fields, 'quality', false);
  const { stream, partials } = checkStream(body, gpt, n);
  return {
    prompt,
    model,
    n,
    w,
    h,
    b64: format === 'b64_json',
    inputs,
    edit,
    background: background === 'transparent' ? 'transparent' : 'opaque',
    outputFormat: output ?? 'png',
    quality: quality === 'low' || quality === 'high' ? quality : 'medium',
    stream,
    partials,
  };
}

/** The model of a body: as given, else the package's documented default for the route. */
function modelOf(fields: Fields, edit: boolean): string {
  const given = text(fields, 'model', false);
  if (given !== undefined) return given;
  if (edit) return DEFAULT_GPT_MODEL;
  const quality = fields.quality;
  const gptOnly = GPT_ONLY.some((k) => fields[k] !== undefined && fields[k] !== null) || quality === 'low' || quality === 'medium' || quality === 'high';
  return gptOnly ? DEFAULT_GPT_MODEL : DEFAULT_GENERATION_MODEL;
}

/** Checks a generation body (JSON). */
export function checkGeneration(body: Body): ImageJob {
  const prompt = text(body.fields, 'prompt', true);
  const model = modelOf(body.fields, false);
  const image = body.fields.image;
  if (image !== undefined && typeof image !== 'string' && !(Array.isArray(image) && image.every((i) => typeof i === 'string'))) {
    throw new Invalid("Invalid type for 'image': expected a string or an array of strings.", 'image', 'invalid_type');
  }
  return checkCommon(body, prompt, model, 0, false);
}

/** One uploaded file of an edit: allowed content type, not empty, not over `max` bytes. */
function checkFile(param: string, f: Upload, types: readonly string[], max: number): void {
  if (!types.includes(f.mimeType)) {
    throw new Invalid(
      `Invalid file '${param}': unsupported mimetype ('${f.mimeType}'). Supported file formats are ${types.map((t) => `'${t}'`).join(', ')}.`,
      param,
      'invalid_value',
    );
  }
  if (f.size === 0) throw new Invalid(`Invalid file '${param}': the file is empty.`, param, 'invalid_value');
  if (f.size > max) throw new Invalid(`Invalid file '${param}': ${f.size} bytes is more than the limit of ${max / MB} MB.`, param, 'invalid_value');
}

/**
 * The file parts of an edit: images (`image` or `image[]`; 1 to 16, or exactly one PNG for the
 * dall-e-2 style), at most one PNG mask; the image count.
 */
function checkEditFiles(body: Body, model: string): number {
  for (const name of ['image', 'image[]', 'mask']) {
    if (body.fields[name] !== undefined)
      throw new Invalid(`Invalid type for '${name.replace('[]', '')}': expected a file.`, name.replace('[]', ''), 'invalid_type');
  }
  const images: Upload[] = [];
  const masks: Upload[] = [];
  for (const f of body.files) {
    if (f.field === 'image' || f.field === 'image[]') images.push(f);
    else if (f.field === 'mask') masks.push(f);
    else throw new Invalid(`Unexpected file field '${f.field}'.`, f.field, 'invalid_value');
  }
  const small = model === 'zeta-draw-2';
  const most = small ? 1 : MAX_EDIT_IMAGES;
  if (images.length === 0) throw new Invalid("Missing required parameter: 'image'.", 'image', 'missing_required_parameter');
  if (images.length > most)
    throw new Invalid(
      `Invalid 'image': at most ${most} image${most === 1 ? '' : 's'} may be given for ${model}, but got ${images.length}.`,
      'image',
      'invalid_value',
    );
  if (masks.length > 1) throw new Invalid("Invalid 'mask': only one mask may be given.", 'mask', 'invalid_value');
  for (const f of images) checkFile('image', f, small ? ['image/png'] : EDIT_TYPES, small ? MAX_SMALL_FILE : MAX_EDIT_FILE);
  for (const f of masks) checkFile('mask', f, ['image/png'], MAX_SMALL_FILE);
  return images.length;
}

/** Checks an edit body (multipart only; the caller refuses other content types). */
export function checkEdit(body: Body): ImageJob {
  const prompt = text(body.fields, 'prompt', true);
  const model = modelOf(body.fields, true);
  // The vendor knows its own models: a zeta- model outside the edit list cannot edit; other lines pass.
  if (model.startsWith('zeta-') && !EDIT_MODELS.includes(model)) {
    throw new Invalid(
      `Invalid value: '${model}'. This model does not support image edits. Supported values are: ${EDIT_MODELS.map((m) => `'${m}'`).join(', ')}.`,
      'model',
      'invalid_value',
    );
  }
  const inputs = checkEditFiles(body, model);
  return checkCommon(body, prompt, model, inputs, true);
}

/** The seed of an image id (its first byte), so an image is made again from its id and nothing is stored. */
const seedOf = (id: string) => parseInt(id.slice(4, 6), 16);
/** The PNG of an image id; the id carries the seed and the pixel size, so nothing is stored. */
const imageBytes = (id: string, w: number, h: number) => makePng(w, h, seedOf(id));

/** The pixel size of a job's images: 1/16 of the asked size (at least 4), or the asked size when `full`. */
const pixelsOf = (job: ImageJob, full: boolean): [number, number] =>
  full ? [job.w, job.h] : [Math.max(4, Math.round(job.w / 16)), Math.max(4, Math.round(job.h / 16))];

/**
 * One image of a job as a PNG: a small gradient tinted by `seed`, or with `full` one at the asked
 * size with a photograph's weight (random pixels; `seed` plays no part).
 */
export function jobPng(job: ImageJob, seed: number, full = false): Buffer {
  const [w, h] = pixelsOf(job, full);
  return full ? makeNoisePng(w, h) : makePng(w, h, seed);
}

/** The bytes behind an image URL path (`/files/img_<hex>_<W>x<H>.png`); null for any other path. */
export function imageFile(path: string): Buffer | null {
  const file = /^\/files\/(img_[0-9a-f]{16})_([0-9]{1,3})x([0-9]{1,3})\.png$/.exec(path);
  return file ? imageBytes(group(file, 1), Number(file[2]), Number(file[3])) : null;
}

/**
 * The answer to a checked image request: PNGs at 1/16 of the asked size, by URL under `base` or
 * inline (inline ones at the asked size with a photograph's weight when `full`; URL files stay
 * small). By style: GPT image answers say what they made (`background`, `output_format`,
 * `quality`, `size`) and report usage with its input details, revising no prompt; dall-e-style
 * answers carry no usage, and only the zeta-draw-3 style a revised prompt; other lines revise and
 * report usage.
 */
export function imagesAnswer(job: ImageJob, base: string, created: number, full = false): unknown {
  const style = styleOf(job.model);
  const [w, h] = pixelsOf(job, false);
  const revises = !job.edit && (style === 'other' || job.model === 'zeta-draw-3');
  const data = Array.from({ length: job.n }, () => {
    const id = `img_${randomBytes(8).toString('hex')}`;
    const item = job.b64 ? { b64_json: jobPng(job, seedOf(id), full).toString('base64') } : { url: `${base}/files/${id}_${w}x${h}.png` };
    return revises ? { ...item, revised_prompt: job.prompt } : item;
  });
  if (style === 'draw') return { created, data };
  const text = Math.ceil(job.prompt.length / 4);
  const image = IN_IMAGE_TOKENS * job.inputs;
  const output = OUT_TOKENS * job.n;
  const usage = {
    input_tokens: text + image,
    input_tokens_details: { image_tokens: image, text_tokens: text },
    output_tokens: output,
    total_tokens: text + image + output,
  };
  if (style === 'other') return { created, data, usage };
  return { created, background: job.background, data, output_format: job.outputFormat, quality: job.quality, size: `${job.w}x${job.h}`, usage };
}
