import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { group } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking mu-dashscope (docs/spec/upstream-protocols.md): asynchronous video.
 *
 * Auth: `Authorization: Bearer KEY` on submit and query (secret name `key`). Missing or wrong key:
 *   401 `{request_id, code:"InvalidApiKey", message:"Invalid API-key provided."}`.
 * Every JSON answer carries a fresh `request_id` (a UUID).
 *
 * Submit `POST /api/v1/services/aigc/video-generation/video-synthesis`, header `X-DashScope-Async: enable`
 * required (without it: 403 `{request_id, code:"AccessDenied", message:"current user api does not support
 * synchronous calls"}`). Body `{model, input:{prompt, negative_prompt, img_url, first_frame_url,
 * last_frame_url}, parameters:{resolution, size, duration, watermark, seed}}`. Checks, each failing with
 * 400 `{request_id, code:"InvalidParameter", message}`:
 *   body is a JSON object; `input` is an object; `model` is `mu2.6-t2v` or `mu2.6-i2v` (else the message
 *   is "Model not exist."); t2v needs a non-empty `input.prompt` and must not carry `input.img_url`;
 *   i2v needs `input.img_url`; `img_url`, `first_frame_url`, `last_frame_url` when given are http(s) URLs
 *   or `data:` URIs; `prompt`, `negative_prompt` strings; `parameters` an object when given, with only
 *   the parameters the vendor's documents list for the model: text-to-video (t2v) takes `size`, one of
 *   the documented sizes of its 720P and 1080P tiers, landscape, portrait and square ("1280*720",
 *   "720*1280", "960*960", "1088*832", "832*1088", "1920*1080", "1080*1920", "1440*1440", "1632*1248",
 *   "1248*1632"), and no `resolution`; image-to-video (i2v) takes `resolution` "720P" | "1080P" (the
 *   video keeps the image's aspect ratio) and no `size`; both take `duration` integer 1..15 (default 5),
 *   `watermark` boolean, `seed` integer 0..2147483647, `prompt_extend` and `audio` booleans, `shot_type`
 *   "single" | "multi". Stricter than the vendor on purpose: a parameter the documents do not list for
 *   the model is refused ("parameters.size is not taken by mu2.6-i2v"), where the vendor may ignore it,
 *   so that a profile sending the wrong one is caught.
 * Markers `[sim:…]` are read from `input.prompt`.
 *   → 200 `{request_id, output:{task_id, task_status:"PENDING"}}`.
 *
 * Query `GET /api/v1/tasks/{task_id}` → 200 `{request_id, output:{task_id, task_status, submit_time,
 * scheduled_time, end_time, video_url, code, message}, usage:{video_duration, video_ratio, video_count}}`.
 * `task_status`: PENDING (queued), RUNNING (running, and for ever with `[sim:never]`), SUCCEEDED (adds
 * `video_url`), FAILED (adds `code:"GenerationFailed"` and `message` = the failure reason), or the word
 * of `[sim:status=WORD]`. Times are "YYYY-MM-DD HH:mm:ss.SSS" in UTC; `scheduled_time` appears once the
 * task runs, `end_time` once it ended. `usage` is on every answer of a known task: `video_duration`
 * (the requested duration), `video_ratio` (the t2v size; for i2v the tier's landscape size, 720P
 * "1280*720" and 1080P "1920*1080", since no image is read; default "1280*720"), `video_count` (1 once
 * SUCCEEDED, else 0). Unknown task id: 200 `{request_id, output:{task_id, task_status:"UNKNOWN"}}`,
 * as the vendor answers (it also does so for expired tasks).
 *
 * Files: `video_url` is `${base}/files/<task_id>.mp4` (GET/HEAD, Range supported), NO auth (like a
 * signed object-store URL); 404 until the task has SUCCEEDED.
 *
 * Other errors (also the bodies of `x-sim-fault: <status>`), all `{request_id, code, message}`:
 *   400 InvalidParameter, 401 InvalidApiKey, 403 AccessDenied, 404 NotFound (also unknown paths),
 *   429 Throttling.RateQuota, 500 and other 5xx InternalError, 503 ServiceUnavailable, other 4xx `Http<status>`.
 * Order on submit: path → auth (401) → JSON parse (400) → fault → async header (403) → body (400).
 * A slow-body fault on a valid submit still creates the task (its id is in the slow answer).
 * Not simulated: cancelling (the CANCELED status), callbacks.
 */

/** Options of the mu-dashscope simulator. */
export interface MuSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const SUBMIT_PATH = '/api/v1/services/aigc/video-generation/video-synthesis';
const MODELS = new Set(['mu2.6-t2v', 'mu2.6-i2v']);
/** Text-to-video sizes of the vendor's document, 720P and 1080P tiers. */
const SIZES = new Set(['1280*720', '720*1280', '960*960', '1088*832', '832*1088', '1920*1080', '1080*1920', '1440*1440', '1632*1248', '1248*1632']);
/** Image-to-video resolution tiers, and the landscape size each stands for in `usage.video_ratio`. */
const RESOLUTIONS: Record<string, string> = { '720P': '1280*720', '1080P': '1920*1080' };
/** The parameters the documents list per model kind; any other is refused (see the doc comment). */
const COMMON_PARAMETERS = ['duration', 'watermark', 'seed', 'prompt_extend', 'audio', 'shot_type'];
const PARAMETERS: Record<'t2v' | 'i2v', Set<string>> = {
  t2v: new Set(['size', ...COMMON_PARAMETERS]),
  i2v: new Set(['resolution', ...COMMON_PARAMETERS]),
};
const CODES: Record<number, [string, string]> & { 500: [string, string] } = {
  400: ['InvalidParameter', 'The request is invalid.'],
  401: ['InvalidApiKey', 'Invalid API-key provided.'],
  403: ['AccessDenied', 'Access denied.'],
  404: ['NotFound', 'The requested resource was not found.'],
  429: ['Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.'],
  500: ['InternalError', 'An internal error has occured, please try again later or contact service support.'],
  503: ['ServiceUnavailable', 'The service is temporarily unavailable, please try again later.'],
};

/** The vendor's error body for a status (see the doc comment above). */
export function muError(status: number, message?: string, code?: string): unknown {
  const [c, m] = CODES[status] ?? (status >= 500 ? CODES[500] : [`Http${status}`, `Simulated error ${status}.`]);
  return { request_id: randomUUID(), code: code ?? c, message: message ?? m };
}

interface Body {
  model?: unknown;
  input?: Record<string, unknown>;
  parameters?: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isMediaRef = (v: unknown) => typeof v === 'string' && (/^https?:\/\/\S+$/.test(v) || /^data:[\w.+-]+\/[\w.+-]+;base64,/.test(v));
const isInt = (v: unknown, lo: number, hi: number) => Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi;
const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** The vendor's 400 message for a submit body, or null when it is acceptable. */
function invalid(body: Body): string | null {
  if (!isObject(body)) return 'The request body must be a JSON object.';
  if (typeof body.model !== 'string' || !body.model) return 'Field required: model';
  if (!isObject(body.input)) return 'Field required: input';
  if (!MODELS.has(body.model)) return 'Model not exist.';
  const input = body.input;
  for (const f of ['prompt', 'negative_prompt'] as const) {
    if (input[f] !== undefined && typeof input[f] !== 'string') return `Field input.${f} must be a string.`;
  }
  for (const f of ['img_url', 'first_frame_url', 'last_frame_url'] as const) {
    if (input[f] !== undefined && !isMediaRef(input[f])) return `Field input.${f} must be a URL or a data URI.`;
  }
  if (body.model.endsWith('-t2v')) {
    if (typeof input.prompt !== 'string' || input.prompt.trim() === '') return 'Field required: input.prompt';
    if (input.img_url !== undefined) return 'input.img_url is not supported by this model.';
  } else if (input.img_url === undefined) return 'Field required: input.img_url';
  const p = body.parameters;
  if (p === undefined) return null;
  if (!isObject(p)) return 'Field parameters must be an object.';
  const taken = PARAMETERS[body.model.endsWith('-t2v') ? 't2v' : 'i2v'];
  const foreign = Object.keys(p).find((k) => !taken.has(k));
  if (foreign) return `parameters.${foreign} is not taken by ${body.model}.`;
  if (p.size !== undefined && !SIZES.has(p.size as string)) return `Invalid size: ${String(p.size)}, must be one of ${[...SIZES].join(', ')}.`;
  if (p.resolution !== undefined && !Object.hasOwn(RESOLUTIONS, p.resolution as string))
    return `Invalid resolution: ${String(p.resolution)}, must be one of 720P, 1080P.`;
  if (p.duration !== undefined && !isInt(p.duration, 1, 15)) return 'parameters.duration must be an integer between 1 and 15.';
  if (p.watermark !== undefined && typeof p.watermark !== 'boolean') return 'parameters.watermark must be a boolean.';
  if (p.seed !== undefined && !isInt(p.seed, 0, 2147483647)) return 'parameters.seed must be an integer between 0 and 2147483647.';
  for (const f of ['prompt_extend', 'audio'] as const) {
    if (p[f] !== undefined && typeof p[f] !== 'boolean') return `parameters.${f} must be a boolean.`;
  }
  if (p.shot_type !== undefined && p.shot_type !== 'single' && p.shot_type !== 'multi') return 'parameters.shot_type must be single or multi.';
  return null;
}

/** Starts a fake mu-dashscope vendor (see the doc comment at the top of this file for its protocol). */
export async function startMuSimulator(opts: MuSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-mu-${randomBytes(6).toString('hex')}`;
  const clock = opts.clock ?? Date.now;
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0 };
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  let base = '';

  function taskView(task: SimTask): unknown {
    const { phase } = tasks.state(task);
    const body = task.body as Body;
    const span = Math.max(1, task.finishAt - task.createdAt);
    const status = { queued: 'PENDING', running: 'RUNNING', stuck: 'RUNNING', done: 'SUCCEEDED', failed: 'FAILED', odd: task.oddStatus }[phase];
    const output: Record<string, unknown> = { task_id: task.id, task_status: status, submit_time: stamp(task.createdAt) };
    if (phase !== 'queued' && phase !== 'odd') output.scheduled_time = stamp(task.createdAt + Math.floor(span / 3));
    if (phase === 'done' || phase === 'failed') output.end_time = stamp(task.finishAt);
    if (phase === 'done') output.video_url = `${base}/files/${task.id}.mp4`;
    if (phase === 'failed') Object.assign(output, { code: 'GenerationFailed', message: task.failReason });
    const usage = {
      video_duration: (body.parameters?.duration as number | undefined) ?? 5,
      video_ratio: (body.parameters?.size as string | undefined) ?? RESOLUTIONS[body.parameters?.resolution as string] ?? '1280*720',
      video_count: phase === 'done' ? 1 : 0,
    };
    return { request_id: randomUUID(), output, usage };
  }

  function result(id: string, index = 0): Buffer | null {
    const task = tasks.get(id);
    return task && index === 0 && tasks.state(task).phase === 'done' ? makeMp4(task.id) : null;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const file = /^\/files\/([A-Za-z0-9-]+)\.mp4$/.exec(url.pathname);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) {
      const bytes = result(group(file, 1));
      return bytes ? serveBytes(req, res, bytes, 'video/mp4') : json(res, 404, muError(404, 'The specified key does not exist.'));
    }
    const query = /^\/api\/v1\/tasks\/([^/]+)$/.exec(url.pathname);
    const submit = url.pathname === SUBMIT_PATH;
    if (!(submit && req.method === 'POST') && !(query && req.method === 'GET')) {
      return json(res, 404, muError(404, `Path ${req.method} ${url.pathname} was not found.`));
    }
    if (req.headers.authorization !== `Bearer ${key}`) return json(res, 401, muError(401));

    if (query) {
      stats.queries++;
      const id = decodeURIComponent(group(query, 1));
      const task = tasks.get(id);
      const answer = () => (task ? taskView(task) : { request_id: randomUUID(), output: { task_id: id, task_status: 'UNKNOWN' } });
      const fault = pickFault(req, url, '', faults);
      if (fault && (await applyFault(fault, res, (s) => muError(s), answer))) return;
      if (task) task.polls++;
      return json(res, 200, answer());
    }

    stats.submits++;
    let body: Body;
    try {
      body = JSON.parse(raw.toString('utf8')) as Body;
    } catch {
      return json(res, 400, muError(400, 'The request body is not valid JSON.'));
    }
    const prompt = isObject(body) && isObject(body.input) && typeof body.input.prompt === 'string' ? body.input.prompt : '';
    const message = invalid(body);
    const problem: [number, string] | null =
      req.headers['x-dashscope-async'] !== 'enable' ? [403, 'current user api does not support synchronous calls'] : message ? [400, message] : null;
    const accept = () => {
      const task = tasks.create({ model: body.model as string, prompt, body, kind: body.model as string });
      return { request_id: randomUUID(), output: { task_id: task.id, task_status: 'PENDING' } };
    };
    // slow-body sends the normal answer slowly, so a valid submit still creates its task then.
    const fault = pickFault(req, url, prompt, faults);
    const normal = () => (problem ? muError(problem[0], problem[1]) : accept());
    if (fault && (await applyFault(fault, res, (s) => muError(s), normal))) return;
    if (problem) return json(res, problem[0], muError(problem[0], problem[1]));
    json(res, 200, accept());
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'mu-dashscope',
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
