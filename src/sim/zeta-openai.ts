import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault, streamFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { group } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { Invalid, isMultipart, oneOf, readBody, text, zetaError } from './zeta-openai-body.js';
import { checkEdit, checkGeneration, imageFile, imagesAnswer, type ImageJob } from './zeta-openai-images.js';
import { sendImageStream } from './zeta-openai-stream.js';
import { checkVideo, VARIANTS, variantBytes, videoList, type VideoBody } from './zeta-openai-videos.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking zeta-openai (docs/spec/upstream-protocols.md): asynchronous videos and synchronous
 * images, streamed on request. Secret name `key`; auth `Authorization: Bearer KEY` on every route but
 * `/files/`. The official `openai` package (6.49.0) is the reference: what it sends is accepted, what
 * it documents is enforced, and every answer carries the fields its types require
 * (test/contract/openai-zeta.test.ts).
 *
 * Model lines: zeta-image-1 and zeta-image-2 are GPT-image-style, zeta-draw-3 and zeta-draw-2 the
 * dall-e-3 and dall-e-2 style, zeta-video-2 the default video model (the package's `sora-2`); the
 * epsilon line (`epsilon-` models) speaks the protocol with the extensions noted below.
 *
 * Routes:
 *   POST /v1/videos                 multipart/form-data (what the package sends) or JSON. Checked: `prompt`
 *                                   a required non-empty string; `model` default zeta-video-2; `seconds` a
 *                                   STRING, default "4": "4"|"8"|"12" (epsilon-: "1".."20"); `size` default
 *                                   "720x1280", one of 720x1280|1280x720|1024x1792|1792x1024 (epsilon-: also
 *                                   1920x1080|1080x1920); `input_reference` one file part (image/png|jpeg|webp,
 *                                   video/mp4; epsilon-: several), or one object `{image_url}` | `{file_id}`
 *                                   (JSON, or the parts `input_reference[image_url]` / `input_reference[file_id]`),
 *                                   never both. image_url is an http(s) URL or a base64 data URL of a PNG, JPEG
 *                                   or WebP; no file id is known (400 on input_reference.file_id); a string or
 *                                   an array of strings (the package sends neither) is 400 invalid_type.
 *                                   Answer 200: the video object.
 *   GET  /v1/videos/{id}            200 video object; 404 unknown id (code `video_not_found`).
 *   GET  /v1/videos                 200 the list envelope `{object: "list", data, first_id, last_id, has_more}`
 *                                   of the videos not deleted: `?order=desc` (default) newest first or `asc`,
 *                                   `?limit=` 0..100 (default 20), `?after=` the last id of the page before
 *                                   (unknown: 400 on `after`); other values 400.
 *   DELETE /v1/videos/{id}          200 `{id, object: "video.deleted", deleted: true}` for a completed or
 *                                   failed video, which is then gone (404); one under way 400 `invalid_value`.
 *   GET  /v1/videos/{id}/content    200 the MP4 (Range → 206/416); `?variant=thumbnail` a WebP at 1/16 of the
 *                                   video's size, `?variant=spritesheet` four such frames side by side (WebP,
 *                                   as OpenAI's specification types them: one colour); other variants 400.
 *                                   Needs the key. 404 (code `video_not_ready`) until completed; a failed
 *                                   video stays 404. No faults here.
 *   POST /v1/videos/{id}/remix      JSON `{prompt}` → 200 a new video object (model, seconds and size of the
 *                                   source, `remixed_from_video_id`); 404 unknown source, 400 source not completed.
 *   POST /v1/images/generations     JSON `{model, prompt (required), n, size, response_format (url|b64_json),
 *                                   quality (any string), background (auto|transparent|opaque), output_format
 *                                   (png|jpeg|webp), image (string or string array, not inspected)}`. No model:
 *                                   zeta-draw-2, or zeta-image-1 when a parameter only GPT image models take is
 *                                   given (background, moderation, output_compression, output_format,
 *                                   partial_images, stream, input_fidelity, quality low|medium|high), as the
 *                                   package documents. `stream` a boolean (default false), `partial_images`
 *                                   an integer 0..3 (default 0). A multipart body is read too (text parts;
 *                                   `n` and `partial_images` then decimal strings, `stream` "true"|"false").
 *   POST /v1/images/edits           multipart/form-data only (any other content type: 400, code null,
 *                                   "Invalid Content-Type header (…), expected multipart/form-data.").
 *                                   File parts: `image` (or `image[]`, as the package sends an array), 1..16
 *                                   of them, each image/png|jpeg|webp by its part's content type, not empty,
 *                                   ≤ 50 MB; zeta-draw-2 exactly one, image/png, ≤ 4 MB; `mask` at most one,
 *                                   image/png, ≤ 4 MB (its pixels and size are not compared with the image).
 *                                   A text part named image/image[]/mask: 400 invalid_type; any other file
 *                                   field: 400 invalid_value. Text parts `prompt` (required), `model` (default
 *                                   zeta-image-1), `n` (decimal string), `size`, `response_format`, `quality`,
 *                                   `background`, `output_format` as on generations; unknown text parts are
 *                                   ignored; `stream` "true"|"false" and `partial_images` "0".."3" as the
 *                                   package sends them. Models that edit: zeta-image-1, zeta-image-2, zeta-draw-2 and any
 *                                   non-`zeta-` model; zeta-draw-3 (and any other `zeta-` name) → 400
 *                                   invalid_value, param `model`.
 *                                 Both image routes, per model (the vendor takes only its official sizes;
 *                                   default "auto" where listed, else 1024x1024):
 *                                     zeta-image-1, zeta-image-2: auto|1024x1024|1536x1024|1024x1536
 *                                     zeta-draw-3: 1024x1024|1792x1024|1024x1792, and n must be 1
 *                                     zeta-draw-2: 256x256|512x512|1024x1024
 *                                     any other model: "auto" (default) or WxH with each side 64..4096
 *                                   Outside the list: 400 invalid_value, param `size`, "Invalid value:
 *                                   'X'. Supported values are: 'a', 'b', …". `n` 1..10 (1 for zeta-draw-3),
 *                                   default 1; a non-integer is invalid_type, out of range invalid_value.
 *                                   Answers, by line:
 *                                     GPT image: `response_format` in any value → 400 "Unknown parameter:
 *                                       'response_format'.", code unknown_parameter; always `b64_json`;
 *                                       `{created, background, data:[{b64_json}], output_format, quality,
 *                                       size, usage}`, no revised_prompt.
 *                                     dall-e style: `url` by default; `{created, data:[{url}|{b64_json}]}`,
 *                                       no usage; zeta-draw-3 adds each image's revised_prompt (the prompt).
 *                                     other lines: `url` by default; `{created, data:[…, revised_prompt on
 *                                       generations], usage}`.
 *                                   `usage` is `{input_tokens, input_tokens_details: {image_tokens,
 *                                   text_tokens}, output_tokens, total_tokens}`: text a quarter of the
 *                                   prompt's length, 272 image tokens per input image of an edit, 1056
 *                                   output tokens per image. Images are always PNGs of 1/16 the requested
 *                                   width and height ("auto" counts as 1024x1024), whatever output_format says
 *                                   (option `fullSizeImages`: inline ones at the asked size, random pixels).
 *                                 Streams (`stream: true`, both image routes; zeta-openai-stream.ts): only the
 *                                   GPT image models stream; any other model → 400 `unsupported_value`, param
 *                                   `stream` ("Unsupported value: 'stream' does not support true with this
 *                                   model. …"); n > 1 → 400 invalid_value, param `n` (a stream makes one
 *                                   image: its events carry no image index); partial_images outside 0..3 →
 *                                   400 invalid_value (a non-integer invalid_type), param `partial_images`.
 *                                   Answer 200 `text/event-stream`: `partial_images` events
 *                                   `image_generation.partial_image` (edits: `image_edit.partial_image`), then
 *                                   one `image_generation.completed` (`image_edit.completed`) with the image
 *                                   and usage of the JSON answer; OpenAI's ImageGenStreamEvent and
 *                                   ImageEditStreamEvent. One write per event, the next once the socket took
 *                                   it; a client that goes away ends the stream. Option `streamGapMs`: a
 *                                   wait between events.
 *   GET  /files/<id>.png            the image of a `url` answer; no auth (like a presigned URL), Range works.
 *
 * Video object: `{id:"video_<hex>", object:"video", model, status, progress, created_at, completed_at,
 * expires_at, prompt, seconds, size, remixed_from_video_id, error}`; times in Unix seconds, null until
 * known. Status `queued` → `in_progress` (progress 1–99) → `completed` | `failed` (with
 * `error:{code: <fail reason>, message}`, else `error:null`); `[sim:never]` stays `in_progress`,
 * `[sim:status=WORD]` reports WORD. `result(id, 0|1|2)` gives the bytes of the video, its thumbnail, its
 * spritesheet.
 *
 * Errors: `{"error":{"message","type","param","code"}}`. 400 `invalid_request_error` (code
 * `missing_required_parameter` | `invalid_type` | `invalid_value` | `unknown_parameter` | `unsupported_value` |
 * `invalid_json` | null, `param` the field); 401 (missing or wrong key) `invalid_request_error` / `invalid_api_key`; 404
 * `invalid_request_error` / null (`video_not_found` for an unknown video id on every /v1/videos/{id}
 * route, the vendor's own word that it does not know the video; `video_not_ready` on content); 429 `requests` / `rate_limit_exceeded`
 * (with `retry-after`); any 5xx `server_error` / `server_error`; other statuses `invalid_request_error` / null.
 * Faults (faults.ts) apply after auth and validation, on every route but downloads; the stream forms
 * (stream-stall, stream-cut, stream-error, stream-malformed) act inside an image stream, after its first
 * event, and are ignored on a JSON answer; errors before a stream (auth, validation, status faults) are
 * JSON with their status, as on any answer.
 * Stats: requests, submits (video creates and remixes), queries, downloads (content and files), images
 * (generations), edits; of image streams: streams (begun), events (written), blocked (streams now
 * waiting for their client to read), abandoned (streams the client left before their end).
 * Not simulated: per-model limits beyond these (the square shape of a dall-e-2 edit, mask dimensions,
 * gpt-image-2's own sizes and its refusal of transparent backgrounds), per-model quality/background/
 * output_format support, a final image sent before all its partial images (the vendor may; the
 * simulator always sends them all), `input_fidelity` and `user` (ignored like any unknown field),
 * the package's other video calls (edit, extend, characters).
 */

export { zetaError };

/** Options of the zeta-openai simulator. */
export interface ZetaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
  /** Milliseconds between two events of an image stream (default 0), so a client sees partial images come before the final one. */
  readonly streamGapMs?: number;
  /**
   * Inline (b64_json) images at the asked size with a photograph's weight (random pixels, a
   * 1536x1024 PNG about 4.7 MB) instead of 1/16-size gradients: for a benchmark or a backpressure
   * test that needs the vendor's real sizes. URL answers keep their small files.
   */
  readonly fullSizeImages?: boolean;
}

const sec = (ms: number) => Math.floor(ms / 1000);

/** Starts a fake zeta-openai vendor (videos asynchronous, images synchronous); see the module comment. */
export async function startZetaOpenaiSimulator(opts: ZetaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-zeta-${randomBytes(6).toString('hex')}`;
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, downloads: 0, images: 0, edits: 0, streams: 0, events: 0, blocked: 0, abandoned: 0 };
  const full = opts.fullSizeImages ?? false;
  const clock = opts.clock ?? Date.now;
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  let base = '';

  function videoObject(task: SimTask): Record<string, unknown> {
    const { phase, progress } = tasks.state(task);
    const body = task.body as VideoBody;
    const status = { queued: 'queued', running: 'in_progress', stuck: 'in_progress', done: 'completed', failed: 'failed', odd: task.oddStatus }[phase];
    const ended = phase === 'done' || phase === 'failed';
    return {
      id: task.id,
      object: 'video',
      model: task.model,
      status,
      progress,
      created_at: sec(task.createdAt),
      completed_at: ended ? sec(task.finishAt) : null,
      expires_at: phase === 'done' ? sec(task.finishAt) + 86_400 : null,
      prompt: task.prompt,
      seconds: body.seconds,
      size: body.size,
      remixed_from_video_id: body.remixOf,
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

  /**
   * An image answer: JSON, or with `stream` its events. A fault acting before an answer (a status,
   * a proxy page, a reset, …) acts on a stream as on JSON; a stream fault acts inside the stream.
   */
  async function answerImages(req: IncomingMessage, res: ServerResponse, url: URL, job: ImageJob): Promise<void> {
    const answer = () => imagesAnswer(job, base, sec(clock()), full);
    if (!job.stream) return reply(req, res, url, job.prompt, answer);
    const fault = pickFault(req, url, job.prompt, faults);
    const inside = streamFault(fault);
    if (fault && !inside && (await applyFault(fault, res, (s) => zetaError(s), answer))) return;
    stats.streams++;
    const end = await sendImageStream(res, job, answer(), { full, gapMs: opts.streamGapMs ?? 0, fault: inside, stats });
    if (end === 'gone') stats.abandoned++;
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
    const task = video ? tasks.get(group(video, 1)) : undefined;
    const action = video?.[2];
    if (video && !task) return json(res, 404, zetaError(404, `Video '${video[1]}' not found.`, 'video_id', 'video_not_found'));
    try {
      if (req.method === 'POST' && path === '/v1/videos') {
        const { fields, files } = await readBody(req, raw);
        const v = checkVideo(fields, files);
        stats.submits++;
        return await reply(req, res, url, v.prompt, () => videoObject(tasks.create({ ...v, kind: 'create', prefix: 'video_' })));
      }
      if (req.method === 'GET' && task && !action) {
        stats.queries++;
        task.polls++;
        return await reply(req, res, url, '', () => videoObject(task));
      }
      if (req.method === 'GET' && task && action === '/content') {
        stats.downloads++;
        const variant = oneOf('variant', url.searchParams.get('variant') ?? 'video', VARIANTS);
        if (tasks.state(task).phase !== 'done')
          return json(res, 404, zetaError(404, 'Video is not ready yet; wait until its status is completed.', null, 'video_not_ready'));
        if (variant === 'video') return serveBytes(req, res, makeMp4(task.id), 'video/mp4');
        return serveBytes(req, res, variantBytes(task, variant), 'image/webp');
      }
      if (req.method === 'GET' && path === '/v1/videos') {
        stats.queries++;
        return await reply(req, res, url, '', () => videoList(tasks.list(), url.searchParams, videoObject));
      }
      if (req.method === 'DELETE' && task && !action) {
        const { phase } = tasks.state(task);
        if (phase !== 'done' && phase !== 'failed')
          throw new Invalid(`Video '${task.id}' is still in progress; only completed or failed videos can be deleted.`, 'video_id', 'invalid_value');
        return await reply(req, res, url, '', () => {
          tasks.delete(task.id);
          return { id: task.id, object: 'video.deleted', deleted: true };
        });
      }
      if (req.method === 'POST' && task && action === '/remix') {
        const { fields } = await readBody(req, raw);
        const prompt = text(fields, 'prompt', true);
        if (tasks.state(task).phase !== 'done')
          throw new Invalid(`Video '${task.id}' is not completed; only completed videos can be remixed.`, 'video_id', 'invalid_value');
        const src = task.body as VideoBody;
        stats.submits++;
        const body: VideoBody = { ...src, references: 0, remixOf: task.id };
        return await reply(req, res, url, prompt, () => videoObject(tasks.create({ model: task.model, prompt, body, kind: 'remix', prefix: 'video_' })));
      }
      if (req.method === 'POST' && path === '/v1/images/generations') {
        const job = checkGeneration(await readBody(req, raw));
        stats.images++;
        return await answerImages(req, res, url, job);
      }
      if (req.method === 'POST' && path === '/v1/images/edits') {
        if (!isMultipart(req))
          throw new Invalid(`Invalid Content-Type header (${req.headers['content-type'] ?? 'none'}), expected multipart/form-data.`, null, null);
        const job = checkEdit(await readBody(req, raw));
        stats.edits++;
        return await answerImages(req, res, url, job);
      }
    } catch (err) {
      if (err instanceof Invalid) return json(res, 400, zetaError(400, err.message, err.param, err.code));
      throw err;
    }
    json(res, 404, zetaError(404, `Invalid URL (${req.method} ${path}).`));
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'zeta-openai',
    url: server.url,
    secrets: { key },
    faults,
    stats,
    tasks,
    /** Result 0 is the video, 1 its thumbnail, 2 its spritesheet (the `variant`s of the content route). */
    result(id: string, index = 0): Buffer | null {
      const task = tasks.get(id);
      if (!task || tasks.state(task).phase !== 'done') return null;
      const variant = VARIANTS[index];
      return variant === undefined ? null : variant === 'video' ? makeMp4(task.id) : variantBytes(task, variant);
    },
    targets: server.targets,
    traces: server.traces,
    close: server.close,
  };
}
