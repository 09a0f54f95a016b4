import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { group } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { makePng } from './png.js';
import { TaskBook, type SimPhase, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking beta-native (docs/spec/upstream-protocols.md), asynchronous reference-to-video and friends.
 *
 * Auth: header `Authorization: Token KEY` (secret name `key`). Missing or wrong: HTTP 401
 * `{"err_code":401,"reason":"Unauthorized","message":"invalid token"}`. Checked after the path, before the body.
 *
 * Paths:
 *   POST /ent/v2/reference2video | /ent/v2/text2video | /ent/v2/img2video | /ent/v2/start-end2video  (task.kind = the last segment)
 *   GET  /ent/v2/tasks/{id}/creations
 *   GET  /files/{id}.mp4 | /files/{id}.wm.mp4 | /files/{id}.cover.png ?expires=&sig=   (no key: presigned-style URLs)
 *
 * Submit body checks (400 on failure): a JSON object, at most 20 MB (413 beyond); `model` required, one of
 * betaq3-pro, betaq2-pro, betaq2-turbo, betaq2-pro-fast, betaq1, betaq1-classic, beta2.0, beta-q3-pro, beta-q3-turbo;
 * reference2video, in either of the vendor's two documented forms (never both): with subjects, `subjects` a
 * non-empty array, each `{id: non-empty string, unique, images: 1..3 images}`, at most 7 images over all subjects;
 * without subjects, `images` 1..7 images (1..3 for beta2.0, as the document says of its 2.0 model);
 * img2video: `images` exactly 1 image; start-end2video: `images` exactly 2; text2video: `prompt` non-empty.
 * An image is an http(s) URL or `data:image/(png|jpeg|jpg|webp);base64,…` (raw base64 is refused, section 8).
 * When present: `prompt` string, `duration` integer 1..10 (default 5), `resolution` 540p|720p|1080p (default 720p),
 * `seed` any integer (0 or absent: a random seed is chosen; the document states no range, so a negative seed is
 * that seed), `audio`/`is_rec`/`bgm`/`off_peak`/`watermark` booleans, `wm_position` integer 1..4,
 * `payload`/`meta_data`/`voice_id`/`callback_url` strings.
 * The `[sim:…]` markers are read from `prompt`.
 *
 * Submit answer (200): `{task_id, state:"created", model, prompt, images?, duration, seed, resolution,
 * aspect_ratio?, movement_amplitude?, payload, off_peak, credits, created_at}`; created_at in Unix seconds;
 * credits = duration × (540p 2, 720p 4, 1080p 8).
 *
 * Query answer (200): `{id, state, err_code, credits, payload, creations}`. state: `created` on the first query of
 * a queued task, `queueing` on later ones, `processing` while running (and for ever with `[sim:never]`), `success`,
 * `failed`, or the `[sim:status=WORD]` word. No progress figure. err_code: "" unless failed, then the fail reason
 * (`generation_failed` or the `[sim:fail=TEXT]` text). credits: 0 once failed (refunded). creations: [] until
 * success, then `[{id, url, cover_url, watermarked_url}]`: url and watermarked_url are MP4s, cover_url a PNG,
 * each signed and valid for a day (a wrong `sig` or a past `expires` answers 403). Result index 0 = `url`, 1 = `cover_url`.
 * Unknown task id: 404 `{"err_code":404,"reason":"TaskNotFound",…}`.
 *
 * Error body, every status: `{"err_code": <HTTP status>, "reason": WORD, "message": text}` with reason
 * 400 BadRequest, 401 Unauthorized, 403 Forbidden, 404 NotFound, 413 RequestEntityTooLarge, 429 TooManyRequests,
 * 500 InternalServerError, 503 ServiceUnavailable, 504 GatewayTimeout. Faults (faults.ts) apply to submits and queries.
 */

/** Options of the beta-native simulator. */
export interface BetaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const MODELS = new Set(['betaq3-pro', 'betaq2-pro', 'betaq2-turbo', 'betaq2-pro-fast', 'betaq1', 'betaq1-classic', 'beta2.0', 'beta-q3-pro', 'beta-q3-turbo']);
const SUBMIT = /^\/ent\/v2\/(reference2video|text2video|img2video|start-end2video)$/;
const QUERY = /^\/ent\/v2\/tasks\/([A-Za-z0-9_-]+)\/creations$/;
const FILE = /^\/files\/([A-Za-z0-9_-]+)\.(mp4|wm\.mp4|cover\.png)$/;
const IMAGE = /^(https?:\/\/[^\s]+|data:image\/(png|jpeg|jpg|webp);base64,[A-Za-z0-9+/]+={0,2})$/;
const CREDITS_PER_SECOND: Record<string, number> = { '540p': 2, '720p': 4, '1080p': 8 };
const MAX_BODY = 20 * 1024 * 1024;
const URL_TTL_S = 86_400;
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  413: 'RequestEntityTooLarge',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};
const MESSAGES: Record<number, string> = {
  429: 'too many requests, please retry later',
  500: 'internal server error',
  503: 'service unavailable, please retry later',
};

/** The vendor's error body for a status (see the simulator's doc comment). */
export function betaError(status: number, message?: string, reason?: string): unknown {
  return {
    err_code: status,
    reason: reason ?? REASONS[status] ?? (status >= 500 ? 'InternalServerError' : 'BadRequest'),
    message: message ?? MESSAGES[status] ?? `simulated error ${status}`,
  };
}

type Body = Record<string, unknown>;

function isObject(v: unknown): v is Body {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkImages(images: unknown, min: number, max: number, field: string): string | null {
  if (!Array.isArray(images)) return `${field} is required`;
  if (images.length < min || images.length > max) {
    return min === max ? `${field} must contain exactly ${min} image(s)` : `${field} must contain ${min} to ${max} images`;
  }
  for (const [i, img] of images.entries()) {
    if (typeof img !== 'string' || !IMAGE.test(img)) {
      return `${field}[${i}] must be an http(s) URL or data:image/<png|jpeg|jpg|webp>;base64,<data>`;
    }
  }
  return null;
}

/** The subject form of reference2video: the vendor's 400 message, or null when the subjects are acceptable. */
function checkSubjects(subjects: unknown): string | null {
  if (!Array.isArray(subjects) || subjects.length === 0) return 'subjects is required (or images, for a call without subjects)';
  const ids = new Set<string>();
  let total = 0;
  for (const [i, s] of subjects.entries()) {
    if (!isObject(s) || typeof s.id !== 'string' || s.id === '') return `subjects[${i}].id is required`;
    if (ids.has(s.id)) return `subjects[${i}].id ${s.id} is duplicated`;
    ids.add(s.id);
    const bad = checkImages(s.images, 1, 3, `subjects[${i}].images`);
    if (bad) return bad;
    total += (s.images as unknown[]).length;
    if (s.voice_id !== undefined && typeof s.voice_id !== 'string') return `subjects[${i}].voice_id must be a string`;
  }
  return total > 7 ? `subjects: at most 7 images over all subjects (${total} given)` : null;
}

/** The vendor's 400 message for a submit body of `kind`, or null when it is acceptable. */
function validate(kind: string, b: Body): string | null {
  if (typeof b.model !== 'string' || b.model === '') return 'model is required';
  if (!MODELS.has(b.model)) return `model ${b.model} is not supported`;
  if (b.prompt !== undefined && typeof b.prompt !== 'string') return 'prompt must be a string';
  if (kind === 'text2video' && (typeof b.prompt !== 'string' || b.prompt.trim() === '')) return 'prompt is required';
  if (kind === 'reference2video') {
    if (b.subjects !== undefined && b.images !== undefined) return 'reference2video takes either subjects or images, not both';
    // The non-subject call of the vendor's document: the images themselves are the references.
    const bad = b.images !== undefined ? checkImages(b.images, 1, b.model === 'beta2.0' ? 3 : 7, 'images') : checkSubjects(b.subjects);
    if (bad) return bad;
  }
  if (kind === 'img2video' || kind === 'start-end2video') {
    const n = kind === 'img2video' ? 1 : 2;
    const bad = checkImages(b.images, n, n, 'images');
    if (bad) return bad;
  }
  if (b.duration !== undefined && !(Number.isInteger(b.duration) && (b.duration as number) >= 1 && (b.duration as number) <= 10)) {
    return 'duration must be an integer from 1 to 10';
  }
  if (b.resolution !== undefined && !(typeof b.resolution === 'string' && b.resolution in CREDITS_PER_SECOND)) {
    return 'resolution must be one of 540p, 720p, 1080p';
  }
  if (b.seed !== undefined && !Number.isInteger(b.seed)) return 'seed must be an integer';
  for (const f of ['audio', 'is_rec', 'bgm', 'off_peak', 'watermark']) {
    if (b[f] !== undefined && typeof b[f] !== 'boolean') return `${f} must be a boolean`;
  }
  for (const f of ['payload', 'meta_data', 'voice_id', 'callback_url', 'wm_url', 'aspect_ratio', 'movement_amplitude']) {
    if (b[f] !== undefined && typeof b[f] !== 'string') return `${f} must be a string`;
  }
  if (b.wm_position !== undefined && ![1, 2, 3, 4].includes(b.wm_position as number)) return 'wm_position must be 1, 2, 3 or 4';
  return null;
}

function settings(b: Body): { duration: number; resolution: string; credits: number } {
  const duration = (b.duration as number | undefined) ?? 5;
  const resolution = (b.resolution as string | undefined) ?? '720p';
  return { duration, resolution, credits: duration * (CREDITS_PER_SECOND[resolution] ?? 4) };
}

/** The vendor's state word for a task's phase; the first look at a queued task still says `created`. */
function stateWord(task: SimTask, phase: SimPhase): string {
  switch (phase) {
    case 'queued':
      return task.polls <= 1 ? 'created' : 'queueing';
    case 'running':
    case 'stuck':
      return 'processing';
    case 'done':
      return 'success';
    case 'failed':
      return 'failed';
    case 'odd':
      return task.oddStatus ?? 'processing';
  }
}

/**
 * Starts a fake beta-native vendor: four submit kinds, the creations query, signed result URLs with Range
 * support, the vendor's validation and every fault of faults.ts. See the doc comment above for the wire contract.
 */
export async function startBetaSimulator(opts: BetaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-beta-${randomBytes(6).toString('hex')}`;
  const clock = opts.clock ?? Date.now;
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  const urlSecret = randomBytes(16);
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0 };
  let base = '';

  const sign = (path: string, expires: number) => createHmac('sha256', urlSecret).update(`${path}:${expires}`).digest('hex').slice(0, 32);
  function fileUrl(path: string): string {
    const expires = Math.floor(clock() / 1000) + URL_TTL_S;
    return `${base}${path}?expires=${expires}&sig=${sign(path, expires)}`;
  }

  function bytesOf(task: SimTask, variant: string): Buffer {
    if (variant === 'mp4') return makeMp4(task.id);
    if (variant === 'wm.mp4') return makeMp4(`${task.id}:watermarked`);
    return makePng(32, 18, createHash('sha256').update(task.id).digest().readUInt8(0));
  }

  function creations(task: SimTask): unknown {
    const { phase } = tasks.state(task);
    const body = task.body as Body;
    const done = phase === 'done';
    return {
      id: task.id,
      state: stateWord(task, phase),
      err_code: phase === 'failed' ? (task.failReason ?? 'generation_failed') : '',
      credits: phase === 'failed' ? 0 : settings(body).credits,
      payload: body.payload ?? '',
      creations: done
        ? [
            {
              id: `${task.id}-0`,
              url: fileUrl(`/files/${task.id}.mp4`),
              cover_url: fileUrl(`/files/${task.id}.cover.png`),
              watermarked_url: fileUrl(`/files/${task.id}.wm.mp4`),
            },
          ]
        : [],
    };
  }

  function serveFile(req: IncomingMessage, res: ServerResponse, url: URL, id: string, variant: string): void {
    const expires = Number(url.searchParams.get('expires'));
    const given = Buffer.from(url.searchParams.get('sig') ?? '');
    const want = Buffer.from(sign(url.pathname, expires));
    if (given.length !== want.length || !timingSafeEqual(given, want) || expires < clock() / 1000) {
      json(res, 403, betaError(403, 'signature mismatch or URL expired'));
      return;
    }
    const task = tasks.get(id);
    if (!task || tasks.state(task).phase !== 'done') {
      json(res, 404, betaError(404, 'file not found'));
      return;
    }
    serveBytes(req, res, bytesOf(task, variant), variant === 'cover.png' ? 'image/png' : 'video/mp4');
  }

  async function submit(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL, kind: string): Promise<void> {
    stats.submits++;
    if (raw.length > MAX_BODY) return json(res, 413, betaError(413, 'request body exceeds 20MB'));
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return json(res, 400, betaError(400, 'invalid JSON body'));
    }
    if (!isObject(body)) return json(res, 400, betaError(400, 'body must be a JSON object'));
    const prompt = typeof body.prompt === 'string' ? body.prompt : '';
    // Validation comes before faults so that a slow-body fault still answers a real, created task.
    const bad = validate(kind, body);
    if (bad) return json(res, 400, betaError(400, bad));
    const b = body;
    const answer = () => created(b, prompt, kind);
    const fault = pickFault(req, url, prompt, faults);
    if (fault && (await applyFault(fault, res, (s) => betaError(s), answer))) return;
    json(res, 200, answer());
  }

  function created(body: Body, prompt: string, kind: string): unknown {
    const task = tasks.create({ model: body.model as string, prompt, body, kind });
    const { duration, resolution, credits } = settings(body);
    return {
      task_id: task.id,
      state: 'created',
      model: task.model,
      prompt,
      ...(Array.isArray(body.images) ? { images: body.images } : {}),
      duration,
      seed: (body.seed as number | undefined) || randomInt(1, 2 ** 31),
      resolution,
      ...(body.aspect_ratio !== undefined ? { aspect_ratio: body.aspect_ratio } : {}),
      ...(body.movement_amplitude !== undefined ? { movement_amplitude: body.movement_amplitude } : {}),
      payload: body.payload ?? '',
      off_peak: body.off_peak ?? false,
      credits,
      created_at: Math.floor(task.createdAt / 1000),
    };
  }

  async function query(req: IncomingMessage, res: ServerResponse, url: URL, id: string): Promise<void> {
    stats.queries++;
    const task = tasks.get(id);
    const answer = () => {
      if (!task) return betaError(404, `task ${id} not found`, 'TaskNotFound');
      task.polls++;
      return creations(task);
    };
    const fault = pickFault(req, url, '', faults);
    if (fault && (await applyFault(fault, res, (s) => betaError(s), answer))) return;
    json(res, task ? 200 : 404, answer());
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const file = FILE.exec(url.pathname);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) return serveFile(req, res, url, group(file, 1), group(file, 2));
    const sub = req.method === 'POST' ? SUBMIT.exec(url.pathname) : null;
    const qry = req.method === 'GET' ? QUERY.exec(url.pathname) : null;
    if (!sub && !qry) return json(res, 404, betaError(404, `${req.method} ${url.pathname} not found`));
    if (req.headers.authorization !== `Token ${key}`) return json(res, 401, betaError(401, 'invalid token'));
    if (sub) return submit(req, res, raw, url, group(sub, 1));
    if (qry) return query(req, res, url, group(qry, 1));
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'beta-native',
    url: server.url,
    secrets: { key },
    faults,
    stats,
    tasks,
    // The gateway's results of a one-creation task: 0 the video, 1 its cover (the thumbnail).
    result(id: string, index = 0): Buffer | null {
      const task = tasks.get(id);
      if (index > 1 || !task || tasks.state(task).phase !== 'done') return null;
      return bytesOf(task, index === 0 ? 'mp4' : 'cover.png');
    },
    targets: server.targets,
    traces: server.traces,
    close: server.close,
  };
}
