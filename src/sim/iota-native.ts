import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { group, must } from './invariants.js';
import { makeMp3, makeMp4, serveBytes } from './media.js';
import { makePng } from './png.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking iota-native (docs/spec/upstream-protocols.md): asynchronous audio with a batch query.
 *
 * Auth: `Authorization: Bearer KEY` on submit and both queries (secret name `key`). Missing or wrong key:
 *   401 `{code:"unauthorized", message:"invalid api key", data:null}`. Checked after the path, before the body.
 *
 * Submit `POST /submit/music` or `POST /submit/lyrics`, body `{prompt, gpt_description_prompt, mv, title,
 * tags, make_instrumental, continue_clip_id, continue_at}`. Checks, each failing with 400
 * `{code:"error", message, data:null}`: a JSON object ("invalid request body"); `mv` present and starting
 * with `iota-` for BOTH actions ("invalid mv"); at least one of `prompt`, `gpt_description_prompt` a
 * non-empty string, for BOTH actions ("prompt or gpt_description_prompt is required"); when present:
 * `prompt`, `gpt_description_prompt`, `title`, `tags`, `continue_clip_id` strings, `make_instrumental`
 * boolean, `continue_at` a number >= 0 ("invalid <field>"). `continue_clip_id` is not checked against
 * known clips. Markers `[sim:…]` are read from `prompt` and `gpt_description_prompt` (both, joined).
 *   → 200 `{code:"success", message:"", data:"<task id>"}`.
 *
 * Single query `GET /fetch/{id}` → 200 `{code:"success", message:"", data:TASK}`; unknown id: 404
 * `{code:"error", message:"task not found", data:null}`.
 * Batch query `POST /fetch {ids:[…]}` (1..100 strings, else 400 "ids must be an array of 1 to 100 task
 * ids") → 200 `{code:"success", message:"", data:[TASK…]}` in the order asked, duplicates once, unknown
 * ids left out (so it may be `[]`).
 * TASK = `{task_id, action:"MUSIC"|"LYRICS", status, fail_reason, submit_time, start_time, finish_time,
 * progress, data}`. status: NOT_START / SUBMITTED / QUEUED over the first, second and last third of the
 * queued phase; IN_PROGRESS while running (and for ever with `[sim:never]`); SUCCESS; FAILURE; or the
 * `[sim:status=WORD]` word (UNKNOWN is never produced by itself). fail_reason: "" unless FAILURE, then the
 * reason (`generation_failed` or the `[sim:fail=TEXT]` text). Times are Unix seconds, 0 until reached
 * (start_time: the task starts running; finish_time: it ended). progress: "0%" queued, "N%" running,
 * "100%" ended. data: `[]` until SUCCESS, then:
 *   MUSIC: two clips `{id, audio_url, image_url, video_url, title, status:"complete", metadata:{tags,
 *     prompt, duration}}`; title = body title or "Untitled"; metadata.prompt = `prompt`, else
 *     `gpt_description_prompt`; tags = body tags or ""; duration = seconds of the MP3 (a number).
 *   LYRICS: `[{text, title}]`, no files.
 *
 * Files (no auth, like CDN URLs; GET/HEAD, Range supported; 404 until SUCCESS):
 *   `${base}/files/<task id>-<clip>.mp3` audio, `.png` cover image, `.mp4` video, clip 0 or 1.
 * `result(id, index)` indexes: 0 clip0 audio, 1 clip0 image, 2 clip0 video, 3 clip1 audio, 4 clip1 image,
 * 5 clip1 video. A LYRICS task has no result (null for every index).
 *
 * Error bodies (also of `x-sim-fault: <status>`): `{code:"error", message, data:null}` with message
 * 400 "bad request", 401 (code "unauthorized") "invalid api key", 404 "not found", 429 "too many requests",
 * 500 "internal server error", 502 "bad gateway", 503 "service unavailable", 504 "gateway timeout".
 * Order on submit: path → auth → JSON parse → fault → body checks. Faults apply to submits and both queries.
 */

/** Options of the iota-native simulator. */
export interface IotaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const MESSAGES: Record<number, string> = {
  400: 'bad request',
  401: 'invalid api key',
  404: 'not found',
  429: 'too many requests',
  500: 'internal server error',
  502: 'bad gateway',
  503: 'service unavailable',
  504: 'gateway timeout',
};
const KINDS = ['audio', 'image', 'video'] as const;
const EXT = { audio: 'mp3', image: 'png', video: 'mp4' } as const;
const TYPES = { mp3: 'audio/mpeg', png: 'image/png', mp4: 'video/mp4' } as const;
const MP3_BYTES = 32 * 1024;
/** makeMp3 writes 128 kbit/s frames after a 10-byte tag: the clip's length in seconds. */
const CLIP_SECONDS = Math.round((((MP3_BYTES - 10) * 8) / 128_000) * 100) / 100;

/** The vendor's error body for a status (see the doc comment above). */
export function iotaError(status: number, message?: string): unknown {
  return { code: status === 401 ? 'unauthorized' : 'error', message: message ?? MESSAGES[status] ?? `error ${status}`, data: null };
}

interface Body {
  prompt?: unknown;
  gpt_description_prompt?: unknown;
  mv?: unknown;
  title?: unknown;
  tags?: unknown;
  make_instrumental?: unknown;
  continue_clip_id?: unknown;
  continue_at?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown) => (typeof v === 'string' ? v : '');
const seconds = (ms: number) => Math.floor(ms / 1000);

/** The vendor's 400 message for a submit body, or null when it is acceptable. */
function invalid(body: Body): string | null {
  if (!isObject(body)) return 'invalid request body';
  if (typeof body.mv !== 'string' || !body.mv.startsWith('iota-')) return 'invalid mv';
  for (const f of ['prompt', 'gpt_description_prompt', 'title', 'tags', 'continue_clip_id'] as const) {
    if (body[f] !== undefined && body[f] !== null && typeof body[f] !== 'string') return `invalid ${f}`;
  }
  if (!text(body.prompt).trim() && !text(body.gpt_description_prompt).trim()) return 'prompt or gpt_description_prompt is required';
  if (body.make_instrumental !== undefined && typeof body.make_instrumental !== 'boolean') return 'invalid make_instrumental';
  const at = body.continue_at;
  if (at !== undefined && at !== null && (typeof at !== 'number' || !Number.isFinite(at) || at < 0)) return 'invalid continue_at';
  return null;
}

/** A UUID-shaped id derived from a seed, so clip ids need no storage. */
function derivedId(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Starts a fake iota-native vendor (see the doc comment at the top of this file for its protocol). */
export async function startIotaSimulator(opts: IotaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-iota-${randomBytes(6).toString('hex')}`;
  const clock = opts.clock ?? Date.now;
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, batch_queries: 0 };
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  let base = '';

  function status(task: SimTask): { word: string; progress: number } {
    const { phase, progress } = tasks.state(task);
    if (phase === 'queued') {
      // The queued third of the run is split again: not started, then submitted, then queued.
      const third = Math.max(1, task.finishAt - task.createdAt) / 9;
      const elapsed = clock() - task.createdAt;
      return { word: elapsed < third ? 'NOT_START' : elapsed < 2 * third ? 'SUBMITTED' : 'QUEUED', progress };
    }
    const word =
      phase === 'odd' ? must(task.oddStatus, 'odd status') : { running: 'IN_PROGRESS', stuck: 'IN_PROGRESS', done: 'SUCCESS', failed: 'FAILURE' }[phase];
    return { word, progress };
  }

  function clips(task: SimTask): unknown[] {
    const body = task.body as Body;
    const title = text(body.title) || 'Untitled';
    if (task.kind === 'LYRICS') {
      const theme = task.prompt.replace(/\[sim:[^\]]*\]/g, '').trim();
      return [{ title, text: `[Verse]\n${theme}\n\n[Chorus]\n${theme}, again and again\n` }];
    }
    return [0, 1].map((k) => {
      const [audio_url, image_url, video_url] = KINDS.map((kind) => `${base}/files/${task.id}-${k}.${EXT[kind]}`);
      const metadata = { tags: text(body.tags), prompt: text(body.prompt) || text(body.gpt_description_prompt), duration: CLIP_SECONDS };
      return { id: derivedId(`${task.id}:${k}`), audio_url, image_url, video_url, title, status: 'complete', metadata };
    });
  }

  function view(task: SimTask): unknown {
    const { word, progress } = status(task);
    const { phase } = tasks.state(task);
    const ended = phase === 'done' || phase === 'failed';
    const started = ended || phase === 'running' || phase === 'stuck';
    return {
      task_id: task.id,
      action: task.kind,
      status: word,
      fail_reason: phase === 'failed' ? task.failReason : '',
      submit_time: seconds(task.createdAt),
      start_time: started ? seconds(task.createdAt + Math.floor((task.finishAt - task.createdAt) / 3)) : 0,
      finish_time: ended ? seconds(task.finishAt) : 0,
      progress: `${ended ? 100 : progress}%`,
      data: phase === 'done' ? clips(task) : [],
    };
  }

  function result(id: string, index = 0): Buffer | null {
    const task = tasks.get(id);
    if (task?.kind !== 'MUSIC' || !Number.isInteger(index) || index < 0 || index > 5) return null;
    if (tasks.state(task).phase !== 'done') return null;
    const seed = `${task.id}:${Math.floor(index / 3)}`;
    const kind = must(KINDS[index % 3], `kind of result ${index}`);
    if (kind === 'audio') return makeMp3(seed, MP3_BYTES);
    if (kind === 'video') return makeMp4(seed);
    return makePng(32, 32, createHash('sha256').update(seed).digest().readUInt8(0));
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const file = /^\/files\/([A-Za-z0-9]+)-([01])\.(mp3|png|mp4)$/.exec(url.pathname);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) {
      const ext = file[3] as keyof typeof TYPES;
      const bytes = result(group(file, 1), Number(file[2]) * 3 + { mp3: 0, png: 1, mp4: 2 }[ext]);
      return bytes ? serveBytes(req, res, bytes, TYPES[ext]) : json(res, 404, iotaError(404, 'file not found'));
    }
    const submit = /^\/submit\/(music|lyrics)$/.exec(url.pathname);
    const single = /^\/fetch\/([^/]+)$/.exec(url.pathname);
    const batch = url.pathname === '/fetch';
    if (!((submit || batch) && req.method === 'POST') && !(single && req.method === 'GET')) return json(res, 404, iotaError(404));
    if (req.headers.authorization !== `Bearer ${key}`) return json(res, 401, iotaError(401));

    if (single) {
      stats.queries++;
      const task = tasks.get(decodeURIComponent(group(single, 1)));
      const answer = () => (task ? { code: 'success', message: '', data: view(task) } : iotaError(404, 'task not found'));
      const fault = pickFault(req, url, '', faults);
      if (fault && (await applyFault(fault, res, (s) => iotaError(s), answer))) return;
      if (!task) return json(res, 404, answer());
      task.polls++;
      return json(res, 200, answer());
    }

    let body: Body & { ids?: unknown };
    try {
      body = JSON.parse(raw.toString('utf8')) as Body & { ids?: unknown };
    } catch {
      return json(res, 400, iotaError(400, 'invalid request body'));
    }

    if (batch) {
      stats.batch_queries++;
      const ids = isObject(body) ? body.ids : undefined;
      const ok = Array.isArray(ids) && ids.length >= 1 && ids.length <= 100 && ids.every((i) => typeof i === 'string');
      const found = ok ? [...new Set(ids as string[])].flatMap((i) => tasks.get(i) ?? []) : [];
      const answer = () => ({ code: 'success', message: '', data: found.map(view) });
      const fault = pickFault(req, url, '', faults);
      if (fault && (await applyFault(fault, res, (s) => iotaError(s), answer))) return;
      if (!ok) return json(res, 400, iotaError(400, 'ids must be an array of 1 to 100 task ids'));
      for (const t of found) t.polls++;
      return json(res, 200, answer());
    }

    stats.submits++;
    const prompt = isObject(body) ? [text(body.prompt), text(body.gpt_description_prompt)].join('\n') : '';
    const problem = invalid(body);
    const kind = group(must(submit, 'submit path'), 1).toUpperCase();
    const accept = () => {
      const task = tasks.create({ model: body.mv as string, prompt, body, kind });
      return { code: 'success', message: '', data: task.id };
    };
    // slow-body sends the normal answer slowly, so a valid submit still creates its task then.
    const fault = pickFault(req, url, prompt, faults);
    if (
      fault &&
      (await applyFault(
        fault,
        res,
        (s) => iotaError(s),
        () => (problem ? iotaError(400, problem) : accept()),
      ))
    )
      return;
    if (problem) return json(res, 400, iotaError(400, problem));
    json(res, 200, accept());
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'iota-native',
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
