import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { applyFault, pickFault } from './faults.js';
import { refusalOf, verifyGammaSignature, type GammaKeys } from './gamma-volc-auth.js';
import { checkQuery, checkSubmit, type GammaPlan } from './gamma-volc-body.js';
import { json, listen, type Simulator } from './http.js';
import { group, must } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { makePng } from './png.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking gamma-volc (docs/spec/upstream-protocols.md): asynchronous images and videos behind an
 * HMAC-SHA256 request signature. Secrets `access_key` and `secret_key`; region `cn-north-1` and service
 * `cv` unless the options say otherwise.
 *
 * Routes. The channel's base URL may carry a base path, so the endpoint is ANY path ending in `/`:
 *   POST <…>/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31   submit
 *   POST <…>/?Action=CVSync2AsyncGetResult&Version=2022-08-31    query
 *   GET|HEAD /files/<task_id>-<i>.png   image i of a task; /files/<task_id>.mp4 the video. No auth (like a
 *                                       presigned URL), Range works; 404 unless done and not expired.
 * Another path or method: 404 / 50404. Action not one of the two or Version not 2022-08-31: 400 / 50400.
 *
 * Auth: the signature is verified by gamma-volc-auth.ts (independent of the gateway's signer; refusal
 * reasons listed there), X-Date at most 15 minutes off the simulator clock. A refusal is answered as the
 * real service answers it, by its API gateway and not in the CV envelope: `{ResponseMetadata: {RequestId,
 * Action, Version, Service, Region, Error: {CodeN?, Code, Message}}}` (the SDK's OpenApiResponse), e.g. a
 * wrong signature HTTP 401 `SignatureDoesNotMatch` / 100010; the other codes and statuses are
 * `refusalOf`'s. The header `x-sim-refusal: <Reason>: <detail>` names the simulator's own reason.
 *
 * Every other JSON answer is `{code, data, message, request_id, status, time_elapsed}` with `status` equal
 * to `code` and `time_elapsed` like "0.412ms"; errors carry `data: null`. Codes (chosen so that a generic
 * code is 50000 + the HTTP status, every 5xx 50500):
 *   10000 Success (HTTP 200)                    50400 invalid request (400: Action/Version, JSON, fields)
 *   50401 Access Denied (a fault of status 401) 50404 not found (404: path, method)
 *   50411 Pre Img Risk Not Pass, 50412 Pre Text Risk Not Pass, 50413 Text Risk Not Pass (400, at submit)
 *   50429 QPS limit (429, fault `429`)           50430 concurrency limit (429, `maxConcurrent` option)
 *   50500 Internal Error (any 5xx)              50511 Post Img Risk Not Pass, 50512 Post Text Risk Not Pass
 *   other 4xx statuses of a fault: 50000 + status.
 *
 * Models by `req_key`: gamma_t2i_v40 → gamma-4.0 and gamma_t2i_v45 → gamma-4.5 (images); gamma_v30 →
 * gamma-video-3.0 and gamma_v20 → gamma-video-2.0 (videos). Submit body checks (400 / 50400, see
 * gamma-volc-body.ts): a JSON object; `req_key` in the table; `prompt` a non-empty string of at most 800
 * characters; `seed` an integer -1..2147483647; `image_urls` (http(s) URLs) or `binary_data_base64` (raw
 * base64, no `data:` prefix), never both, a non-empty array when given. Images: 0..10 references (0 =
 * text-to-image, else image-to-image); `width`+`height` both, integers 512..4096, ratio 1:3..3:1, winning
 * over `size` (an integer area 1048576..16777216, a square of that area); default 2048x2048;
 * `aspect_ratio`, `frames` and `mode` refused. Videos: 0 images = text, 1 = first frame, 2 = first and
 * last frames; `mode: "reference"` with 1..4 images = reference-to-video (no other `mode` value);
 * `aspect_ratio` 16:9|9:16|1:1|4:3|3:4|21:9; `frames` 121 (5 s, default) | 241 (10 s); `width`, `height`,
 * `size` refused. Other fields are ignored. Answer `{code:10000, data:{task_id}, message:"Success", …}`.
 *
 * Query body `{req_key, task_id, req_json?}`, req_json a string holding a JSON object; its `return_url`
 * (boolean) asks for image URLs instead of base64. Always HTTP 200 once the body is valid:
 * `data:{status, image_urls, binary_data_base64, video_url}` (each null unless it is the answer).
 * `status`: in_queue (queued) → generating (running; for ever with `[sim:never]`) → done; `not_found` for
 * an unknown task id or a req_key other than the task's; `expired` once `expireMs` (default 24 h) has
 * passed since the task ended; or the word of `[sim:status=WORD]`. `done` with code 10000 = success:
 * images in `image_urls` (`/files/…png`) when return_url is true, else `binary_data_base64` (the same PNG
 * bytes); a video in `video_url`. `done` with a failure (`[sim:fail]`): code 50511 "Post Img Risk Not
 * Pass"; `[sim:fail=5xxxx]` uses that code (e.g. 50512, 50500); `[sim:fail=TEXT]` is 50511 with TEXT as
 * message. Non-done answers have code 10000.
 *
 * Simulator markers besides task-book.ts and faults.ts: `[sim:refuse-input]` refuses the submit with 400 /
 * 50411, `[sim:refuse-input=50412]` or `=50413` with that code; `[sim:images=N]` (1..4) makes N images
 * (default 1). Result images are PNGs of 1/16 of the requested width and height.
 * Order on submit: path/method (404) → Action/Version (400) → signature (401) → JSON (400) → fields (400)
 * → input refusal (400) → concurrency (429) → fault → task. On query: … → fields (400) → fault → answer.
 * A slow-body fault on a valid submit still creates the task.
 * Not simulated: the synchronous actions, callbacks, watermark/logo options, content-type checks.
 */

/** Options of the gamma-volc simulator. */
export interface GammaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly accessKey?: string;
  readonly secretKey?: string;
  /** Default `cn-north-1`. */
  readonly region?: string;
  /** Default `cv`. */
  readonly service?: string;
  readonly clock?: () => number;
  /** How long results are kept after a task ends; later queries say `expired`. Default 24 h. */
  readonly expireMs?: number;
  /** Most unfinished tasks at once; a submit beyond it is refused with 429 / 50430. Default no limit. */
  readonly maxConcurrent?: number;
}

const VERSION = '2022-08-31';
const ACTIONS = new Set(['CVSync2AsyncSubmitTask', 'CVSync2AsyncGetResult']);
const FILE = /^\/files\/([0-9a-f]+)(?:-(\d+)\.png|\.mp4)$/;
const REFUSE = /\[sim:refuse-input(?:=(5041[123]))?\]/;
const IMAGES = /\[sim:images=([1-4])\]/;
const MESSAGES: Record<number, string> & Record<50430 | 50511, string> = {
  10000: 'Success',
  50400: 'Invalid Request',
  50401: 'Access Denied',
  50404: 'Not Found',
  50411: 'Pre Img Risk Not Pass',
  50412: 'Pre Text Risk Not Pass',
  50413: 'Text Risk Not Pass',
  50429: 'Request Has Reached API Limit, Please Try Later',
  50430: 'Request Has Reached API Concurrent Limit, Please Try Later',
  50500: 'Internal Error',
  50511: 'Post Img Risk Not Pass',
  50512: 'Post Text Risk Not Pass',
};

/** The vendor's code for an HTTP error status: 50000 + status, every 5xx 50500. */
export function gammaCode(status: number): number {
  return status >= 500 ? 50500 : 50000 + status;
}

/** A request id of the vendor's form: the time to the second, then upper-case hex. */
const requestId = () => `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(9).toString('hex').toUpperCase()}`;

/** A vendor envelope; `started` (performance.now()) gives time_elapsed. */
function envelope(code: number, data: unknown, message: string, started = performance.now()): Record<string, unknown> {
  const elapsed = `${Math.max(0.001, performance.now() - started).toFixed(3)}ms`;
  return { code, data, message, request_id: requestId(), status: code, time_elapsed: elapsed };
}

/** The real service's gateway-level error body (`ResponseMetadata.Error`), as the SDK's OpenApiResponse types it. */
export function responseMetadataError(
  call: { action: string; version: string; service: string; region: string },
  error: { code: string; codeN?: number; message: string },
): unknown {
  const e = { ...(error.codeN === undefined ? {} : { CodeN: error.codeN }), Code: error.code, Message: error.message };
  return { ResponseMetadata: { RequestId: requestId(), Action: call.action, Version: call.version, Service: call.service, Region: call.region, Error: e } };
}

/** The vendor's error body for an HTTP status; `code` and `message` override the defaults. */
export function gammaError(status: number, message?: string, code?: number): unknown {
  const c = code ?? gammaCode(status);
  return envelope(c, null, message ?? MESSAGES[c] ?? `Simulated Error ${status}`);
}

/** What a task keeps besides the task book's fields. */
interface TaskData {
  readonly request: Record<string, unknown>;
  readonly plan: GammaPlan;
  readonly images: number;
}

/** Code and message of a failed task from its `[sim:fail…]` reason. */
function failure(reason: string | null): [number, string] {
  if (reason && /^5\d{4}$/.test(reason)) return [Number(reason), MESSAGES[Number(reason)] ?? 'Generation Failed'];
  return [50511, !reason || reason === 'generation_failed' ? MESSAGES[50511] : reason];
}

/** Starts a fake gamma-volc vendor (see the doc comment at the top of this file for its protocol). */
export async function startGammaVolcSimulator(opts: GammaSimOptions = {}): Promise<Simulator> {
  const keys: GammaKeys = {
    accessKey: opts.accessKey ?? `sim-gamma-ak-${randomBytes(6).toString('hex')}`,
    secretKey: opts.secretKey ?? `sim-gamma-sk-${randomBytes(12).toString('hex')}`,
    region: opts.region ?? 'cn-north-1',
    service: opts.service ?? 'cv',
  };
  const clock = opts.clock ?? Date.now;
  const expireMs = opts.expireMs ?? 24 * 3600_000;
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  const unfinished = new Set<SimTask>();
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, downloads: 0 };
  let base = '';

  const dataOf = (task: SimTask) => task.body as TaskData;
  const expired = (task: SimTask) => clock() >= task.finishAt + expireMs;

  function result(id: string, index = 0): Buffer | null {
    const task = tasks.get(id);
    if (!task || tasks.state(task).phase !== 'done' || expired(task)) return null;
    const { plan, images } = dataOf(task);
    if (plan.kind === 'video') return index === 0 ? makeMp4(task.id) : null;
    if (!Number.isInteger(index) || index < 0 || index >= images) return null;
    const tint = parseInt(task.id.slice(0, 2), 16) + index;
    return makePng(Math.max(1, Math.round(plan.width / 16)), Math.max(1, Math.round(plan.height / 16)), tint);
  }

  /** The query answer for a task, or for an id the book does not hold. */
  function view(task: SimTask | undefined, returnUrl: boolean, started: number): unknown {
    const data: Record<string, unknown> = { status: 'not_found', image_urls: null, binary_data_base64: null, video_url: null };
    if (!task) return envelope(10000, data, 'Success', started);
    task.polls++;
    const { phase } = tasks.state(task);
    const ended = phase === 'done' || phase === 'failed';
    const word = { queued: 'in_queue', running: 'generating', stuck: 'generating', done: 'done', failed: 'done', odd: task.oddStatus }[phase];
    data.status = ended && expired(task) ? 'expired' : word;
    if (data.status !== 'done') return envelope(10000, data, 'Success', started);
    if (phase === 'failed') {
      const [code, message] = failure(task.failReason);
      return envelope(code, data, message, started);
    }
    const { plan, images } = dataOf(task);
    const indexes = Array.from({ length: images }, (_, i) => i);
    if (plan.kind === 'video') data.video_url = `${base}/files/${task.id}.mp4`;
    else if (returnUrl) data.image_urls = indexes.map((i) => `${base}/files/${task.id}-${i}.png`);
    else data.binary_data_base64 = indexes.map((i) => must(result(task.id, i), `image ${i} of ${task.id}`).toString('base64'));
    return envelope(10000, data, 'Success', started);
  }

  /** A refusal before any task exists: status, code and message, or null when the submit may go on. */
  function refusal(prompt: string): [number, number, string] | null {
    const refuse = REFUSE.exec(prompt);
    if (refuse) {
      const code = Number(refuse[1] ?? 50411);
      return [400, code, must(MESSAGES[code], `message ${code}`)];
    }
    if (opts.maxConcurrent === undefined) return null;
    for (const t of unfinished) if (!['queued', 'running', 'stuck'].includes(tasks.state(t).phase)) unfinished.delete(t);
    return unfinished.size >= opts.maxConcurrent ? [429, 50430, MESSAGES[50430]] : null;
  }

  async function submit(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown, started: number): Promise<void> {
    stats.submits++;
    const checked = checkSubmit(body);
    if (!checked.ok) return json(res, 400, envelope(50400, null, `Invalid Request: ${checked.message}`, started));
    const plan = checked.value;
    const request = body as Record<string, unknown>;
    const prompt = request.prompt as string;
    const refused = refusal(prompt);
    if (refused) return json(res, refused[0], envelope(refused[1], null, refused[2], started));
    const accept = () => {
      const images = plan.kind === 'image' ? Number(IMAGES.exec(prompt)?.[1] ?? 1) : 1;
      const data: TaskData = { request, plan, images };
      const task = tasks.create({ model: plan.reqKey, prompt, body: data, kind: plan.kind });
      if (opts.maxConcurrent !== undefined) unfinished.add(task);
      return envelope(10000, { task_id: task.id }, 'Success', started);
    };
    const fault = pickFault(req, url, prompt, faults);
    if (fault && (await applyFault(fault, res, (s) => gammaError(s), accept))) return;
    json(res, 200, accept());
  }

  async function query(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown, started: number): Promise<void> {
    stats.queries++;
    const checked = checkQuery(body);
    if (!checked.ok) return json(res, 400, envelope(50400, null, `Invalid Request: ${checked.message}`, started));
    const { taskId, reqKey, returnUrl } = checked.value;
    const found = tasks.get(taskId);
    const task = found && found.model === reqKey ? found : undefined;
    const fault = pickFault(req, url, '', faults);
    const answer = () => view(task, returnUrl, started);
    if (fault && (await applyFault(fault, res, (s) => gammaError(s), answer))) return;
    json(res, 200, answer());
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const started = performance.now();
    const file = FILE.exec(url.pathname);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) {
      stats.downloads++;
      const id = group(file, 1);
      const bytes = result(id, file[2] === undefined ? 0 : Number(file[2]));
      const video = file[2] === undefined;
      const kindOk = bytes && (dataOf(must(tasks.get(id), `task ${id}`)).plan.kind === 'video') === video;
      if (!bytes || !kindOk) return json(res, 404, envelope(50404, null, 'Not Found: the file does not exist or has expired', started));
      return serveBytes(req, res, bytes, video ? 'video/mp4' : 'image/png');
    }
    if (!url.pathname.endsWith('/') || req.method !== 'POST') {
      return json(res, 404, envelope(50404, null, `Not Found: ${req.method} ${url.pathname}`, started));
    }
    const action = url.searchParams.get('Action');
    if (!action || !ACTIONS.has(action) || url.searchParams.get('Version') !== VERSION) {
      return json(
        res,
        400,
        envelope(
          50400,
          null,
          `Invalid Request: InvalidActionOrVersion: Action ${action ?? '(none)'}, Version ${url.searchParams.get('Version') ?? '(none)'}`,
          started,
        ),
      );
    }
    const check = verifyGammaSignature({ method: req.method, target: req.url ?? '/', headers: req.headers, body: raw }, keys, clock());
    if (!check.ok) {
      const refusal = refusalOf(check);
      const body = responseMetadataError({ action, version: VERSION, service: keys.service, region: keys.region }, refusal);
      return json(res, refusal.status, body, { 'x-sim-refusal': `${check.reason}: ${check.detail}` });
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return json(res, 400, envelope(50400, null, 'Invalid Request: the body is not valid JSON', started));
    }
    if (action === 'CVSync2AsyncSubmitTask') return submit(req, res, url, body, started);
    return query(req, res, url, body, started);
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'gamma-volc',
    url: server.url,
    secrets: { access_key: keys.accessKey, secret_key: keys.secretKey },
    faults,
    stats,
    tasks,
    result,
    targets: server.targets,
    traces: server.traces,
    close: server.close,
  };
}
