import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { dropOldest, group, must } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { makePng } from './png.js';
import { TaskBook, type SimTask } from './task-book.js';
import {
  ArkRefusal,
  arkError,
  checkAsset,
  checkImages,
  checkVideo,
  frameSize,
  parseBody,
  type AssetRequest,
  type ImageRequest,
  type VideoRequest,
} from './delta-ark-checks.js';

/**
 * A fake vendor speaking delta-ark (docs/spec/upstream-protocols.md): synchronous images, asynchronous video,
 * and assets referenced as `asset://<id>`. Secret name `key`; auth `Authorization: Bearer KEY` on every
 * route but `/files/`. Missing or wrong key: 401 `{error:{code:"AuthenticationError", message, param:"",
 * type:"Unauthorized"}}`.
 *
 * Errors are `{error:{code, message, param, type}}` (`param` the field, or ""):
 *   400 InvalidParameter/BadRequest (bad JSON, types, enums, ranges), 401 AuthenticationError/Unauthorized,
 *   403 AccessDenied/Forbidden, 404 ModelNotOpen/NotFound (model not in the route's list) and
 *   ResourceNotFound/NotFound (unknown task, asset or path), 429 RateLimitExceeded/TooManyRequests (with
 *   `retry-after`), 503 ServerOverloaded/ServiceUnavailable, 500 and other 5xx InternalServiceError/
 *   InternalServerError, other 4xx `Http<status>`.
 * Order: path (404) → auth (401) → JSON body (400) → checks (400/404) → fault (faults.ts) → answer.
 *
 * POST /api/v3/images/generations `{model, prompt, image, size, response_format, watermark, seed,
 *   sequential_image_generation, sequential_image_generation_options:{max_images}}`. Checked: model one of
 *   delta-img-4-0-250828 | delta-img-4-5-251128 | delta-img-5-0-260128 (else 404 ModelNotOpen); prompt a
 *   non-empty string; image a string or an array of 1..10 strings, each an http(s) URL or a data URI
 *   (image/png|jpeg|webp, ≤ 30 MB decoded); size "1K" | "2K" | "4K" (squares of 1024/2048/4096, default
 *   "2K") or "WxH" with W*H in [1024², 4096²] and W:H within 1:16..16:1; response_format url | b64_json
 *   (default url); watermark boolean; seed integer -1..2147483647; sequential_image_generation auto |
 *   disabled (default disabled: one image; auto: max_images images, integer 1..15, default 4; inputs plus
 *   outputs ≤ 15); `stream: true` is refused (not simulated). `[sim:fail]` in the prompt refuses the call
 *   with 400 OutputImageSensitiveContentDetected, `[sim:fail=R]` with code R.
 *   → 200 `{model, created_at, data:[{url, size:"WxH"} | {b64_json, size}], usage:{generated_images,
 *   output_tokens: W*H/256 per image, total_tokens}}`. `size` is the nominal size; the PNG itself is 1/16
 *   of it on each side (at least 4 px). URLs `/files/img-<hex>-<w>x<h>.png`.
 *
 * POST /api/v3/contents/generations/tasks `{model, content, resolution, ratio, duration, seed, watermark,
 *   generate_audio, return_last_frame, callback_url, execution_expires_after}` → 200 `{id:"cgt-<hex>"}`.
 *   Models: delta-vid-2-0-260128 and delta-vid-2-0-fast-260128 (duration 4..15, references allowed) and
 *   delta-vid-1-5-pro (duration 2..12, `resolution` required, no reference items); else 404 ModelNotOpen.
 *   content: non-empty array of `{type:"text",text}` (at most one) | `{type:"image_url",image_url:{url},role}`
 *   (role first_frame | last_frame | reference_image; a lone image without role is the first frame) |
 *   `{type:"video_url",video_url:{url},role:"reference_video"}` | `{type:"audio_url",audio_url:{url},
 *   role:"reference_audio"}` (role may be left out). URLs: http(s), a data URI of the item's kind (image/png|
 *   jpeg|webp, video/mp4, audio/mpeg|wav; ≤ 30 MB) or `asset://<id>` of an asset held here of the same type.
 *   Rules: ≤ 1 first_frame and ≤ 1 last_frame; last_frame needs first_frame; frames and reference items do
 *   not mix; ≤ 4 reference_image, ≤ 3 reference_video, ≤ 3 reference_audio; text required unless there is
 *   an image. resolution 480p | 720p | 1080p (default 720p); ratio 16:9 9:16 1:1 4:3 3:4 21:9 adaptive
 *   (default adaptive with a first frame, else 16:9); duration integer (default 5); seed integer
 *   -1..4294967295; watermark, generate_audio, return_last_frame booleans; callback_url an http(s) URL
 *   (never called); execution_expires_after integer seconds 3600..259200 (default 172800).
 *   Markers `[sim:…]` (task-book.ts) are read from the text item.
 * GET /api/v3/contents/generations/tasks/{id} → 200 `{id, model, status, error?, content?, usage:
 *   {completion_tokens, total_tokens}, created_at, updated_at, seed, resolution, ratio, duration}` (times in
 *   Unix seconds). status: queued → running → succeeded (adds `content:{video_url}` and, when
 *   return_last_frame was true, `last_frame_url`; usage W*H*24*duration/1024, else 0) | failed (`error:
 *   {code, message}`, code OutputVideoSensitiveContentDetected for `[sim:fail]`, R for `[sim:fail=R]`) |
 *   cancelled | expired (still unfinished execution_expires_after seconds after creation, e.g. with
 *   `[sim:never]`); `[sim:status=WORD]` reports WORD. `error` is there only when failed. An unset or -1 seed is
 *   reported as a seed derived from the id; "adaptive" is reported as the ratio used, 16:9.
 *   Unknown (or deleted) id → 404 ResourceNotFound.
 * DELETE /api/v3/contents/generations/tasks/{id} → 200 `{}`: a queued task becomes cancelled; an ended one
 *   (succeeded, failed, cancelled, expired) is deleted. A running task (or one with an odd status) is refused
 *   400 InvalidParameter.
 *
 * POST /api/v3/assets `{type: image|video|audio, url?: http(s) URL (not fetched), data?: data URI of the
 *   type's media (≤ 30 MB decoded), name?: ≤ 256 chars}` with exactly one of url/data → 200 `{id:"asset-<hex>",
 *   type, name (or null), status:"active", created_at}`. GET /api/v3/assets/{id} → the same object; 404
 *   ResourceNotFound when unknown. At most 10,000 assets are kept (the oldest are forgotten).
 *
 * Files (GET/HEAD, no auth, Range → 206/416, no faults): `/files/<task id>.mp4` (= `result(id, 0)`),
 * `/files/<task id>-last.png` (= `result(id, 1)`, the last frame at 1/16 of the frame size) once succeeded,
 * else 404; `/files/img-<hex>-<w>x<h>.png` (= `result("img-<hex>-<w>x<h>")`).
 * Stats: requests, images, submits, queries, cancels, assets, downloads.
 * Not simulated: streaming images, calling callback_url, fetching asset URLs, deleting assets, task listing,
 * text commands in the prompt (`--rs` and the like).
 */

/** Options of the delta-ark simulator. */
export interface DeltaArkSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const MAX_ASSETS = 10_000;
const TASKS = '/api/v3/contents/generations/tasks';
const IMAGE_FILE = /^(img-[0-9a-f]{16})-([0-9]{1,4})x([0-9]{1,4})$/;
const FAIL = /\[sim:fail(?:=([A-Za-z0-9_-]{1,64}))?\]/;
const sec = (ms: number) => Math.floor(ms / 1000);

/** The PNG of an image id (`img-<hex>-<w>x<h>`); the id carries seed and size, so nothing is stored. */
function imageBytes(id: string): Buffer | null {
  const m = IMAGE_FILE.exec(id);
  const w = Number(m?.[2] ?? 0);
  const h = Number(m?.[3] ?? 0);
  return m && w >= 1 && h >= 1 && w <= 1024 && h <= 1024 ? makePng(w, h, parseInt(group(m, 1).slice(4, 6), 16)) : null;
}

/** Starts a fake delta-ark vendor (images synchronous, video asynchronous, assets); see the module comment. */
export async function startDeltaArkSimulator(opts: DeltaArkSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-delta-${randomBytes(6).toString('hex')}`;
  const clock = opts.clock ?? Date.now;
  const faults: string[] = [];
  const stats = { requests: 0, images: 0, submits: 0, queries: 0, cancels: 0, assets: 0, downloads: 0 };
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  const cancelled = new Map<string, number>();
  const deleted = new Set<string>();
  const assets = new Map<string, { id: string; type: string; name: string | null; status: string; created_at: number }>();
  let base = '';

  const task = (id: string): SimTask | undefined => (deleted.has(id) ? undefined : tasks.get(id));

  /** The vendor status word of a task now, and when it last changed (ms). */
  function status(t: SimTask): { word: string; updated: number } {
    const at = cancelled.get(t.id);
    if (at !== undefined) return { word: 'cancelled', updated: at };
    const { phase } = tasks.state(t);
    if (phase === 'odd') return { word: must(t.oddStatus, 'odd status'), updated: t.createdAt };
    const expiry = t.createdAt + (t.body as VideoRequest).expiresAfterS * 1000;
    if (clock() >= expiry && (t.never || t.finishAt > expiry)) return { word: 'expired', updated: expiry };
    const started = t.createdAt + Math.floor(Math.max(1, t.finishAt - t.createdAt) / 3);
    const words = {
      queued: ['queued', t.createdAt],
      running: ['running', started],
      stuck: ['running', started],
      done: ['succeeded', t.finishAt],
      failed: ['failed', t.finishAt],
    } as const;
    const [word, updated] = words[phase];
    return { word, updated };
  }

  function taskView(t: SimTask): unknown {
    const v = t.body as VideoRequest;
    const { word, updated } = status(t);
    const ratio = v.ratio === 'adaptive' ? '16:9' : v.ratio;
    const { width, height } = frameSize(v.resolution, ratio);
    const tokens = word === 'succeeded' ? Math.floor((width * height * 24 * v.duration) / 1024) : 0;
    const reason = t.failReason === 'generation_failed' ? 'OutputVideoSensitiveContentDetected' : t.failReason;
    const view: Record<string, unknown> = {
      id: t.id,
      model: t.model,
      status: word,
    };
    // The SDK types `error` as an object, not Optional (content_generation_task.py): present only on a failure.
    if (word === 'failed') view.error = { code: reason, message: `The video generation failed: ${reason}.` };
    if (word === 'succeeded')
      view.content = { video_url: `${base}/files/${t.id}.mp4`, ...(v.returnLastFrame ? { last_frame_url: `${base}/files/${t.id}-last.png` } : {}) };
    Object.assign(view, {
      usage: { completion_tokens: tokens, total_tokens: tokens },
      created_at: sec(t.createdAt),
      updated_at: sec(updated),
      seed: v.seed ?? parseInt(t.id.slice(-8), 16),
      resolution: v.resolution,
      ratio,
      duration: v.duration,
    });
    return view;
  }

  /** The bytes of result `index` of a task (0 video, 1 last frame), or of an image id; null when there are none. */
  function result(id: string, index = 0): Buffer | null {
    if (id.startsWith('img-')) return index === 0 ? imageBytes(id) : null;
    const t = task(id);
    if (!t || status(t).word !== 'succeeded') return null;
    const v = t.body as VideoRequest;
    if (index === 0) return makeMp4(t.id);
    if (index !== 1 || !v.returnLastFrame) return null;
    const { width, height } = frameSize(v.resolution, v.ratio);
    return makePng(Math.round(width / 16), Math.round(height / 16), parseInt(t.id.slice(4, 6), 16));
  }

  /** Answers normally after an optional fault; `answer` runs once, only when the answer is really sent. */
  async function reply(req: IncomingMessage, res: ServerResponse, url: URL, prompt: string, answer: () => unknown): Promise<void> {
    let made: unknown;
    const once = () => (made ??= answer());
    const fault = pickFault(req, url, prompt, faults);
    if (fault && (await applyFault(fault, res, (s) => arkError(s), once))) return;
    json(res, 200, once());
  }

  function imagesAnswer(im: ImageRequest): unknown {
    const w = Math.max(4, Math.round(im.width / 16));
    const h = Math.max(4, Math.round(im.height / 16));
    const data = Array.from({ length: im.count }, () => {
      const id = `img-${randomBytes(8).toString('hex')}-${w}x${h}`;
      const item = im.b64 ? { b64_json: must(imageBytes(id), `image ${id}`).toString('base64') } : { url: `${base}/files/${id}.png` };
      return { ...item, size: `${im.width}x${im.height}` };
    });
    const tokens = im.count * Math.floor((im.width * im.height) / 256);
    return { model: im.model, created_at: sec(clock()), data, usage: { generated_images: im.count, output_tokens: tokens, total_tokens: tokens } };
  }

  function createAsset(a: AssetRequest): unknown {
    const asset = { id: `asset-${randomBytes(10).toString('hex')}`, type: a.type, name: a.name, status: 'active', created_at: sec(clock()) };
    assets.set(asset.id, asset);
    if (assets.size > MAX_ASSETS) dropOldest(assets);
    return asset;
  }

  /** Checks a cancel request; the action to take once the answer is sent. */
  function cancel(t: SimTask): () => unknown {
    const word = status(t).word;
    if (word === 'queued') return () => (cancelled.set(t.id, clock()), {});
    if (['succeeded', 'failed', 'cancelled', 'expired'].includes(word)) {
      return () => {
        deleted.add(t.id);
        if (deleted.size > 200_000) dropOldest(deleted);
        return {};
      };
    }
    throw new ArkRefusal(400, `The task ${t.id} is ${word} and cannot be cancelled or deleted.`, 'id');
  }

  function serveFile(req: IncomingMessage, res: ServerResponse, name: string): void {
    const m = /^(.+?)(-last)?\.(mp4|png)$/.exec(name);
    const id = m ? group(m, 1) : '';
    const image = m?.[3] === 'png' && !m[2] && id.startsWith('img-');
    const bytes = !m ? null : image ? result(id) : m[3] === (m[2] ? 'png' : 'mp4') ? result(id, m[2] ? 1 : 0) : null;
    if (!m || !bytes) {
      json(res, 404, arkError(404, 'The specified file does not exist.'));
      return;
    }
    stats.downloads++;
    serveBytes(req, res, bytes, m[3] === 'mp4' ? 'video/mp4' : 'image/png');
  }

  async function route(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const one = /^\/api\/v3\/(contents\/generations\/tasks|assets)\/([^/]+)$/.exec(path);
    const known =
      (method === 'POST' && (path === '/api/v3/images/generations' || path === TASKS || path === '/api/v3/assets')) ||
      (one !== null && (method === 'GET' || (method === 'DELETE' && one[1] !== 'assets')));
    if (!known) return json(res, 404, arkError(404, `The requested path ${method} ${path} was not found.`));
    if (req.headers.authorization !== `Bearer ${key}`) return json(res, 401, arkError(401));

    if (path === '/api/v3/images/generations') {
      stats.images++;
      const im = checkImages(parseBody(raw));
      const fail = FAIL.exec(im.prompt);
      if (fail) throw new ArkRefusal(400, 'The generated image may contain sensitive content.', '', fail[1] ?? 'OutputImageSensitiveContentDetected');
      return reply(req, res, url, im.prompt, () => imagesAnswer(im));
    }
    if (path === TASKS) {
      stats.submits++;
      const { model, video } = checkVideo(parseBody(raw), (id) => assets.get(id));
      return reply(req, res, url, video.prompt, () => ({ id: tasks.create({ model, prompt: video.prompt, body: video, kind: model, prefix: 'cgt-' }).id }));
    }
    if (path === '/api/v3/assets') {
      stats.assets++;
      const a = checkAsset(parseBody(raw));
      return reply(req, res, url, '', () => createAsset(a));
    }
    const item = must(one, `task or asset in ${path}`);
    const id = decodeURIComponent(group(item, 2));
    if (item[1] === 'assets') {
      const asset = assets.get(id);
      if (!asset) throw new ArkRefusal(404, `The asset ${id} was not found.`, 'id');
      return reply(req, res, url, '', () => asset);
    }
    const t = task(id);
    if (!t) throw new ArkRefusal(404, `The task ${id} was not found.`, 'id');
    if (method === 'DELETE') {
      stats.cancels++;
      return reply(req, res, url, '', cancel(t));
    }
    stats.queries++;
    t.polls++;
    return reply(req, res, url, '', () => taskView(t));
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const file = /^\/files\/([A-Za-z0-9-]+\.(?:mp4|png))$/.exec(url.pathname);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) return serveFile(req, res, group(file, 1));
    try {
      await route(req, res, raw, url);
    } catch (err) {
      if (!(err instanceof ArkRefusal)) throw err;
      json(res, err.status, arkError(err.status, err.message, err.code, err.param));
    }
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'delta-ark',
    url: server.url,
    secrets: { key },
    faults,
    stats,
    tasks,
    result,
    targets: server.targets,
    traces: server.traces,
    close: server.close,
  };
}
