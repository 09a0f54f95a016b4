import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { group } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake upstream gateway speaking the PUBLIC unified video routes (docs/spec/upstream-protocols.md,
 * unified-passthrough): what a channel of the pattern-named groups talks to. Secret name `key`;
 * auth `Authorization: Bearer KEY` on every route, downloads included.
 *
 * Routes (both submit paths and both query paths are equivalent):
 *   POST /v1/video/generations, POST /v1/videos   JSON `{model, prompt, image, images, input_reference,
 *        duration, seconds, size, metadata}`. Checked: `model` and `prompt` non-empty strings (400
 *        `invalid_request`, param the field); `image` string; `images` string array; `input_reference`
 *        string or string array; `duration` integer 1..60; `seconds` string of digits; `size` string;
 *        `metadata` object (each otherwise 400 `invalid_request`). Other fields are ignored.
 *        Answer 200 `{id, task_id, object:"video", model, status:"queued", progress:0, created_at}`.
 *   GET  /v1/video/generations/{id}, GET /v1/videos/{id}   200 `{id, task_id, object:"video", model,
 *        status, progress, created_at, completed_at, seconds, size, video_url, error?}`; 404 unknown id
 *        (code `task_not_found`). `seconds` is the submitted `seconds`, else `duration` as a string, else
 *        "5"; `size` the submitted one, else "1280x720"; `video_url` is
 *        `${base}/v1/videos/{id}/content` once completed, else null; `completed_at` null until finished.
 *   GET  /v1/videos/{id}/content   200 the MP4 (Range → 206/416); needs the key; 404 (code
 *        `task_not_finished`) until completed, failed tasks included. No faults here.
 * Ids look like `upt_<hex>` so a test can tell an upstream id from the gateway's own.
 * Status words `queued` → `in_progress` (progress 1–99) → `completed` | `failed` (with
 * `error:{code: <fail reason>, message}`); `[sim:never]` stays `in_progress`; `[sim:status=WORD]` reports WORD.
 * Times are Unix seconds.
 *
 * Errors: shape A `{"error":{"message","type":"svc_api_error","param","code"}}` (param "" unless a
 * field is named), except 429 which is shape B `{"code":"too_many_requests","message","data":null}`
 * (with `retry-after`). 400 `invalid_request`; 401 (missing or wrong key) `invalid_api_key`; 403
 * `insufficient_user_quota`; 404 `task_not_found` / `not_found`; 500 `bad_response`; 502, 503, 504
 * `upstream_unavailable`; any other status `upstream_error`.
 * Faults (faults.ts) apply after auth and validation, on submits and queries.
 * Stats: requests, submits, queries, downloads.
 */

/** Options of the unified-passthrough simulator. */
export interface UnifiedSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const CODES: Record<number, [code: string, message: string]> = {
  400: ['invalid_request', 'Invalid request.'],
  401: ['invalid_api_key', 'Invalid token.'],
  403: ['insufficient_user_quota', 'User quota is not enough.'],
  404: ['not_found', 'Not found.'],
  500: ['bad_response', 'Failed to read the upstream response body.'],
  502: ['upstream_unavailable', 'The upstream service is unavailable.'],
  503: ['upstream_unavailable', 'The upstream service is unavailable.'],
  504: ['upstream_unavailable', 'The upstream service timed out.'],
};

/** The upstream gateway's error body for a status: shape A, or shape B for 429 (docs/spec/interface.md section 7). */
export function unifiedError(status: number, message?: string, code?: string, param = ''): unknown {
  if (status === 429)
    return { code: 'too_many_requests', message: message ?? 'The upstream load of the current group is saturated, please try again later.', data: null };
  const [defCode, defMessage] = CODES[status] ?? ['upstream_error', `Simulated error ${status}.`];
  return { error: { message: message ?? defMessage, type: 'svc_api_error', param, code: code ?? defCode } };
}

/** What a task keeps of its submit body. */
interface Kept {
  seconds: string;
  size: string;
}
/** An `invalid_request` 400, thrown by the body check and answered in one place. */
class Invalid extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** Checks a unified submit body the way the upstream gateway does; throws Invalid. */
function check(body: unknown): { model: string; prompt: string; kept: Kept } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Invalid('The request body must be a JSON object.', '');
  const b = body as Record<string, unknown>;
  for (const name of ['model', 'prompt'] as const) {
    if (typeof b[name] !== 'string' || (b[name] as string).trim() === '') throw new Invalid(`${name} is required`, name);
  }
  const wrong = (name: string, want: string) => new Invalid(`Invalid ${name}: expected ${want}.`, name);
  if (b.image !== undefined && typeof b.image !== 'string') throw wrong('image', 'a string');
  if (b.images !== undefined && !isStrings(b.images)) throw wrong('images', 'an array of strings');
  if (b.input_reference !== undefined && typeof b.input_reference !== 'string' && !isStrings(b.input_reference))
    throw wrong('input_reference', 'a string or an array of strings');
  const d = b.duration;
  if (d !== undefined && (typeof d !== 'number' || !Number.isInteger(d) || d < 1 || d > 60)) throw wrong('duration', 'an integer from 1 to 60');
  if (b.seconds !== undefined && (typeof b.seconds !== 'string' || !/^[0-9]{1,3}$/.test(b.seconds))) throw wrong('seconds', 'a string of digits');
  if (b.size !== undefined && typeof b.size !== 'string') throw wrong('size', 'a string');
  if (b.metadata !== undefined && (b.metadata === null || typeof b.metadata !== 'object' || Array.isArray(b.metadata))) throw wrong('metadata', 'an object');
  const seconds = (b.seconds as string | undefined) ?? (d !== undefined ? String(d) : '5');
  return { model: b.model as string, prompt: b.prompt as string, kept: { seconds, size: (b.size as string | undefined) ?? '1280x720' } };
}

const sec = (ms: number) => Math.floor(ms / 1000);

/** Starts a fake upstream gateway speaking the unified video routes; see the module comment. */
export async function startUnifiedPassthroughSimulator(opts: UnifiedSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-unified-${randomBytes(6).toString('hex')}`;
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, downloads: 0 };
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock: opts.clock });
  let base = '';

  function submitted(task: SimTask): unknown {
    return { id: task.id, task_id: task.id, object: 'video', model: task.model, status: 'queued', progress: 0, created_at: sec(task.createdAt) };
  }

  function record(task: SimTask): unknown {
    const { phase, progress } = tasks.state(task);
    const kept = task.body as Kept;
    const status = { queued: 'queued', running: 'in_progress', stuck: 'in_progress', done: 'completed', failed: 'failed', odd: task.oddStatus }[phase];
    const ended = phase === 'done' || phase === 'failed';
    return {
      id: task.id,
      task_id: task.id,
      object: 'video',
      model: task.model,
      status,
      progress,
      created_at: sec(task.createdAt),
      completed_at: ended ? sec(task.finishAt) : null,
      seconds: kept.seconds,
      size: kept.size,
      video_url: phase === 'done' ? `${base}/v1/videos/${task.id}/content` : null,
      ...(phase === 'failed' ? { error: { code: task.failReason, message: `Video generation failed: ${task.failReason}` } } : {}),
    };
  }

  /** Answers normally after an optional fault; `answer` runs once, only when the answer is really sent. */
  async function reply(req: IncomingMessage, res: ServerResponse, url: URL, prompt: string, answer: () => unknown): Promise<void> {
    let made: unknown;
    const once = () => (made ??= answer());
    const fault = pickFault(req, url, prompt, faults);
    if (fault && (await applyFault(fault, res, (s) => unifiedError(s), once))) return;
    json(res, 200, once());
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const path = url.pathname;
    if (req.headers.authorization !== `Bearer ${key}`) return json(res, 401, unifiedError(401));
    if (req.method === 'POST' && (path === '/v1/video/generations' || path === '/v1/videos')) {
      let v: ReturnType<typeof check>;
      try {
        v = check(JSON.parse(raw.toString('utf8')));
      } catch (err) {
        const invalid = err instanceof Invalid ? err : new Invalid('The request body is not valid JSON.', '');
        return json(res, 400, unifiedError(400, invalid.message, 'invalid_request', invalid.param));
      }
      stats.submits++;
      return reply(req, res, url, v.prompt, () => submitted(tasks.create({ model: v.model, prompt: v.prompt, body: v.kept, prefix: 'upt_' })));
    }
    const m = /^\/v1\/(?:video\/generations|videos)\/([A-Za-z0-9_-]+)$/.exec(path) ?? /^\/v1\/videos\/([A-Za-z0-9_-]+)(\/content)$/.exec(path);
    if (req.method === 'GET' && m) {
      const task = tasks.get(group(m, 1));
      if (!task) return json(res, 404, unifiedError(404, `Task ${m[1]} does not exist.`, 'task_not_found'));
      if (m[2]) {
        stats.downloads++;
        if (tasks.state(task).phase !== 'done') return json(res, 404, unifiedError(404, 'The task has not finished; no video yet.', 'task_not_finished'));
        return serveBytes(req, res, makeMp4(task.id), 'video/mp4');
      }
      stats.queries++;
      task.polls++;
      return reply(req, res, url, '', () => record(task));
    }
    json(res, 404, unifiedError(404, `Invalid URL (${req.method} ${path})`));
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'unified-passthrough',
    url: server.url,
    secrets: { key },
    faults,
    stats,
    tasks,
    result(id: string, index = 0): Buffer | null {
      const task = tasks.get(id);
      return task && index === 0 && tasks.state(task).phase === 'done' ? makeMp4(task.id) : null;
    },
    targets: server.targets,
    traces: server.traces,
    close: server.close,
  };
}
