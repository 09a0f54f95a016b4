/**
 * Request checks and error bodies of the delta-ark simulator (see delta-ark.ts for the protocol they
 * implement). Every check throws `ArkRefusal`, answered in one place by the simulator.
 */

import { group, must } from './invariants.js';

/** Image models of the images route; any other model is refused 404 ModelNotOpen. */
export const IMAGE_MODELS = new Set(['delta-img-4-0-250828', 'delta-img-4-5-251128', 'delta-img-5-0-260128']);
/** Video models and what each accepts. */
export const VIDEO_MODELS: Readonly<Record<string, { references: boolean; minDuration: number; maxDuration: number; needsResolution: boolean }>> = {
  'delta-vid-2-0-260128': { references: true, minDuration: 4, maxDuration: 15, needsResolution: false },
  'delta-vid-2-0-fast-260128': { references: true, minDuration: 4, maxDuration: 15, needsResolution: false },
  'delta-vid-1-5-pro': { references: false, minDuration: 2, maxDuration: 12, needsResolution: true },
};
export const RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'];
export const RESOLUTIONS = ['480p', '720p', '1080p'];
/** Largest decoded data URI (assets and inline references). */
export const MAX_DATA_BYTES = 30 * 1024 * 1024;
const MEDIA: Record<string, string[]> = {
  image: ['image/png', 'image/jpeg', 'image/webp'],
  video: ['video/mp4'],
  audio: ['audio/mpeg', 'audio/wav'],
};
const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/;
const HTTP_URL = /^https?:\/\/[^\s/]+\S*$/;

type ErrorRow = [code: string, type: string, message: string];
const ERRORS: Record<number, ErrorRow> & { 500: ErrorRow } = {
  400: ['InvalidParameter', 'BadRequest', 'The request failed because it is missing one or multiple required parameters.'],
  401: ['AuthenticationError', 'Unauthorized', 'The API key in the request is missing or invalid.'],
  403: ['AccessDenied', 'Forbidden', 'You do not have access to the requested resource.'],
  404: ['ResourceNotFound', 'NotFound', 'The specified resource is not found.'],
  429: ['RateLimitExceeded', 'TooManyRequests', 'The request has exceeded the rate limit. Please try again later.'],
  500: ['InternalServiceError', 'InternalServerError', 'The service encountered an unexpected internal error.'],
  503: ['ServerOverloaded', 'ServiceUnavailable', 'The service is currently overloaded. Please try again later.'],
};

/** The vendor's error body for a status: `{error:{code, message, param, type}}`. */
export function arkError(status: number, message?: string, code?: string, param = ''): unknown {
  const [c, type, m] = ERRORS[status] ?? (status >= 500 ? ERRORS[500] : [`Http${status}`, 'BadRequest', `Simulated error ${status}.`]);
  return { error: { code: code ?? c, message: message ?? m, param, type } };
}

/** A vendor refusal thrown by the checks. */
export class ArkRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param = '',
    readonly code?: string,
  ) {
    super(message);
  }
}

const bad = (param: string, message: string) => new ArkRefusal(400, message, param);
/** `value` as a plain object, or null. */
export const asObject = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const isInt = (v: unknown, lo: number, hi: number): v is number => Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi;

/** Parses a JSON object body or throws 400. */
export function parseBody(raw: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw bad('', 'The request body is not valid JSON.');
  }
  const obj = asObject(body);
  if (!obj) throw bad('', 'The request body must be a JSON object.');
  return obj;
}

function optional<T>(body: Record<string, unknown>, name: string, ok: (v: unknown) => v is T, what: string): T | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (!ok(v)) throw bad(name, `The parameter \`${name}\` specified in the request is not valid: expected ${what}.`);
  return v;
}
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isString = (v: unknown): v is string => typeof v === 'string';
const oneOf =
  (list: readonly string[]) =>
  (v: unknown): v is string =>
    typeof v === 'string' && list.includes(v);

/** Checks a data URI of a media kind; its decoded size in bytes. */
export function checkDataUri(param: string, text: string, kind: string): number {
  const m = DATA_URI.exec(text);
  const types = must(MEDIA[kind], `media types of ${kind}`);
  if (!m || !types.includes(group(m, 1))) throw bad(param, `The parameter \`${param}\` must be a base64 data URI of ${types.join(', ')}.`);
  const data = group(m, 2);
  const size = Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
  if (size > MAX_DATA_BYTES) throw bad(param, `The parameter \`${param}\` exceeds the limit of ${MAX_DATA_BYTES} bytes.`);
  return size;
}

/** A checked image request. */
export interface ImageRequest {
  model: string;
  prompt: string;
  width: number;
  height: number;
  b64: boolean;
  count: number;
}

/** The pixel size of a `size` value, or throws 400 (1K/2K/4K squares, or WxH within the pixel and ratio bounds). */
export function imageSize(size: string): { width: number; height: number } {
  const preset = { '1K': 1024, '2K': 2048, '4K': 4096 }[size];
  if (preset) return { width: preset, height: preset };
  const m = /^([1-9][0-9]{1,4})x([1-9][0-9]{1,4})$/.exec(size);
  const width = Number(m?.[1] ?? 0);
  const height = Number(m?.[2] ?? 0);
  const pixels = width * height;
  if (!m || pixels < 1024 * 1024 || pixels > 4096 * 4096 || width / height > 16 || height / width > 16) {
    throw bad(
      'size',
      `The parameter \`size\` specified in the request is not valid: ${size}. Use 1K, 2K, 4K or WxH with ${1024 * 1024}..${4096 * 4096} pixels and a ratio within 1:16..16:1.`,
    );
  }
  return { width, height };
}

/** Checks an images body. */
export function checkImages(body: Record<string, unknown>): ImageRequest {
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw bad('model', 'The parameter `model` is required.');
  if (!IMAGE_MODELS.has(model))
    throw new ArkRefusal(404, `The model or endpoint ${model} does not exist or you do not have access to it.`, 'model', 'ModelNotOpen');
  const prompt = body.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '') throw bad('prompt', 'The parameter `prompt` is required.');
  const image = body.image;
  const images = image === undefined || image === null ? [] : Array.isArray(image) ? image : [image];
  if (Array.isArray(image) && (image.length === 0 || image.length > 10)) throw bad('image', 'The parameter `image` must hold 1 to 10 images.');
  for (const img of images) {
    if (typeof img !== 'string') throw bad('image', 'The parameter `image` must be a string or an array of strings.');
    if (!HTTP_URL.test(img)) checkDataUri('image', img, 'image');
  }
  const { width, height } = imageSize(optional(body, 'size', isString, 'a string') ?? '2K');
  const format = optional(body, 'response_format', oneOf(['url', 'b64_json']), 'url or b64_json') ?? 'url';
  optional(body, 'watermark', isBool, 'a boolean');
  optional(body, 'seed', (v): v is number => isInt(v, -1, 2147483647), 'an integer in [-1, 2147483647]');
  if (body.stream === true) throw bad('stream', 'Streaming answers are not simulated.');
  const sequential = optional(body, 'sequential_image_generation', oneOf(['auto', 'disabled']), 'auto or disabled') ?? 'disabled';
  const options = optional(body, 'sequential_image_generation_options', (v): v is Record<string, unknown> => asObject(v) !== null, 'an object') ?? {};
  const max = optional(options, 'max_images', (v): v is number => isInt(v, 1, 15), 'an integer in [1, 15]') ?? 4;
  const count = sequential === 'auto' ? max : 1;
  if (images.length + count > 15) throw bad('image', 'Reference images plus generated images must not exceed 15.');
  return { model, prompt, width, height, b64: format === 'b64_json', count };
}

/** What a video task keeps of its submit body. */
export interface VideoRequest {
  prompt: string;
  resolution: string;
  ratio: string;
  duration: number;
  seed: number | null;
  returnLastFrame: boolean;
  expiresAfterS: number;
  generateAudio: boolean;
}

type Asset = { type: string } | undefined;
const ROLES: Record<string, { field: string; roles: string[]; kind: string }> = {
  image_url: { field: 'image_url', roles: ['first_frame', 'last_frame', 'reference_image'], kind: 'image' },
  video_url: { field: 'video_url', roles: ['reference_video'], kind: 'video' },
  audio_url: { field: 'audio_url', roles: ['reference_audio'], kind: 'audio' },
};

/** Checks one media reference: an http(s) URL, a data URI of its kind, or `asset://<id>` of a held asset of its kind. */
function checkRef(param: string, url: unknown, kind: string, asset: (id: string) => Asset): void {
  if (typeof url !== 'string') throw bad(param, `The parameter \`${param}\` is required.`);
  if (HTTP_URL.test(url)) return;
  if (url.startsWith('data:')) return void checkDataUri(param, url, kind);
  const a = /^asset:\/\/(asset-[0-9a-f]{1,64})$/.exec(url);
  const held = a ? asset(group(a, 1)) : undefined;
  if (!a || !held) throw bad(param, `The parameter \`${param}\` is not a reachable URL, a data URI or a known asset: ${url.slice(0, 80)}.`);
  if (held.type !== kind) throw bad(param, `The asset ${a[1]} is of type ${held.type}, not ${kind}.`);
}

/** Counts the content items by role, checking each; returns the prompt text. */
function checkContent(content: unknown, asset: (id: string) => Asset): { prompt: string; roles: Map<string, number> } {
  if (!Array.isArray(content) || content.length === 0) throw bad('content', 'The parameter `content` must be a non-empty array.');
  const roles = new Map<string, number>();
  const images = content.filter((c) => asObject(c)?.type === 'image_url').length;
  let prompt: string | null = null;
  content.forEach((raw, i) => {
    const item = asObject(raw);
    const param = `content[${i}]`;
    if (!item || typeof item.type !== 'string') throw bad(param, `The parameter \`${param}.type\` is required.`);
    if (item.type === 'text') {
      if (prompt !== null) throw bad(param, 'At most one text item is allowed in `content`.');
      if (typeof item.text !== 'string') throw bad(`${param}.text`, `The parameter \`${param}.text\` must be a string.`);
      prompt = item.text;
      return;
    }
    const spec = ROLES[item.type];
    if (!spec) throw bad(`${param}.type`, `The content type ${item.type} is not supported; use text, image_url, video_url or audio_url.`);
    checkRef(`${param}.${spec.field}.url`, asObject(item[spec.field])?.url, spec.kind, asset);
    // A lone image without a role is the first frame; otherwise every image names its role.
    const role = item.role ?? (spec.kind !== 'image' ? spec.roles[0] : images === 1 ? 'first_frame' : undefined);
    if (typeof role !== 'string' || !spec.roles.includes(role))
      throw bad(`${param}.role`, `The parameter \`${param}.role\` must be one of ${spec.roles.join(', ')}.`);
    roles.set(role, (roles.get(role) ?? 0) + 1);
  });
  return { prompt: prompt ?? '', roles };
}

/** Checks the mix of roles against the model. */
function checkRoles(model: string, roles: Map<string, number>, prompt: string): void {
  const n = (r: string) => roles.get(r) ?? 0;
  const refs = n('reference_image') + n('reference_video') + n('reference_audio');
  if (n('first_frame') > 1 || n('last_frame') > 1) throw bad('content', 'At most one first_frame and one last_frame image are allowed.');
  if (n('last_frame') > 0 && n('first_frame') === 0) throw bad('content', 'A last_frame image needs a first_frame image.');
  if (refs > 0 && n('first_frame') > 0) throw bad('content', 'Frame images and reference items cannot be combined.');
  if (!must(VIDEO_MODELS[model], `model ${model}`).references && refs > 0)
    throw bad('content', `The model ${model} does not support reference images, videos or audio.`);
  if (n('reference_image') > 4) throw bad('content', 'At most 4 reference_image items are allowed.');
  if (n('reference_video') > 3 || n('reference_audio') > 3) throw bad('content', 'At most 3 reference_video and 3 reference_audio items are allowed.');
  const hasImages = n('first_frame') + n('reference_image') > 0;
  if (prompt.trim() === '' && !hasImages) throw bad('content', 'A text prompt is required unless the content has images.');
}

/** Checks a video task body; `asset` looks up an asset the simulator holds. */
export function checkVideo(body: Record<string, unknown>, asset: (id: string) => Asset): { model: string; video: VideoRequest } {
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw bad('model', 'The parameter `model` is required.');
  const spec = VIDEO_MODELS[model];
  if (!spec) throw new ArkRefusal(404, `The model or endpoint ${model} does not exist or you do not have access to it.`, 'model', 'ModelNotOpen');
  const { prompt, roles } = checkContent(body.content, asset);
  checkRoles(model, roles, prompt);
  const resolution = optional(body, 'resolution', oneOf(RESOLUTIONS), RESOLUTIONS.join(', '));
  if (!resolution && spec.needsResolution) throw bad('resolution', `The parameter \`resolution\` is required for ${model}.`);
  const ratio = optional(body, 'ratio', oneOf(RATIOS), RATIOS.join(', ')) ?? (roles.has('first_frame') ? 'adaptive' : '16:9');
  const { minDuration: lo, maxDuration: hi } = spec;
  const duration = optional(body, 'duration', (v): v is number => isInt(v, lo, hi), `an integer in [${lo}, ${hi}]`) ?? 5;
  const seed = optional(body, 'seed', (v): v is number => isInt(v, -1, 4294967295), 'an integer in [-1, 4294967295]');
  optional(body, 'watermark', isBool, 'a boolean');
  const generateAudio = optional(body, 'generate_audio', isBool, 'a boolean') ?? false;
  const returnLastFrame = optional(body, 'return_last_frame', isBool, 'a boolean') ?? false;
  optional(body, 'callback_url', (v): v is string => typeof v === 'string' && HTTP_URL.test(v), 'an http(s) URL');
  const expiresAfterS = optional(body, 'execution_expires_after', (v): v is number => isInt(v, 3600, 259200), 'an integer in [3600, 259200]') ?? 172800;
  const video = {
    prompt,
    resolution: resolution ?? '720p',
    ratio,
    duration,
    seed: seed === undefined || seed === -1 ? null : seed,
    returnLastFrame,
    expiresAfterS,
    generateAudio,
  };
  return { model, video };
}

/** A checked asset upload. */
export interface AssetRequest {
  type: string;
  name: string | null;
  bytes: number | null;
}

/** Checks an asset body: exactly one of `url` (http(s)) or `data` (a data URI of the asset's type). */
export function checkAsset(body: Record<string, unknown>): AssetRequest {
  const type = body.type;
  if (typeof type !== 'string' || !MEDIA[type]) throw bad('type', 'The parameter `type` must be image, video or audio.');
  const name = optional(body, 'name', (v): v is string => typeof v === 'string' && v.length <= 256, 'a string of at most 256 characters') ?? null;
  const url = body.url;
  const data = body.data;
  if ((url === undefined) === (data === undefined)) throw bad('url', 'Exactly one of `url` and `data` is required.');
  if (url !== undefined) {
    if (typeof url !== 'string' || !HTTP_URL.test(url)) throw bad('url', 'The parameter `url` must be an http(s) URL.');
    return { type, name, bytes: null };
  }
  if (typeof data !== 'string') throw bad('data', 'The parameter `data` must be a data URI.');
  return { type, name, bytes: checkDataUri('data', data, type) };
}

/** The frame size of a video: the short side from the resolution, the long side from the ratio ("adaptive" as 16:9). */
export function frameSize(resolution: string, ratio: string): { width: number; height: number } {
  const short = Number.parseInt(resolution, 10);
  const [a, b] = (ratio === 'adaptive' ? '16:9' : ratio).split(':').map(Number) as [number, number];
  const long = Math.round((short * Math.max(a, b)) / Math.min(a, b) / 16) * 16;
  return a >= b ? { width: long, height: short } : { width: short, height: long };
}
