/**
 * Request bodies of the gamma-volc simulator: the model table and the vendor's checks of submit and
 * query bodies. Each check answers the message of a 400 / code 50400, or a plan of the task.
 * See the doc comment of gamma-volc.ts for the rules in prose.
 */

import { must } from './invariants.js';

/** What a task makes. */
export type GammaKind = 'image' | 'video';

/** Models by `req_key`: the public model each serves and whether it makes images or a video. */
export const REQ_KEYS: Readonly<Record<string, { readonly kind: GammaKind; readonly model: string }>> = {
  gamma_t2i_v40: { kind: 'image', model: 'gamma-4.0' },
  gamma_t2i_v45: { kind: 'image', model: 'gamma-4.5' },
  gamma_v30: { kind: 'video', model: 'gamma-video-3.0' },
  gamma_v20: { kind: 'video', model: 'gamma-video-2.0' },
};

/** Video aspect ratios. */
export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'];
/** Video lengths in frames (24 fps): 121 = 5 s, 241 = 10 s. */
export const FRAMES = [121, 241];
/** Longest prompt, in characters. */
export const MAX_PROMPT = 800;
/** Default image size when neither width/height nor size is given. */
export const DEFAULT_SIDE = 2048;

/** How a task was asked for: enough to answer its queries and make its result bytes. */
export interface GammaPlan {
  readonly reqKey: string;
  readonly kind: GammaKind;
  /** image: `text` | `image` (image-to-image); video: `text` | `first-frame` | `first-last` | `reference`. */
  readonly mode: string;
  readonly references: number;
  /** Images only: the requested output size. */
  readonly width: number;
  readonly height: number;
  /** Videos only. */
  readonly frames: number;
  readonly aspectRatio: string | null;
}

/** A check's answer: a value, or the message of the vendor's 400. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

type Body = Record<string, unknown>;
const bad = (message: string): { ok: false; message: string } => ({ ok: false, message });
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, lo: number, hi: number): v is number => Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi;
const URL_RE = /^https?:\/\/\S+$/;
const RAW_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Number of reference images, or a message: `image_urls` http(s) URLs or `binary_data_base64` raw base64, not both. */
function references(b: Body, max: number): Checked<number> {
  if (b.image_urls !== undefined && b.binary_data_base64 !== undefined) return bad('image_urls and binary_data_base64 are mutually exclusive');
  for (const field of ['image_urls', 'binary_data_base64'] as const) {
    const list = b[field];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0) return bad(`${field} must be a non-empty array`);
    if (list.length > max) return bad(`${field} takes at most ${max} images here`);
    const test = field === 'image_urls' ? URL_RE : RAW_BASE64;
    const what = field === 'image_urls' ? 'an http(s) URL' : 'raw base64 without a data: prefix';
    if (!list.every((x) => typeof x === 'string' && test.test(x))) return bad(`every ${field} item must be ${what}`);
    return { ok: true, value: list.length };
  }
  return { ok: true, value: 0 };
}

/** Output size of an image task: width/height (both, 512..4096, ratio 1:3..3:1) win over size (an area). */
function imageSize(b: Body): Checked<{ width: number; height: number }> {
  for (const f of ['aspect_ratio', 'frames', 'mode'] as const) if (b[f] !== undefined) return bad(`${f} is not supported by image models`);
  if (b.width !== undefined || b.height !== undefined) {
    if (!isInt(b.width, 512, 4096) || !isInt(b.height, 512, 4096)) return bad('width and height must both be integers from 512 to 4096');
    const ratio = b.width / b.height;
    if (ratio < 1 / 3 || ratio > 3) return bad('width / height must be between 1:3 and 3:1');
    return { ok: true, value: { width: b.width, height: b.height } };
  }
  if (b.size !== undefined) {
    if (!isInt(b.size, 1024 * 1024, 4096 * 4096)) return bad('size must be an integer area from 1048576 (1024*1024) to 16777216 (4096*4096)');
    const side = Math.round(Math.sqrt(b.size));
    return { ok: true, value: { width: side, height: side } };
  }
  return { ok: true, value: { width: DEFAULT_SIDE, height: DEFAULT_SIDE } };
}

/** Checks a submit body (`CVSync2AsyncSubmitTask`). */
export function checkSubmit(b: unknown): Checked<GammaPlan> {
  if (!isObject(b)) return bad('the request body must be a JSON object');
  if (typeof b.req_key !== 'string' || !b.req_key) return bad('req_key is required');
  const model = REQ_KEYS[b.req_key];
  if (!model) return bad(`invalid req_key: ${b.req_key}`);
  if (typeof b.prompt !== 'string' || b.prompt.trim() === '') return bad('prompt is required');
  if ([...b.prompt].length > MAX_PROMPT) return bad(`prompt must be at most ${MAX_PROMPT} characters`);
  if (b.seed !== undefined && !isInt(b.seed, -1, 2147483647)) return bad('seed must be an integer from -1 (random) to 2147483647');
  if (model.kind === 'image') {
    const refs = references(b, 10);
    if (!refs.ok) return refs;
    const size = imageSize(b);
    if (!size.ok) return size;
    const mode = refs.value > 0 ? 'image' : 'text';
    return { ok: true, value: { reqKey: b.req_key, kind: 'image', mode, references: refs.value, ...size.value, frames: 0, aspectRatio: null } };
  }
  for (const f of ['width', 'height', 'size'] as const) if (b[f] !== undefined) return bad(`${f} is not supported by video models`);
  if (b.mode !== undefined && b.mode !== 'reference') return bad('mode must be "reference" when given');
  const reference = b.mode === 'reference';
  const refs = references(b, reference ? 4 : 2);
  if (!refs.ok) return refs;
  if (reference && refs.value === 0) return bad('mode "reference" needs image_urls or binary_data_base64');
  if (b.aspect_ratio !== undefined && !ASPECT_RATIOS.includes(b.aspect_ratio as string)) return bad(`aspect_ratio must be one of ${ASPECT_RATIOS.join(', ')}`);
  if (b.frames !== undefined && !FRAMES.includes(b.frames as number)) return bad('frames must be 121 (5 s) or 241 (10 s)');
  const mode = reference ? 'reference' : must(['text', 'first-frame', 'first-last'][refs.value], `mode for ${refs.value} references`);
  const aspectRatio = (b.aspect_ratio as string | undefined) ?? null;
  return {
    ok: true,
    value: {
      reqKey: b.req_key,
      kind: 'video',
      mode,
      references: refs.value,
      width: 0,
      height: 0,
      frames: (b.frames as number | undefined) ?? 121,
      aspectRatio,
    },
  };
}

/** A checked query: which task, and whether images come back as URLs. */
export interface GammaQuery {
  readonly reqKey: string;
  readonly taskId: string;
  readonly returnUrl: boolean;
}

/** Checks a query body (`CVSync2AsyncGetResult`): `{req_key, task_id, req_json?}`, req_json a JSON object in a string. */
export function checkQuery(b: unknown): Checked<GammaQuery> {
  if (!isObject(b)) return bad('the request body must be a JSON object');
  if (typeof b.req_key !== 'string' || !REQ_KEYS[b.req_key]) return bad(`invalid req_key: ${String(b.req_key)}`);
  if (typeof b.task_id !== 'string' || b.task_id === '') return bad('task_id is required');
  let options: unknown = {};
  if (b.req_json !== undefined) {
    if (typeof b.req_json !== 'string') return bad('req_json must be a JSON string');
    try {
      options = JSON.parse(b.req_json);
    } catch {
      return bad('req_json is not valid JSON');
    }
    if (!isObject(options)) return bad('req_json must encode a JSON object');
  }
  const returnUrl = (options as Body).return_url;
  if (returnUrl !== undefined && typeof returnUrl !== 'boolean') return bad('req_json.return_url must be a boolean');
  return { ok: true, value: { reqKey: b.req_key, taskId: b.task_id, returnUrl: returnUrl === true } };
}
