import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { makeMp4, serveBytes } from './media.js';
import { Invalid, isMultipart, oneOf, readBody, text, zetaError, type Fields, type Upload } from './zeta-openai-body.js';
import { checkEdit, checkGeneration, imageFile, imagesAnswer } from './zeta-openai-images.js';
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
 *   GET  /v1/videos/{id}            200 video object; 404 unknown id (code `video_not_found`).
 *   GET  /v1/videos/{id}/content    200 the MP4 (Range → 206/416), `?variant=video` only (other variants
 *                                   400). Needs the key. 404 (code `video_not_ready`) until completed; a
 *                                   failed video stays 404. No faults here.
 *   POST /v1/videos/{id}/remix      JSON `{prompt}` → 200 a new video object (model, seconds and size of the
 *                                   source, `remixed_from_video_id`); 404 unknown source, 400 source not completed.
 *   POST /v1/images/generations     JSON `{model (default zeta-image-1), prompt (required), n, size,
 *                                   response_format (url|b64_json, default url), quality (any string),
 *                                   background (auto|transparent|opaque), output_format (png|jpeg|webp),
 *                                   image (string or string array, not inspected)}` → 200 `{created,
 *                                   data:[{url}|{b64_json}, revised_prompt], usage}`. A multipart body is
 *                                   read too (text parts; `n` then a decimal string), as before.
 *   POST /v1/images/edits           multipart/form-data only (any other content type: 400, code null,
 *                                   "Invalid Content-Type header (…), expected multipart/form-data.").
 *                                   File parts: `image` (or `image[]`), 1..16 of them, each image/png|jpeg|
 *                                   webp by its part's content type, not empty, ≤ 25 MB; `mask` at most
 *                                   one, image/png, ≤ 25 MB (its pixels and size are not compared with the
 *                                   image). A text part named image/image[]/mask: 400 invalid_type; any
 *                                   other file field: 400 invalid_value. Text parts `prompt` (required),
 *                                   `model` (default zeta-image-1), `n` (decimal string), `size`,
 *                                   `response_format`, `quality`, `background`, `output_format` as on
 *                                   generations; unknown text parts are ignored. Models that edit:
 *                                   zeta-image-1, zeta-image-2, zeta-draw-2 and any non-`zeta-` model;
 *                                   zeta-draw-3 (and any other `zeta-` name) → 400 invalid_value, param
 *                                   `model`. → 200 `{created, data:[{url}|{b64_json}], usage}` (no
 *                                   revised_prompt). Every input image adds 272 to usage.input_tokens.
 *                                 Both image routes, per model (the vendor takes only its official sizes;
 *                                   default "auto" where listed, else 1024x1024):
 *                                     zeta-image-1, zeta-image-2: auto|1024x1024|1536x1024|1024x1536
 *                                     zeta-draw-3: 1024x1024|1792x1024|1024x1792, and n must be 1
 *                                     zeta-draw-2: 256x256|512x512|1024x1024
 *                                     any other model: "auto" (default) or WxH with each side 64..4096
 *                                   Outside the list: 400 invalid_value, param `size`, "Invalid value:
 *                                   'X'. Supported values are: 'a', 'b', …". `n` 1..10 (1 for zeta-draw-3),
 *                                   default 1; a non-integer is invalid_type, out of range invalid_value.
 *                                   Answers are always PNGs of 1/16 the requested width and height ("auto"
 *                                   counts as 1024x1024), whatever output_format says; usage.output_tokens
 *                                   is 1056 per image, input_tokens a quarter of the prompt's length.
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
 * `invalid_request_error` / null (`video_not_found` for an unknown video id on every /v1/videos/{id}
 * route, the vendor's own word that it does not know the video; `video_not_ready` on content); 429 `requests` / `rate_limit_exceeded`
 * (with `retry-after`); any 5xx `server_error` / `server_error`; other statuses `invalid_request_error` / null.
 * Faults (faults.ts) apply after auth and validation, on every route but downloads.
 * Stats: requests, submits (video creates and remixes), queries, downloads (content and files), images
 * (generations), edits.
 * Not simulated: per-model limits beyond these (file count or square shape per model, mask dimensions),
 * per-model quality/background/output_format support, streaming (`stream`, `partial_images`),
 * `input_fidelity` and `user` (ignored like any unknown field).
 */

export { zetaError };

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

/** What a video task keeps of its submit body. */
interface VideoBody {
  seconds: string;
  size: string;
  references: number;
  remixOf: string | null;
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

const sec = (ms: number) => Math.floor(ms / 1000);

/** Starts a fake zeta-openai vendor (videos asynchronous, images synchronous); see the module comment. */
export async function startZetaOpenaiSimulator(opts: ZetaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-zeta-${randomBytes(6).toString('hex')}`;
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, downloads: 0, images: 0, edits: 0 };
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
    const file = req.method === 'GET' ? imageFile(path) : null;
    if (file) {
      stats.downloads++;
      return serveBytes(req, res, file, 'image/png');
    }
    const auth = req.headers.authorization;
    if (auth !== `Bearer ${key}`) {
      const message = auth ? 'Incorrect API key provided.' : "You didn't provide an API key. Provide it in the Authorization header (Bearer auth).";
      return json(res, 401, zetaError(401, message));
    }
    const video = /^\/v1\/videos\/([A-Za-z0-9_-]+)(\/content|\/remix)?$/.exec(path);
    const task = video ? tasks.get(video[1]!) : undefined;
    if (video && !task) return json(res, 404, zetaError(404, `Video '${video[1]}' not found.`, 'video_id', 'video_not_found'));
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
        const job = checkGeneration(await readBody(req, raw));
        stats.images++;
        return await reply(req, res, url, job.prompt, () => imagesAnswer(job, base, sec(clock())));
      }
      if (req.method === 'POST' && path === '/v1/images/edits') {
        if (!isMultipart(req)) throw new Invalid(`Invalid Content-Type header (${req.headers['content-type'] ?? 'none'}), expected multipart/form-data.`, null, null);
        const job = checkEdit(await readBody(req, raw));
        stats.edits++;
        return await reply(req, res, url, job.prompt, () => imagesAnswer(job, base, sec(clock())));
      }
    } catch (err) {
      if (err instanceof Invalid) return json(res, 400, zetaError(400, err.message, err.param, err.code));
      throw err;
    }
    json(res, 404, zetaError(404, `Invalid URL (${req.method} ${path}).`));
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
    targets: server.targets, traces: server.traces, close: server.close,
  };
}
