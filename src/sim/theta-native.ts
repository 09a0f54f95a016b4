import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { dropOldest, group, must } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { TaskBook, type SimTask } from './task-book.js';
import { baseResp, DIMENSIONS, effective, invalidSubmit, isObject, pickThetaFault, thetaError, type BaseResp, type SubmitBody } from './theta-native-rules.js';

/**
 * A fake vendor speaking theta-native (docs/spec/upstream-protocols.md): asynchronous video with a two-step
 * result (query → file id → retrieve → expiring download URL). The xi line speaks it too.
 *
 * Every JSON answer carries `base_resp:{status_code, status_msg}`; 0 / "success" on success. Like the
 * vendor, its OWN refusals are HTTP 200 with the code in base_resp: 1002 rate limit, 1004 auth, 1008 no
 * balance, 1026 input refused, 1027 output refused, 2013 invalid params ("invalid params, <detail>").
 * Refusal bodies (also of auth and `code:NNNN`): submit `{task_id:"", base_resp}`, query `{task_id (as asked),
 * base_resp}`, retrieve `{base_resp}`.
 *
 * Auth: `Authorization: Bearer KEY` on submit, query and retrieve (secret name `key`). Missing or wrong:
 *   HTTP 200, base_resp 1004 "login fail: Please carry the API secret key in the 'Authorization' field…".
 *
 * Submit `POST /v1/video_generation` `{model, prompt, duration, resolution, first_frame_image,
 * last_frame_image, subject_reference, aigc_watermark, prompt_optimizer, remix_task_id, reference_videos,
 * reference_audios}` → `{task_id, base_resp}`. Checks (each a 2013; details in theta-native-rules.ts):
 *   body a JSON object; `model` required and known ("unknown model: X"); `prompt` a string of at most
 *   2000 characters (code points), required (non-blank) unless a first frame, subjects or references are
 *   given; `duration` integer; `resolution` string; images (`first_frame_image`, `last_frame_image`,
 *   subject images) are http(s) URLs or `data:image/(png|jpeg|jpg|webp);base64,…`; `aigc_watermark`,
 *   `prompt_optimizer` booleans; null counts as a wrong type, not as absent. Per model:
 *   | model                 | duration (default) | resolution (default)        | also takes                         |
 *   |-----------------------|--------------------|-----------------------------|------------------------------------|
 *   | theta-H3              | 4..15 (5)          | 768P, 2K (2K)               | last_frame_image (needs first),    |
 *   |                       |                    |                             | subject_reference, reference_*,    |
 *   |                       |                    |                             | remix_task_id                      |
 *   | xi-2.3, xi-2.3-fast   | 6 or 10 (6)        | 768P, 1080P (768P);         | first_frame_image only; the others |
 *   |                       |                    | 1080P only with 6 s         | → "<field> is not supported by M"  |
 *   `subject_reference`: non-empty `[{type:"character", image:[img, …]}]`, at most 9 images over all
 *   subjects. `reference_videos` / `reference_audios`: 1..3 http(s) URLs each; either one with a first or
 *   last frame → 2013. Remix (`remix_task_id`): takes a prompt (required) and nothing of frames, subjects
 *   or references; the id must name a task of this simulator that has SUCCEEDED at 768P (any model), else
 *   2013 "…the remix source must be a 768P video: task X is not a succeeded 768P task". A remix without
 *   `resolution` inherits 768P. Unknown fields are ignored. Markers `[sim:…]` are read from `prompt`.
 *
 * Query `GET /v1/query/video_generation?task_id=ID` → `{task_id, status, file_id, video_width,
 * video_height, base_resp}`. status: Preparing (first sixth of the run), Queueing (rest of the queued
 * third), Processing (running; for ever with `[sim:never]`), Success, Fail, or the `[sim:status=WORD]`
 * word. file_id is "" and width/height 0 until Success; then a decimal file id and 768P = 1366x768,
 * 1080P = 1920x1080, 2K = 2560x1440. Fail: base_resp 1026 (content refused) for `[sim:fail]`; for
 * `[sim:fail=NNNN]` (1000..9999) that code, e.g. 1027 output refused; for `[sim:fail=TEXT]` code 1000
 * with status_msg TEXT; for `[sim:fail=0]` base_resp 0 "success", the only Fail the vendor's own client
 * reads as a failed task (it takes any non-zero code for an API error before it reads `status`).
 * Missing task_id or unknown task: 2013 "invalid params, task not found" (also for forgotten tasks).
 *
 * Retrieve `GET /v1/files/retrieve?file_id=ID` → `{file:{file_id, bytes, created_at (unix s of the
 * finish), filename:"<file_id>.mp4", purpose:"video_generation", download_url}, base_resp}`; unknown
 * file_id: 2013 "invalid params, file not found". download_url =
 * `${base}/files/<file_id>.mp4?expires=<unix s>&sig=<hex HMAC-SHA256 of "file_id:expires">`, valid one hour
 * of the simulator's clock from the retrieve; every retrieve signs a fresh URL.
 * Download `GET|HEAD /files/<file_id>.mp4?expires&sig`: no auth, Range supported; missing or wrong sig →
 * 403 text "AccessDenied: signature does not match"; past `expires` → 403 "AccessDenied: request has
 * expired" (so a gateway must retrieve again, not cache the URL); unknown file → 404 "NoSuchKey".
 * `result(taskId, 0)` = the bytes of that download.
 *
 * Faults (faults.ts forms by x-sim-fault / sim_fault / prompt marker / queue) apply to submit, query and
 * retrieve (not downloads); a status fault is a REAL HTTP status with a `{base_resp}` body: 400/404 → 2013,
 * 401/403 → 1004, 402 → 1008, 429 → 1002 (+ retry-after: 2), 5xx → 1013, other → 1000. Extra form
 * `code:NNNN` (e.g. `x-sim-fault: code:1008`, `[sim:fault=code:1026]`): HTTP 200 with base_resp NNNN,
 * the way the vendor itself refuses; no task is created. Unknown paths: HTTP 404 `{base_resp}` 2013.
 * Order: path → auth → (submit) JSON parse (2013) → fault → body checks. A slow-body fault on a valid
 * submit still creates the task. Not simulated: callbacks, file listing/deletion, the vendor's own
 * upload API for file ids as inputs.
 */

/** Options of the theta-native simulator. */
export interface ThetaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const OK = baseResp(0);
const URL_TTL_S = 3600;
/** File ids remembered; the oldest are forgotten beyond it, like the task book's tasks. */
const MAX_FILES = 200_000;
const FILE = /^\/files\/([0-9]+)\.mp4$/;

/** Per-task facts the answers need, worked out once at submit. */
interface ThetaKind {
  readonly fileId: string;
  readonly resolution: string;
}

/** Starts a fake theta-native vendor (see the doc comment at the top of this file for its protocol). */
export async function startThetaNativeSimulator(opts: ThetaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-theta-${randomBytes(6).toString('hex')}`;
  const clock = opts.clock ?? Date.now;
  const signKey = randomBytes(32);
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, retrieves: 0, downloads: 0 };
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  const files = new Map<string, string>(); // file id → task id
  let base = '';

  const info = (task: SimTask) => JSON.parse(task.kind) as ThetaKind;
  const phaseOf = (task: SimTask) => tasks.state(task).phase;

  function status(task: SimTask): string {
    const phase = phaseOf(task);
    if (phase === 'queued') return clock() - task.createdAt < (task.finishAt - task.createdAt) / 6 ? 'Preparing' : 'Queueing';
    const words: Record<string, string> = { running: 'Processing', stuck: 'Processing', done: 'Success', failed: 'Fail' };
    return words[phase] ?? task.oddStatus ?? '';
  }

  /** base_resp of a failed task: 1026 by default, 0 for the reason "0", a 4-digit reason as the code, other reasons as 1000. */
  function failResp(reason: string): BaseResp {
    if (reason === 'generation_failed') return baseResp(1026);
    if (reason === '0') return OK;
    return /^[1-9][0-9]{3}$/.test(reason) ? baseResp(Number(reason)) : { status_code: 1000, status_msg: reason };
  }

  function queryView(task: SimTask): unknown {
    const word = status(task);
    const done = word === 'Success';
    const [w, h] = done ? must(DIMENSIONS[info(task).resolution], 'video dimensions') : [0, 0];
    return {
      task_id: task.id,
      status: word,
      file_id: done ? info(task).fileId : '',
      video_width: w,
      video_height: h,
      base_resp: word === 'Fail' ? failResp(must(task.failReason, 'fail reason')) : OK,
    };
  }

  function doneTask(fileId: string): SimTask | null {
    const task = tasks.get(files.get(fileId) ?? '');
    return task && phaseOf(task) === 'done' ? task : null;
  }

  const sign = (fileId: string, expires: number) => createHmac('sha256', signKey).update(`${fileId}:${expires}`).digest('hex');

  function retrieveView(fileId: string, task: SimTask): unknown {
    const expires = Math.floor(clock() / 1000) + URL_TTL_S;
    const download_url = `${base}/files/${fileId}.mp4?expires=${expires}&sig=${sign(fileId, expires)}`;
    const file = {
      file_id: fileId,
      bytes: makeMp4(task.id).length,
      created_at: Math.floor(task.finishAt / 1000),
      filename: `${fileId}.mp4`,
      purpose: 'video_generation',
      download_url,
    };
    return { file, base_resp: OK };
  }

  function result(id: string, index = 0): Buffer | null {
    const task = tasks.get(id);
    return task && index === 0 && phaseOf(task) === 'done' ? makeMp4(task.id) : null;
  }

  /** Why a download URL is refused, or null when its signature is good and unexpired. */
  function urlProblem(fileId: string, url: URL): string | null {
    const expires = url.searchParams.get('expires') ?? '';
    const sig = Buffer.from(url.searchParams.get('sig') ?? '', 'utf8');
    const good = Buffer.from(/^[0-9]{1,12}$/.test(expires) ? sign(fileId, Number(expires)) : '', 'utf8');
    if (good.length === 0 || sig.length !== good.length || !timingSafeEqual(sig, good)) return 'AccessDenied: signature does not match';
    return Number(expires) * 1000 <= clock() ? 'AccessDenied: request has expired' : null;
  }

  function download(req: IncomingMessage, res: ServerResponse, fileId: string, url: URL): void {
    stats.downloads++;
    const task = doneTask(fileId);
    const problem = task ? urlProblem(fileId, url) : 'NoSuchKey';
    if (task && !problem) {
      serveBytes(req, res, makeMp4(task.id), 'video/mp4');
      return;
    }
    res.writeHead(task ? 403 : 404, { 'content-type': 'text/plain' });
    res.end(problem);
  }

  /** Answers a fault; true when the fault replaced the answer. */
  async function faulted(req: IncomingMessage, res: ServerResponse, url: URL, prompt: string, normal: () => unknown, shell = {}): Promise<boolean> {
    const fault = pickThetaFault(req, url, prompt, faults);
    if (!fault) return false;
    if (fault.kind !== 'code') return applyFault(fault, res, (s) => thetaError(s), normal);
    json(res, 200, { ...shell, base_resp: baseResp(fault.code) });
    return true;
  }

  async function query(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    stats.queries++;
    const id = url.searchParams.get('task_id') ?? '';
    const task = tasks.get(id);
    const answer = () => (task ? queryView(task) : { task_id: id, base_resp: baseResp(2013, 'task not found') });
    if (await faulted(req, res, url, '', answer, { task_id: id })) return;
    if (task) task.polls++;
    json(res, 200, answer());
  }

  async function retrieve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    stats.retrieves++;
    const fileId = url.searchParams.get('file_id') ?? '';
    const task = doneTask(fileId);
    const answer = () => (task ? retrieveView(fileId, task) : { base_resp: baseResp(2013, 'file not found') });
    if (await faulted(req, res, url, '', answer)) return;
    json(res, 200, answer());
  }

  function accept(body: SubmitBody, prompt: string, remixRes: string | undefined): unknown {
    let fileId: string;
    do fileId = String(100_000_000_000_000 + randomBytes(6).readUIntBE(0, 6));
    while (files.has(fileId));
    const kind: ThetaKind = { fileId, resolution: effective(body, remixRes).resolution };
    const task = tasks.create({ model: body.model as string, prompt, body, kind: JSON.stringify(kind) });
    files.set(fileId, task.id);
    if (files.size > MAX_FILES) dropOldest(files);
    return { task_id: task.id, base_resp: OK };
  }

  /** The resolution of a succeeded task, for remix checks; null when it has not succeeded. */
  function remixSource(taskId: string): string | null {
    const task = tasks.get(taskId);
    return task && phaseOf(task) === 'done' ? info(task).resolution : null;
  }

  async function submit(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.submits++;
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return json(res, 200, { task_id: '', base_resp: baseResp(2013, 'request body is not valid JSON') });
    }
    const b = isObject(body) ? body : {};
    const prompt = typeof b.prompt === 'string' ? b.prompt : '';
    const problem = invalidSubmit(body, remixSource);
    const remixRes = typeof b.remix_task_id === 'string' ? (remixSource(b.remix_task_id) ?? undefined) : undefined;
    // slow-body sends the normal answer slowly, so a valid submit still creates its task then.
    const normal = () => (problem ? { task_id: '', base_resp: baseResp(2013, problem) } : accept(b, prompt, remixRes));
    if (await faulted(req, res, url, prompt, normal, { task_id: '' })) return;
    json(res, 200, normal());
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const file = FILE.exec(url.pathname);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) return download(req, res, group(file, 1), url);
    const route = `${req.method} ${url.pathname}`;
    const routes: Record<string, () => Promise<void>> = {
      'POST /v1/video_generation': () => submit(req, res, raw, url),
      'GET /v1/query/video_generation': () => query(req, res, url),
      'GET /v1/files/retrieve': () => retrieve(req, res, url),
    };
    const run = routes[route];
    if (!run) return json(res, 404, thetaError(404, `no route ${route}`));
    if (req.headers.authorization !== `Bearer ${key}`) {
      const shell = route.startsWith('POST') ? { task_id: '' } : route.includes('query') ? { task_id: url.searchParams.get('task_id') ?? '' } : {};
      return json(res, 200, { ...shell, base_resp: baseResp(1004) });
    }
    return run();
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'theta-native',
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
