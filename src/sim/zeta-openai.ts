import busboy from 'busboy';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { makeMp4, serveBytes } from './media.js';
import { makePng } from './png.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking zeta-openai (upstream-protocols.md): asynchronous videos and synchronous
 * images. Secret name `key`; auth `Authorization: Bearer KEY` on every route but `/files/`.
 *
 * Routes:
 *   POST /v1/videos                 JSON, or multipart/form-data (fields as text parts, `input_reference`
 *                                   as one or several file parts or as text). Checked: `model` and `prompt`
 *                                   required non-empty strings; `seconds` a STRING, default "4": "4"|"8"|"12"
 *                                   for models starting with `zeta-`, "1".."20" otherwise; `size` default
 *                                   "720x1280", one of 720x1280|1280x720|1024x1792|1792x1024 (non-`zeta-`
 *                                   models also 1920x1080|1080x1920); `input_reference` text is an http(s)
 *                                   URL or a base64 data URI (image/png|jpeg|webp, video/mp4), a file part
 *                                   has one of those content types. Answer 200: the video object.
 *   GET  /v1/videos/{id}            200 video object; 404 unknown id.
 *   GET  /v1/videos/{id}/content    200 the MP4 (Range → 206/416), `?variant=video` only (other variants
 *                                   400). Needs the key. 404 (code `video_not_ready`) until completed; a
 *                                   failed video stays 404. No faults here.
 *   POST /v1/videos/{id}/remix      JSON `{prompt}` → 200 a new video object (model, seconds and size of the
 *                                   source, `remixed_from_video_id`); 404 unknown source, 400 source not completed.
 *   POST /v1/images/generations     JSON `{model, prompt (required), n (1..10, default 1), size ("auto" or
 *                                   WxH, 64..4096 each, default 1024x1024), response_format (url|b64_json,
 *                                   default url), quality, background (auto|transparent|opaque),
 *                                   output_format (png|jpeg|webp), image (string or string array)}` →
 *                                   200 `{created, data:[{url}|{b64_json}, revised_prompt], usage}`. Always a
 *                                   PNG, 1/16 of the requested width and height (same aspect ratio).
 *   GET  /files/<id>.png            the image of a `url` answer; no auth (like a presigned URL), Range works.
 *
 * Video object: `{id:"video_<hex>", object:"video", model, status, progress, created_at, completed_at,
 * expires_at, prompt, seconds, size, remixed_from_video_id, error}`; times in Unix seconds, null until
 * known. Status `queued` → `in_progress` (progress 1–99) → `completed` | `failed` (with
 * `error:{code: <fail reason>, message}`, else `error:null`); `[sim:never]` stays `in_progress`,
 * `[sim:status=WORD]` reports WORD.
 *
 * Errors: `{"error":{"message","type","param","code"}}`. 400 `invalid_request_error` (code
 * `missing_required_parameter` | `invalid_type` | `invalid_value` | `invalid_json` | null, `param` the
 * field); 401 (missing or wrong key) `invalid_request_error` / `invalid_api_key`; 404
 * `invalid_request_error` / null (`video_not_ready` on content); 429 `requests` / `rate_limit_exceeded`
 * (with `retry-after`); any 5xx `server_error` / `server_error`; other statuses `invalid_request_error` / null.
 * Faults (faults.ts) apply after auth and validation, on every route but downloads.
 * Stats: requests, submits (video creates and remixes), queries, downloads (content and files), images.
 */

/** Options of the zeta-openai simulator. */
export interface ZetaSimOptions {
  readonly port?: number;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const ZETA_SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'];
const WIDE_SIZES = [...ZETA_SIZES, '1920x1080', '1080x1920'];
const REF_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'video/mp4'];
const REF_TEXT = /^(https?:\/\/\S+|data:(image\/(png|jpeg|webp)|video\/mp4);base64,[A-Za-z0-9+/]+={0,2})$/;
const MAX_UPLOAD = 50 * 1024 * 1024;
const DEFAULTS: Record<number, [type: string, code: string | null, message: string]> = {
  400: ['invalid_request_error', null, 'Invalid request.'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'],
  404: ['invalid_request_error', null, 'Not found.'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests. Please try again in 2s.'],
};

/** The vendor's error body for a status (upstream-protocols.md, zeta-openai). */
export function zetaError(status: number, message?: string, param: string | null = null, code?: string | null): unknown {
  const [type, defCode, defMessage] =
    DEFAULTS[status] ??
    (status >= 500
      ? ['server_error', 'server_error', 'The server had an error while processing your request. Sorry about that!']
      : ['invalid_request_error', null, `Simulated error ${status}.`]);
  return { error: { message: message ?? defMessage, type, param, code: code === undefined ? defCode : code } };
}

type Fields = Record<string, unknown>;
interface Upload {
  field: string;
  mimeType: string;
  size: number;
}
/** What a video task keeps of its submit body. */
interface VideoBody {
  seconds: string;
  size: string;
  references: number;
  remixOf: string | null;
}
/** A vendor 400, thrown by the body checks and answered in one place. */
class Invalid extends Error {
  constructor(message: string, readonly param: string | null, readonly code: string | null) {
    super(message);
  }
}

/** Reads a multipart body already held in memory; repeated text fields become arrays. */
function parseMultipart(req: IncomingMessage, raw: Buffer): Promise<{ fields: Fields; files: Upload[] }> {
  return new Promise((resolve, reject) => {
    const fields: Fields = {};
    const files: Upload[] = [];
    let truncated = false;
    const bb = busboy({ headers: req.headers, limits: { fileSize: MAX_UPLOAD, fieldSize: MAX_UPLOAD } });
    // Data URIs come as text parts, so text parts get the file limit, not busboy's 1 MB.
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) truncated = true;
      const had = fields[name];
      fields[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
    });
    bb.on('file', (field, stream, info) => {
      const up: Upload = { field, mimeType: info.mimeType, size: 0 };
      files.push(up);
      stream.on('data', (c: Buffer) => (up.size += c.length));
      stream.on('limit', () => (truncated = true));
    });
    bb.on('error', reject);
    bb.on('close', () => (truncated ? reject(new Error('part too large')) : resolve({ fields, files })));
    bb.end(raw);
  });
}

/** The request body as fields and uploaded files; throws Invalid when it cannot be read. */
async function readBody(req: IncomingMessage, raw: Buffer): Promise<{ fields: Fields; files: Upload[] }> {
  if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data')) {
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
  return { fields: body as Fields, files: [] };
}

function text(fields: Fields, name: string, required: boolean): string | undefined {
  const v = fields[name];
  if (v === undefined || v === null) {
    if (required) throw new Invalid(`Missing required parameter: '${name}'.`, name, 'missing_required_parameter');
    return undefined;
  }
  if (typeof v !== 'string') throw new Invalid(`Invalid type for '${name}': expected a string, but got ${Array.isArray(v) ? 'an array' : typeof v} instead.`, name, 'invalid_type');
  if (required && v.trim() === '') throw new Invalid(`'${name}' must not be empty.`, name, 'invalid_value');
  return v;
}

function oneOf(name: string, value: string, allowed: readonly string[]): string {
  if (!allowed.includes(value)) throw new Invalid(`Invalid value: '${value}'. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, name, 'invalid_value');
  return value;
}

/** Checks a video create body; the normalised model, prompt and kept fields. */
function checkVideo(fields: Fields, files: Upload[]): { model: string; prompt: string; body: VideoBody } {
  const model = text(fields, 'model', true)!;
  const prompt = text(fields, 'prompt', true)!;
  const zeta = model.startsWith('zeta-');
  const seconds = text(fields, 'seconds', false) ?? '4';
  oneOf('seconds', seconds, zeta ? ['4', '8', '12'] : Array.from({ length: 20 }, (_, i) => String(i + 1)));
  const size = oneOf('size', text(fields, 'size', false) ?? '720x1280', zeta ? ZETA_SIZES : WIDE_SIZES);
  const ref = fields.input_reference;
  const refs = ref === undefined || ref === null ? [] : Array.isArray(ref) ? ref : [ref];
  for (const r of refs) {
    if (typeof r !== 'string' || !REF_TEXT.test(r)) throw new Invalid("Invalid 'input_reference': expected a file, an http(s) URL or a base64 data URI.", 'input_reference', 'invalid_value');
  }
  for (const f of files) {
    if (f.field !== 'input_reference') throw new Invalid(`Unexpected file field '${f.field}'.`, f.field, 'invalid_value');
    if (!REF_TYPES.includes(f.mimeType)) throw new Invalid(`Invalid file format for 'input_reference': ${f.mimeType}. Supported: ${REF_TYPES.join(', ')}.`, 'input_reference', 'invalid_value');
  }
  return { model, prompt, body: { seconds, size, references: refs.length + files.length, remixOf: null } };
}

/** Checks an image generation body. */
function checkImages(fields: Fields): { prompt: string; model: string; n: number; w: number; h: number; b64: boolean } {
  const prompt = text(fields, 'prompt', true)!;
  const model = text(fields, 'model', false) ?? 'zeta-image-1';
  const n = fields.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 10) throw new Invalid(`Invalid value for 'n': expected an integer from 1 to 10.`, 'n', 'invalid_value');
  const size = text(fields, 'size', false) ?? 'auto';
  const m = /^([0-9]{2,4})x([0-9]{2,4})$/.exec(size === 'auto' ? '1024x1024' : size);
  const w = Number(m?.[1] ?? 0);
  const h = Number(m?.[2] ?? 0);
  if (!m || w < 64 || h < 64 || w > 4096 || h > 4096) throw new Invalid(`Invalid value: '${size}'. Expected 'auto' or WIDTHxHEIGHT.`, 'size', 'invalid_value');
  const format = oneOf('response_format', text(fields, 'response_format', false) ?? 'url', ['url', 'b64_json']);
  const background = text(fields, 'background', false);
  if (background !== undefined) oneOf('background', background, ['auto', 'transparent', 'opaque']);
  const output = text(fields, 'output_format', false);
  if (output !== undefined) oneOf('output_format', output, ['png', 'jpeg', 'webp']);
  text(fields, 'quality', false);
  const image = fields.image;
  if (image !== undefined && typeof image !== 'string' && !(Array.isArray(image) && image.every((i) => typeof i === 'string'))) {
    throw new Invalid("Invalid type for 'image': expected a string or an array of strings.", 'image', 'invalid_type');
  }
  return { prompt, model, n, w, h, b64: format === 'b64_json' };
}

const sec = (ms: number) => Math.floor(ms / 1000);
/** The PNG of an image id; the id carries the seed and the pixel size, so nothing is stored. */
const imageBytes = (id: string, w: number, h: number) => makePng(w, h, parseInt(id.slice(4, 6), 16));

/** Starts a fake zeta-openai vendor (videos asynchronous, images synchronous); see the module comment. */
export async function startZetaOpenaiSimulator(opts: ZetaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-zeta-${randomBytes(6).toString('hex')}`;
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, downloads: 0, images: 0 };
  const clock = opts.clock ?? Date.now;
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  let base = '';

  function videoObject(task: SimTask): Record<string, unknown> {
    const { phase, progress } = tasks.state(task);
    const body = task.body as VideoBody;
    const status = { queued: 'queued', running: 'in_progress', stuck: 'in_progress', done: 'completed', failed: 'failed', odd: task.oddStatus }[phase];
    const ended = phase === 'done' || phase === 'failed';
    return {
      id: task.id, object: 'video', model: task.model, status, progress,
      created_at: sec(task.createdAt), completed_at: ended ? sec(task.finishAt) : null,
      expires_at: phase === 'done' ? sec(task.finishAt) + 86_400 : null,
      prompt: task.prompt, seconds: body.seconds, size: body.size, remixed_from_video_id: body.remixOf,
      error: phase === 'failed' ? { code: task.failReason, message: `Video generation failed: ${task.failReason}.` } : null,
    };
  }

  /** Answers normally after an optional fault; `answer` runs once, only when the answer is really sent. */
  async function reply(req: IncomingMessage, res: ServerResponse, url: URL, prompt: string, answer: () => unknown): Promise<void> {
    let made: unknown;
    const once = () => (made ??= answer());
    const fault = pickFault(req, url, prompt, faults);
    if (fault && (await applyFault(fault, res, (s) => zetaError(s), once))) return;
    json(res, 200, once());
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const path = url.pathname;
    const file = /^\/files\/(img_[0-9a-f]{16})_([0-9]{1,3})x([0-9]{1,3})\.png$/.exec(path);
    if (req.method === 'GET' && file) {
      stats.downloads++;
      return serveBytes(req, res, imageBytes(file[1]!, Number(file[2]), Number(file[3])), 'image/png');
    }
    const auth = req.headers.authorization;
    if (auth !== `Bearer ${key}`) {
      const message = auth ? 'Incorrect API key provided.' : "You didn't provide an API key. Provide it in the Authorization header (Bearer auth).";
      return json(res, 401, zetaError(401, message));
    }
    const video = /^\/v1\/videos\/([A-Za-z0-9_-]+)(\/content|\/remix)?$/.exec(path);
    const task = video ? tasks.get(video[1]!) : undefined;
    if (video && !task) return json(res, 404, zetaError(404, `Video '${video[1]}' not found.`, 'video_id'));
    try {
      if (req.method === 'POST' && path === '/v1/videos') {
        const { fields, files } = await readBody(req, raw);
        const v = checkVideo(fields, files);
        stats.submits++;
        return await reply(req, res, url, v.prompt, () => videoObject(tasks.create({ ...v, kind: 'create', prefix: 'video_' })));
      }
      if (req.method === 'GET' && task && !video![2]) {
        stats.queries++;
        task.polls++;
        return await reply(req, res, url, '', () => videoObject(task));
      }
      if (req.method === 'GET' && task && video![2] === '/content') {
        stats.downloads++;
        oneOf('variant', url.searchParams.get('variant') ?? 'video', ['video']);
        if (tasks.state(task).phase !== 'done') return json(res, 404, zetaError(404, 'Video is not ready yet; wait until its status is completed.', null, 'video_not_ready'));
        return serveBytes(req, res, makeMp4(task.id), 'video/mp4');
      }
      if (req.method === 'POST' && task && video![2] === '/remix') {
        const { fields } = await readBody(req, raw);
        const prompt = text(fields, 'prompt', true)!;
        if (tasks.state(task).phase !== 'done') throw new Invalid(`Video '${task.id}' is not completed; only completed videos can be remixed.`, 'video_id', 'invalid_value');
        const src = task.body as VideoBody;
        stats.submits++;
        const body: VideoBody = { ...src, references: 0, remixOf: task.id };
        return await reply(req, res, url, prompt, () => videoObject(tasks.create({ model: task.model, prompt, body, kind: 'remix', prefix: 'video_' })));
      }
      if (req.method === 'POST' && path === '/v1/images/generations') {
        const { fields } = await readBody(req, raw);
        const im = checkImages(fields);
        stats.images++;
        return await reply(req, res, url, im.prompt, () => imagesAnswer(im));
      }
    } catch (err) {
      if (err instanceof Invalid) return json(res, 400, zetaError(400, err.message, err.param, err.code));
      throw err;
    }
    json(res, 404, zetaError(404, `Invalid URL (${req.method} ${path}).`));
  }

  function imagesAnswer(im: ReturnType<typeof checkImages>): unknown {
    const w = Math.max(4, Math.round(im.w / 16));
    const h = Math.max(4, Math.round(im.h / 16));
    const data = Array.from({ length: im.n }, () => {
      const id = `img_${randomBytes(8).toString('hex')}`;
      const item = im.b64 ? { b64_json: imageBytes(id, w, h).toString('base64') } : { url: `${base}/files/${id}_${w}x${h}.png` };
      return { ...item, revised_prompt: im.prompt };
    });
    const input = Math.ceil(im.prompt.length / 4);
    return { created: sec(clock()), data, usage: { input_tokens: input, output_tokens: 1056 * im.n, total_tokens: input + 1056 * im.n } };
  }

  const server = await listen(handle, opts.port);
  base = server.url;
  return {
    profile: 'zeta-openai',
    url: server.url,
    secrets: { key },
    faults,
    stats,
    tasks,
    result(id: string, index = 0): Buffer | null {
      const task = tasks.get(id);
      return task && index === 0 && tasks.state(task).phase === 'done' ? makeMp4(task.id) : null;
    },
    close: server.close,
  };
}
