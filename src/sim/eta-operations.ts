import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { alphaError, alphaFaultError } from './alpha-native.js';
import { etaInvalid, etaPrompt, etaSamples } from './eta-operations-check.js';
import { applyFault, pickFault, type Fault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { group } from './invariants.js';
import { makeMp4, serveBytes } from './media.js';
import { TaskBook, type SimTask } from './task-book.js';

/**
 * A fake vendor speaking eta-operations (docs/spec/upstream-protocols.md): video as long-running operations,
 * the Gemini API's Veo predictLongRunning, checked against @google/genai in Gemini API mode
 * (test/contract/genai-eta.test.ts: what the SDK sends is accepted, what it refuses is refused).
 *
 * Auth (secret name `key`): header `x-goog-api-key: KEY`, or the query `?key=KEY`, on every route
 * (downloads too). Missing key: 403 PERMISSION_DENIED "Method doesn't allow unregistered callers …".
 * Wrong key: 400 INVALID_ARGUMENT "API key not valid. Please pass a valid API key." (with an ErrorInfo
 * detail, reason API_KEY_INVALID), as the vendor answers.
 *
 * Errors: the alpha-native shape `{"error":{"code","message","status"}}` (alphaError): 400
 * INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND (also unknown paths and
 * methods), 429 RESOURCE_EXHAUSTED (with `retry-after: 2` when faulted; a `STATUS:wait:S` fault
 * states the wait in a RetryInfo detail instead), 500 INTERNAL, 503 UNAVAILABLE.
 *
 * Submit `POST /v1beta/models/{model}:predictLongRunning`, models `eta_3_1` and `eta_3_1-fast`.
 * Order: path → auth → JSON parse (400 "Invalid JSON payload received.") → fault → model (404 NOT_FOUND
 * "models/{model} is not found for API version v1beta, or is not supported for predictLongRunning.")
 * → body (400 INVALID_ARGUMENT; eta-operations-check.ts). Body checks, in order:
 *   a JSON object with only `instances` and `parameters` (any unknown field anywhere, at top level, in
 *   the instance, an image or `parameters`: "Invalid JSON payload received. Unknown name "x" at '…':
 *   Cannot find field."); `instances` holds exactly one instance; `prompt` a non-empty string;
 *   `image` / `lastFrame` `{bytesBase64Encoded, mimeType}` with mimeType image/png|image/jpeg|image/webp
 *   and valid base64 (standard or URL-safe, padding optional, not empty); `lastFrame` needs `image`;
 *   `referenceImages` 1..3 items `{image, referenceType}`, never with `image` or `lastFrame`;
 *   referenceType is "ASSET" (the SDK's enum value; "asset", as REST examples write it, too; "STYLE"
 *   is refused: a Veo 2 feature these models lack);
 *   `parameters` an object: aspectRatio "16:9"|"9:16" (default "16:9"), durationSeconds the NUMBER
 *   4|6|8 (default 8), resolution "720p"|"1080p" (default "720p"; "1080p" only with 8 s),
 *   negativePrompt string, personGeneration "allow_all"|"allow_adult"|"dont_allow", sampleCount (the
 *   SDK's numberOfVideos) an integer 1..4 (default 1; that many samples are made); with
 *   referenceImages aspectRatio must be "16:9" (landscape only, which is why the gateway steers
 *   reference-to-video to landscape) and durationSeconds 8. The parameters the SDK refuses in Gemini
 *   API mode as Vertex-only (seed, generateAudio, storageUri, fps, pubsubTopic, compressionQuality,
 *   resizeMode) are refused by name: "`seed` isn't supported by this model. …" (the models make
 *   audio always; the wording is ours, the refusal the SDK's).
 *   → 200 `{name:"models/{model}/operations/{id}"}` (id: 24 hex digits).
 * A slow-body fault on a valid submit still creates the operation (its name is in the slow answer).
 *
 * Poll `GET /v1beta/models/{model}/operations/{id}` (the `name`; the model must match) → 200:
 *   queued (first third of the run)  `{name}`  (no `done` at all)
 *   running, and for ever with `[sim:never]`  `{name, done:false, metadata:{"@type":METADATA_TYPE}}`
 *     (PredictLongRunningMetadata has no fields: the vendor states no progress); the two forms let
 *     the gateway meet both ways the vendor says "not done"
 *   succeeded  `{name, done:true, response:{"@type":RESPONSE_TYPE, generateVideoResponse:
 *     {generatedSamples:[{video:{uri}}, …]}}}`, one sample per sampleCount; the uri of sample i is
 *     the file `{id}` (i = 0) or `{id}s{i}`: an id of [a-z0-9] only, as the SDK reads it from the uri
 *   failed (`[sim:fail[=R]]`)  `{name, done:true, error:{code:3, message:R}}` (R defaults to
 *     "generation_failed")
 *   safety-filtered (`[sim:filtered]`, at the finish time; `[sim:fail]` wins over it)  `{name,
 *     done:true, response:{"@type", generateVideoResponse:{raiMediaFilteredCount:1,
 *     raiMediaFilteredReasons:[FILTER_REASON]}}}` with no samples.
 *   Unknown operation: 404 NOT_FOUND. `[sim:status=WORD]` means nothing here (the protocol has no
 *   status word): it is dropped from the prompt before the task is booked.
 *
 * Download `GET|HEAD /v1beta/files/{id}:download?alt=media` (the `uri`): needs the key like every
 * route; without `alt=media` 400 INVALID_ARGUMENT; the MP4 with Range (206/416); 404 NOT_FOUND unless
 * the operation succeeded. Faults apply here only when named by header or query (never queued ones,
 * so `sim.faults` stays for the API calls); slow-body sends half the bytes, waits, then the rest.
 * `result(name|id, i)` is the bytes served for sample i; it accepts the full operation name or the bare id.
 *
 * Stats: requests, submits, queries, downloads. Not simulated: cancelling or listing operations,
 * files API uploads, video extension (`instances[0].video`), `enhancePrompt` and `webhookConfig`
 * (the SDK sends them in Gemini API mode when asked; refused here as unknown names).
 */

/** Options of the eta-operations simulator. */
export interface EtaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly finishMs?: number;
  readonly key?: string;
  readonly clock?: () => number;
}

const MODELS = new Set(['eta_3_1', 'eta_3_1-fast']);
/** The type URLs of the operation's response and metadata (prediction_service.proto's operation_info). */
export const RESPONSE_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';
export const METADATA_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningMetadata';
export const FILTER_REASON = 'The video could not be generated because the prompt or the output may violate the usage guidelines.';
const UNREGISTERED =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
const SUBMIT = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/;
const POLL = /^\/v1beta\/models\/([^/:]+)\/operations\/([^/:]+)$/;
const DOWNLOAD = /^\/v1beta\/files\/([^/:]+):download$/;
/** A file id: the operation's id, then `s{i}` for sample i > 0. */
const FILE_ID = /^([0-9a-f]+?)(?:s([1-9][0-9]*))?$/;
const NAME = /^models\/[^/]+\/operations\/([^/]+)$/;
const STATUS_MARKER = /\[sim:status=[A-Za-z0-9_-]{1,32}\]/g;

/** Starts a fake eta-operations vendor (see the doc comment at the top of this file for its protocol). */
export async function startEtaOperationsSimulator(opts: EtaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-eta-${randomBytes(6).toString('hex')}`;
  const faults: string[] = [];
  const stats = { requests: 0, submits: 0, queries: 0, downloads: 0 };
  const tasks = new TaskBook({ finishMs: opts.finishMs, clock: opts.clock ?? Date.now });
  let base = '';

  const opName = (task: SimTask) => `models/${task.model}/operations/${task.id}`;
  const filtered = (task: SimTask) => task.prompt.includes('[sim:filtered]');

  /** The operation resource as a poll answers it now. */
  function operation(task: SimTask): unknown {
    const name = opName(task);
    const { phase } = tasks.state(task);
    if (phase === 'queued') return { name };
    if (phase === 'failed') return { name, done: true, error: { code: 3, message: task.failReason } };
    if (phase !== 'done') return { name, done: false, metadata: { '@type': METADATA_TYPE } };
    const generateVideoResponse = filtered(task)
      ? { raiMediaFilteredCount: 1, raiMediaFilteredReasons: [FILTER_REASON] }
      : {
          generatedSamples: Array.from({ length: etaSamples(task.body) }, (_, i) => ({
            video: { uri: `${base}/v1beta/files/${fileId(task, i)}:download?alt=media` },
          })),
        };
    return { name, done: true, response: { '@type': RESPONSE_TYPE, generateVideoResponse } };
  }

  const fileId = (task: SimTask, index: number) => (index === 0 ? task.id : `${task.id}s${index}`);

  function result(id: string, index = 0): Buffer | null {
    const task = tasks.get(NAME.exec(id)?.[1] ?? id);
    const made = task && tasks.state(task).phase === 'done' && !filtered(task) ? etaSamples(task.body) : 0;
    return task && index >= 0 && index < made ? makeMp4(fileId(task, index)) : null;
  }

  /** The vendor's refusal of a request's credentials, or null when the key is right. */
  function refusal(req: IncomingMessage, url: URL): [number, unknown] | null {
    const header = req.headers['x-goog-api-key'];
    const given = typeof header === 'string' ? header : url.searchParams.get('key');
    if (!given) return [403, alphaError(403, UNREGISTERED)];
    return given === key ? null : [400, alphaError(400, 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID')];
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const submit = req.method === 'POST' ? SUBMIT.exec(url.pathname) : null;
    const poll = req.method === 'GET' ? POLL.exec(url.pathname) : null;
    const download = req.method === 'GET' || req.method === 'HEAD' ? DOWNLOAD.exec(url.pathname) : null;
    if (!submit && !poll && !download) return json(res, 404, alphaError(404, `Path ${req.method} ${url.pathname} was not found.`));
    const refused = refusal(req, url);
    if (refused) return json(res, refused[0], refused[1]);
    if (submit) return onSubmit(req, res, raw, url, decodeURIComponent(group(submit, 1)));
    if (poll) return onPoll(req, res, url, decodeURIComponent(group(poll, 1)), decodeURIComponent(group(poll, 2)));
    if (download) return onDownload(req, res, url, decodeURIComponent(group(download, 1)));
  }

  async function onSubmit(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL, model: string): Promise<void> {
    stats.submits++;
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return json(res, 400, alphaError(400, 'Invalid JSON payload received.'));
    }
    const prompt = etaPrompt(body);
    const invalid = MODELS.has(model) ? etaInvalid(body) : null;
    const problem: [number, string] | null = !MODELS.has(model)
      ? [404, `models/${model} is not found for API version v1beta, or is not supported for predictLongRunning.`]
      : invalid
        ? [400, invalid]
        : null;
    const accept = () => {
      // [sim:status=WORD] has no meaning in this protocol, so the task book must not see it.
      const task = tasks.create({ model, prompt: prompt.replace(STATUS_MARKER, ''), body });
      return { name: opName(task) };
    };
    const normal = () => (problem ? alphaError(problem[0], problem[1]) : accept());
    const fault = pickFault(req, url, prompt, faults);
    if (fault && (await applyFault(fault, res, alphaFaultError, normal))) return;
    if (problem) return json(res, problem[0], alphaError(problem[0], problem[1]));
    json(res, 200, accept());
  }

  async function onPoll(req: IncomingMessage, res: ServerResponse, url: URL, model: string, id: string): Promise<void> {
    stats.queries++;
    const found = tasks.get(id);
    const task = found && found.model === model ? found : undefined;
    const missing = () => alphaError(404, `Operation models/${model}/operations/${id} was not found.`);
    const fault = pickFault(req, url, '', faults);
    if (fault && (await applyFault(fault, res, alphaFaultError, () => (task ? operation(task) : missing())))) return;
    if (!task) return json(res, 404, missing());
    task.polls++;
    json(res, 200, operation(task));
  }

  async function onDownload(req: IncomingMessage, res: ServerResponse, url: URL, id: string): Promise<void> {
    stats.downloads++;
    if (url.searchParams.get('alt') !== 'media') return json(res, 400, alphaError(400, 'Downloading file content needs alt=media.'));
    const file = FILE_ID.exec(id);
    const bytes = file ? result(group(file, 1), Number(file[2] ?? 0)) : null;
    const fault = bytes ? pickFault(req, url, '', []) : null;
    if (bytes && fault?.kind === 'slow-body') return serveSlowly(res, bytes, fault);
    if (fault && (await applyFault(fault, res, alphaFaultError, () => null))) return;
    if (!bytes) return json(res, 404, alphaError(404, `File ${id} was not found.`));
    serveBytes(req, res, bytes, 'video/mp4');
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return {
    profile: 'eta-operations',
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

/** A download that stalls half-way: headers and half the bytes, a wait, then the rest. */
async function serveSlowly(res: ServerResponse, bytes: Buffer, fault: Extract<Fault, { kind: 'slow-body' }>): Promise<void> {
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length });
  const half = Math.floor(bytes.length / 2);
  res.write(bytes.subarray(0, half));
  await delay(fault.ms);
  if (!res.destroyed) res.end(bytes.subarray(half));
}
