import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyFault, pickFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { dropOldest, group, must } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking lambda-native (docs/spec/upstream-protocols.md): asynchronous video behind a signed JWT.
 *
 * Auth: `Authorization: Bearer <JWT>` built from secrets `access_key` and `secret_key`: header exactly
 * alg "HS256", typ "JWT"; signature HMAC-SHA256(secret_key, base64url(header) "." base64url(payload)), base64url
 * without padding; claims `iss` == access_key, numeric `exp` > now, numeric `nbf` <= now + 5 s (both required).
 * Every refusal is HTTP 401 with the envelope below and code: 1001 header missing or empty; 1002 not a Bearer
 * JWT, malformed, or a header other than HS256/JWT; 1000 signature or `iss` wrong; 1003 `nbf` in the future;
 * 1004 expired. Checked after the path, before the body.
 *
 * Paths (all relative to the base URL):
 *   POST /v1/videos/text2video | /v1/videos/image2video   (task.kind = the last segment)
 *   GET  /v1/videos/{text2video|image2video}/{task_id}    (the kind must be the submit kind, else 404 / 1203)
 *   GET  /files/{task_id}.mp4                             (no auth, like a CDN URL; Range supported)
 *
 * Envelope of every JSON answer: `{code, message, request_id, data?}`; code 0 and message "SUCCEED" on success.
 * Errors: 400 / 1201 invalid parameter (validation, bad JSON); 401 / 1000-1004 auth (above); 403 / 1103 no access;
 * 404 / 1203 unknown path or task; 429 / 1302 rate limited; 500 / 5000 internal; 503 / 5001 unavailable;
 * 504 / 5002 timeout; any other status: 4xx 1200, 5xx 5000.
 *
 * Submit body checks (400 / 1201): a JSON object with only the fields the vendor's documents list for the kind
 * (FIELDS below: text2video has `aspect_ratio`, image2video has not, its video follows the image; neither has
 * `output_config`). Stricter than the vendor on purpose: another field is refused ("unknown field
 * output_config"), where the vendor may ignore it, so that a profile sending one is caught. `model_name` string
 * (default "lambda-v1"); `prompt` string of at most 2500 characters, non-empty for text2video; `negative_prompt`
 * string <= 2500; `cfg_scale` number 0..1; `mode` std|pro; `sound` (the audio toggle) the string "on" or "off";
 * `duration` the STRING "5" or "10" (a number is refused); `aspect_ratio` 16:9|9:16|1:1; `image` (required for
 * image2video) and `image_tail`: an http(s) URL or raw base64; a `data:` URI is refused; `camera_control` an
 * object; `callback_url` an http(s) URL; `external_task_id` a string, unique per simulator. The other documented
 * fields (masks, multi-shot, voices, watermark) are taken unchecked.
 * The `[sim:…]` markers are read from `prompt`.
 *
 * Submit answer: `data:{task_id, task_status:"submitted", task_info:{external_task_id?}, created_at, updated_at}`
 * (milliseconds). A query names the task by its task_id or by the external_task_id it was submitted with. Query answer: `data:{task_id, task_status, task_status_msg?, task_info, created_at, updated_at,
 * task_result?}`; task_status `submitted` (queued), `processing` (running, and for ever with `[sim:never]`),
 * `succeed`, `failed`, or the `[sim:status=WORD]` word; task_status_msg only when failed (the fail reason);
 * task_result only on success: `{videos:[{id, url, duration}]}`, duration the requested string. Result index 0 = url.
 */

/** Options of the lambda-native simulator. */
export interface LambdaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly accessKey?: string;
  readonly secretKey?: string;
  readonly clock?: () => number;
}

/** The outcome of a JWT check: the claims, or the vendor's auth error code and message. */
export type JwtCheck = { ok: true; claims: Record<string, unknown> } | { ok: false; code: number; message: string };

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const NBF_LEEWAY_S = 5;
/** External ids remembered for the uniqueness check; the oldest are forgotten beyond it. */
const MAX_EXTERNAL_IDS = 200_000;
const SUBMIT = /^\/v1\/videos\/(text2video|image2video)$/;
const QUERY = /^\/v1\/videos\/(text2video|image2video)\/([A-Za-z0-9_-]+)$/;
const FILE = /^\/files\/([A-Za-z0-9_-]+)\.mp4$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** The fields of the vendor's text-to-video and image-to-video documents (`model` is the old name of `model_name`). */
const COMMON_FIELDS = [
  'model',
  'model_name',
  'prompt',
  'negative_prompt',
  'cfg_scale',
  'mode',
  'sound',
  'camera_control',
  'duration',
  'callback_url',
  'external_task_id',
  'multi_shot',
  'shot_type',
  'multi_prompt',
  'voice_list',
  'watermark_info',
];
const FIELDS: Record<string, Set<string>> = {
  text2video: new Set([...COMMON_FIELDS, 'aspect_ratio']),
  image2video: new Set([...COMMON_FIELDS, 'image', 'image_tail', 'static_mask', 'dynamic_masks']),
};
const CODES: Record<number, [number, string]> = {
  400: [1201, 'invalid request parameters'],
  401: [1000, 'authentication failed'],
  403: [1103, 'no access to the requested resource'],
  404: [1203, 'requested resource does not exist'],
  429: [1302, 'request rate exceeds the limit'],
  500: [5000, 'server internal error'],
  503: [5001, 'server temporarily unavailable'],
  504: [5002, 'server internal timeout'],
};

/** The vendor's envelope for an error status; `code` overrides the code chosen by status. */
export function lambdaError(status: number, message?: string, code?: number): unknown {
  const [byStatus, text] = CODES[status] ?? [status >= 500 ? 5000 : 1200, `simulated error ${status}`];
  return { code: code ?? byStatus, message: message ?? text, request_id: randomUUID() };
}

function parseSegment(seg: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(seg, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Verifies an HS256 JWT the way the vendor does: header alg HS256 / typ JWT, HMAC-SHA256 signature with
 * `secretKey`, `iss` == `accessKey`, `exp` > now, `nbf` <= now + 5 s. The reference for the gateway's signer.
 */
export function verifyHs256Jwt(token: string, accessKey: string, secretKey: string, nowSeconds: number): JwtCheck {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) return { ok: false, code: 1002, message: 'authorization is not a valid JWT' };
  const [h, p, sig] = parts as [string, string, string];
  const header = parseSegment(h);
  const claims = parseSegment(p);
  if (!header || !claims) return { ok: false, code: 1002, message: 'authorization is not a valid JWT' };
  if (header.alg !== 'HS256' || header.typ !== 'JWT') return { ok: false, code: 1002, message: 'JWT header must be alg HS256, typ JWT' };
  const want = Buffer.from(createHmac('sha256', secretKey).update(`${h}.${p}`).digest('base64url'));
  const given = Buffer.from(sig);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return { ok: false, code: 1000, message: 'JWT signature mismatch' };
  if (claims.iss !== accessKey) return { ok: false, code: 1000, message: 'unknown access key' };
  if (typeof claims.exp !== 'number' || typeof claims.nbf !== 'number') return { ok: false, code: 1002, message: 'JWT needs numeric exp and nbf' };
  if (claims.exp <= nowSeconds) return { ok: false, code: 1004, message: 'authorization has expired' };
  if (claims.nbf > nowSeconds + NBF_LEEWAY_S) return { ok: false, code: 1003, message: 'authorization is not yet valid' };
  return { ok: true, claims };
}

type Body = Record<string, unknown>;

function checkImage(v: unknown, field: string): string | null {
  if (typeof v !== 'string' || v === '') return `${field} must be a URL or base64 string`;
  if (v.startsWith('data:')) return `${field} must be a URL or raw base64 without the data: prefix`;
  if (/^https?:\/\/\S+$/.test(v) || BASE64.test(v)) return null;
  return `${field} is neither a URL nor valid base64`;
}

/** The vendor's 400 message for a submit body of `kind`, or null when it is acceptable. */
function validate(kind: string, b: Body): string | null {
  const fields = must(FIELDS[kind], `fields of ${kind}`);
  const unknown = Object.keys(b).find((k) => !fields.has(k));
  if (unknown !== undefined) return `unknown field ${unknown} for ${kind}`;
  if (b.model_name !== undefined && (typeof b.model_name !== 'string' || b.model_name === '')) return 'model_name must be a string';
  for (const f of ['prompt', 'negative_prompt']) {
    if (b[f] !== undefined && (typeof b[f] !== 'string' || (b[f] as string).length > 2500)) return `${f} must be a string of at most 2500 characters`;
  }
  if (kind === 'text2video' && (typeof b.prompt !== 'string' || b.prompt.trim() === '')) return 'prompt is required';
  if (b.cfg_scale !== undefined && !(typeof b.cfg_scale === 'number' && b.cfg_scale >= 0 && b.cfg_scale <= 1)) return 'cfg_scale must be a number from 0 to 1';
  if (b.mode !== undefined && b.mode !== 'std' && b.mode !== 'pro') return 'mode must be std or pro';
  if (b.sound !== undefined && b.sound !== 'on' && b.sound !== 'off') return 'sound must be "on" or "off"';
  if (b.duration !== undefined && b.duration !== '5' && b.duration !== '10') return 'duration must be the string "5" or "10"';
  if (b.aspect_ratio !== undefined && !['16:9', '9:16', '1:1'].includes(b.aspect_ratio as string)) return 'aspect_ratio must be 16:9, 9:16 or 1:1';
  if (kind === 'image2video' || b.image !== undefined) {
    const bad = checkImage(b.image, 'image');
    if (bad) return kind === 'image2video' && b.image === undefined ? 'image is required' : bad;
  }
  if (b.image_tail !== undefined) {
    const bad = checkImage(b.image_tail, 'image_tail');
    if (bad) return bad;
  }
  if (b.camera_control !== undefined && (typeof b.camera_control !== 'object' || b.camera_control === null || Array.isArray(b.camera_control))) {
    return 'camera_control must be an object';
  }
  if (b.callback_url !== undefined && !(typeof b.callback_url === 'string' && /^https?:\/\/\S+$/.test(b.callback_url)))
    return 'callback_url must be an http(s) URL';
  if (b.external_task_id !== undefined && typeof b.external_task_id !== 'string') return 'external_task_id must be a string';
  return null;
}

/**
 * Starts a fake lambda-native vendor: JWT auth verified exactly, text2video and image2video tasks, the
 * per-kind query, unauthenticated result URLs with Range support, and every fault of faults.ts.
 */
export async function startLambdaSimulator(opts: LambdaSimOptions = {}): Promise<Simulator> {
  const accessKey = opts.accessKey ?? `sim-lambda-ak-${randomBytes(6).toString('hex')}`;
  const secretKey = opts.secretKey ?? `sim-lambda-sk-${randomBytes(12).toString('hex')}`;
  const clock = opts.clock ?? Date.now;
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock });
  /** external_task_id → the vendor's task id: a query may name a task by either (as the vendor allows). */
  const externalIds = new Map<string, string>();
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0 };
  let base = '';

  const ok = (data: unknown) => ({ code: 0, message: 'SUCCEED', request_id: randomUUID(), data });
  const info = (b: Body) => (typeof b.external_task_id === 'string' ? { external_task_id: b.external_task_id } : {});

  function view(task: SimTask): unknown {
    const { phase } = tasks.state(task);
    const body = task.body as Body;
    const now = clock();
    const data: Record<string, unknown> = {
      task_id: task.id,
      task_status: { queued: 'submitted', running: 'processing', stuck: 'processing', done: 'succeed', failed: 'failed', odd: task.oddStatus }[phase],
      task_info: info(body),
      created_at: task.createdAt,
      updated_at: phase === 'done' || phase === 'failed' ? task.finishAt : phase === 'queued' ? task.createdAt : now,
    };
    if (phase === 'failed') data.task_status_msg = task.failReason ?? 'generation_failed';
    if (phase === 'done') {
      data.task_result = { videos: [{ id: `${task.id}-0`, url: `${base}/files/${task.id}.mp4`, duration: (body.duration as string | undefined) ?? '5' }] };
    }
    return ok(data);
  }

  async function submit(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL, kind: string): Promise<void> {
    stats.submits++;
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return json(res, 400, lambdaError(400, 'request body is not valid JSON'));
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return json(res, 400, lambdaError(400, 'request body must be a JSON object'));
    const b = body as Body;
    // Validation comes before faults so that a slow-body fault still answers a real, created task.
    const bad = validate(kind, b);
    if (bad) return json(res, 400, lambdaError(400, bad));
    if (typeof b.external_task_id === 'string' && externalIds.has(b.external_task_id)) {
      return json(res, 400, lambdaError(400, `external_task_id ${b.external_task_id} already exists`));
    }
    const prompt = typeof b.prompt === 'string' ? b.prompt : '';
    const answer = () => {
      const task = tasks.create({ model: (b.model_name as string | undefined) ?? 'lambda-v1', prompt, body: b, kind });
      if (typeof b.external_task_id === 'string') externalIds.set(b.external_task_id, task.id);
      if (externalIds.size > MAX_EXTERNAL_IDS) dropOldest(externalIds);
      return ok({ task_id: task.id, task_status: 'submitted', task_info: info(b), created_at: task.createdAt, updated_at: task.createdAt });
    };
    const fault = pickFault(req, url, prompt, faults);
    if (fault && (await applyFault(fault, res, (s) => lambdaError(s), answer))) return;
    json(res, 200, answer());
  }

  async function query(req: IncomingMessage, res: ServerResponse, url: URL, kind: string, id: string): Promise<void> {
    stats.queries++;
    const known = externalIds.get(id);
    const found = tasks.get(id) ?? (known === undefined ? undefined : tasks.get(known));
    const task = found && found.kind === kind ? found : undefined;
    const answer = () => {
      if (!task) return lambdaError(404, `task ${id} does not exist`);
      task.polls++;
      return view(task);
    };
    const fault = pickFault(req, url, '', faults);
    if (fault && (await applyFault(fault, res, (s) => lambdaError(s), answer))) return;
    json(res, task ? 200 : 404, answer());
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const file = FILE.exec(url.pathname);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) {
      const data = result(group(file, 1));
      if (!data) return json(res, 404, lambdaError(404, 'file does not exist'));
      return serveBytes(req, res, data, 'video/mp4');
    }
    const sub = req.method === 'POST' ? SUBMIT.exec(url.pathname) : null;
    const qry = req.method === 'GET' ? QUERY.exec(url.pathname) : null;
    if (!sub && !qry) return json(res, 404, lambdaError(404, `${req.method} ${url.pathname} does not exist`));
    const auth = req.headers.authorization;
    if (!auth || auth.trim() === '') return json(res, 401, lambdaError(401, 'authorization is empty', 1001));
    const m = /^Bearer (\S+)$/.exec(auth);
    const check = m
      ? verifyHs256Jwt(group(m, 1), accessKey, secretKey, Math.floor(clock() / 1000))
      : ({ ok: false, code: 1002, message: 'authorization must be Bearer <JWT>' } as const);
    if (!check.ok) return json(res, 401, lambdaError(401, check.message, check.code));
    if (sub) return submit(req, res, raw, url, group(sub, 1));
    if (qry) return query(req, res, url, group(qry, 1), group(qry, 2));
  }

  function result(id: string, index = 0): Buffer | null {
    const task = tasks.get(id);
    if (index !== 0 || !task || tasks.state(task).phase !== 'done') return null;
    return makeMp4(task.id);
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'lambda-native',
    url: server.url,
    secrets: { access_key: accessKey, secret_key: secretKey },
    faults,
    stats,
    tasks,
    result,
    targets: server.targets,
    traces: server.traces,
    close: server.close,
  };
}
