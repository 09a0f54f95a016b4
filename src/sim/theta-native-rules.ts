import type { IncomingMessage } from 'node:http';
import { parseFault, type Fault } from './faults.js';
import { must } from './invariants.js';

/**
 * The vendor rules of the theta-native simulator (theta-native.ts): the `base_resp` codes, the
 * per-model submit checks, the pixel sizes of each resolution, and the `code:NNNN` fault form that
 * answers HTTP 200 with a vendor code, as the vendor does for its own refusals.
 */

/** The status object every answer of the vendor carries. */
export interface BaseResp {
  readonly status_code: number;
  readonly status_msg: string;
}

/** Messages of the vendor's `base_resp` codes. */
export const BASE_MESSAGES: Readonly<Record<number, string>> = {
  0: 'success',
  1000: 'unknown error',
  1002: 'rate limit exceeded, please try again later',
  1004: "login fail: Please carry the API secret key in the 'Authorization' field of the request header",
  1008: 'insufficient balance',
  1013: 'internal service error',
  1026: 'input new_sensitive: the request was refused by the content review',
  1027: 'output new_sensitive: the video was refused by the content review',
  2013: 'invalid params',
};

/** A `base_resp`; `detail` is appended to the code's message ("invalid params, <detail>"). */
export function baseResp(code: number, detail?: string): BaseResp {
  const message = BASE_MESSAGES[code] ?? 'error';
  return { status_code: code, status_msg: detail ? `${message}, ${detail}` : message };
}

/** The `base_resp` code carried by a real HTTP error status (fault answers and unknown paths). */
export function codeForStatus(status: number): number {
  if (status === 400 || status === 404) return 2013;
  if (status === 401 || status === 403) return 1004;
  if (status === 402) return 1008;
  if (status === 429) return 1002;
  return status >= 500 ? 1013 : 1000;
}

/** The vendor's body for a real HTTP error status: `{base_resp}` only. */
export function thetaError(status: number, detail?: string): { base_resp: BaseResp } {
  return { base_resp: baseResp(codeForStatus(status), detail ?? (status === 404 ? 'not found' : undefined)) };
}

/** Width and height of a finished video by its resolution (16:9 landscape). */
export const DIMENSIONS: Readonly<Record<string, readonly [number, number]>> = {
  '768P': [1366, 768],
  '1080P': [1920, 1080],
  '2K': [2560, 1440],
};

interface ModelRule {
  readonly durations: readonly number[];
  readonly defaultDuration: number;
  readonly resolutions: readonly string[];
  readonly defaultResolution: string;
  /** theta-H3 takes last frames, subjects, references and remix; the xi models take a first frame only. */
  readonly full: boolean;
}

const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

/** Models and their rules (the table in theta-native.ts). */
export const MODELS: Readonly<Record<string, ModelRule>> = {
  'theta-H3': { durations: range(4, 15), defaultDuration: 5, resolutions: ['768P', '2K'], defaultResolution: '2K', full: true },
  'xi-2.3': { durations: [6, 10], defaultDuration: 6, resolutions: ['768P', '1080P'], defaultResolution: '768P', full: false },
  'xi-2.3-fast': { durations: [6, 10], defaultDuration: 6, resolutions: ['768P', '1080P'], defaultResolution: '768P', full: false },
};

export const MAX_PROMPT = 2000;
export const MAX_SUBJECT_IMAGES = 9;
export const MAX_REFERENCES = 3;

/** A submit body as received (fields unchecked). */
export type SubmitBody = Record<string, unknown>;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isUrl = (v: unknown) => typeof v === 'string' && /^https?:\/\/\S+$/.test(v);
const isImage = (v: unknown) => isUrl(v) || (typeof v === 'string' && /^data:image\/(png|jpeg|jpg|webp);base64,[A-Za-z0-9+/]+={0,2}$/.test(v));

/** Duration and resolution of a valid submit, defaults filled in; a remix inherits its source's resolution. */
export function effective(body: SubmitBody, remixResolution?: string): { duration: number; resolution: string } {
  const rule = must(MODELS[body.model as string], `model ${String(body.model)}`);
  return {
    duration: (body.duration as number | undefined) ?? rule.defaultDuration,
    resolution: (body.resolution as string | undefined) ?? remixResolution ?? rule.defaultResolution,
  };
}

/** The detail of a 2013 answer for a submit body, or null when it is acceptable. `remixSource` gives a succeeded task's resolution. */
export function invalidSubmit(body: unknown, remixSource: (taskId: string) => string | null): string | null {
  if (!isObject(body)) return 'request body must be a JSON object';
  if (typeof body.model !== 'string' || body.model === '') return 'model is required';
  const rule = MODELS[body.model];
  if (!rule) return `unknown model: ${body.model}`;
  return typeProblem(body) ?? modelProblem(body, rule) ?? modeProblem(body, remixSource);
}

/** Field types and sizes shared by every model. */
function typeProblem(b: SubmitBody): string | null {
  if (b.prompt !== undefined && typeof b.prompt !== 'string') return 'prompt must be a string';
  if (typeof b.prompt === 'string' && [...b.prompt].length > MAX_PROMPT) return `prompt must be at most ${MAX_PROMPT} characters`;
  if (b.duration !== undefined && !Number.isInteger(b.duration)) return 'duration must be an integer';
  if (b.resolution !== undefined && typeof b.resolution !== 'string') return 'resolution must be a string';
  for (const f of ['first_frame_image', 'last_frame_image'] as const) {
    if (b[f] !== undefined && !isImage(b[f])) return `${f} must be an http(s) URL or a data:image/<type>;base64 URI`;
  }
  for (const f of ['aigc_watermark', 'prompt_optimizer'] as const) {
    if (b[f] !== undefined && typeof b[f] !== 'boolean') return `${f} must be a boolean`;
  }
  if (b.remix_task_id !== undefined && (typeof b.remix_task_id !== 'string' || b.remix_task_id === '')) return 'remix_task_id must be a non-empty string';
  return subjectProblem(b.subject_reference) ?? referenceProblem(b, 'reference_videos') ?? referenceProblem(b, 'reference_audios');
}

function subjectProblem(subjects: unknown): string | null {
  if (subjects === undefined) return null;
  if (!Array.isArray(subjects) || subjects.length === 0) return 'subject_reference must be a non-empty array';
  let images = 0;
  for (const s of subjects) {
    if (!isObject(s) || s.type !== 'character') return 'subject_reference[].type must be "character"';
    if (!Array.isArray(s.image) || s.image.length === 0) return 'subject_reference[].image must be a non-empty array';
    if (!s.image.every(isImage)) return 'subject_reference[].image entries must be http(s) URLs or data:image/<type>;base64 URIs';
    images += s.image.length;
  }
  return images > MAX_SUBJECT_IMAGES ? `subject_reference takes at most ${MAX_SUBJECT_IMAGES} images in total` : null;
}

function referenceProblem(b: SubmitBody, field: 'reference_videos' | 'reference_audios'): string | null {
  const v = b[field];
  if (v === undefined) return null;
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_REFERENCES) return `${field} must be an array of 1 to ${MAX_REFERENCES} URLs`;
  return v.every(isUrl) ? null : `${field} entries must be http(s) URLs`;
}

/** Duration, resolution and the fields a model does not take. */
function modelProblem(b: SubmitBody, rule: ModelRule): string | null {
  const model = b.model as string;
  if (!rule.full) {
    for (const f of ['last_frame_image', 'subject_reference', 'reference_videos', 'reference_audios', 'remix_task_id']) {
      if (b[f] !== undefined) return `${f} is not supported by ${model}`;
    }
  }
  if (b.duration !== undefined && !rule.durations.includes(b.duration as number)) {
    const allowed = rule.durations.length > 2 ? `${rule.durations[0]} to ${rule.durations.at(-1)}` : rule.durations.join(' or ');
    return `duration of ${model} must be ${allowed}`;
  }
  if (b.resolution !== undefined && !rule.resolutions.includes(b.resolution as string)) {
    return `resolution of ${model} must be one of ${rule.resolutions.join(', ')}`;
  }
  if (b.resolution === '1080P' && (b.duration ?? rule.defaultDuration) !== 6) return '1080P supports a duration of 6 seconds only';
  return null;
}

/** The combinations of a submit: frames, references, remix, and when a prompt is needed. */
function modeProblem(b: SubmitBody, remixSource: (taskId: string) => string | null): string | null {
  const frames = b.first_frame_image !== undefined || b.last_frame_image !== undefined;
  const references = b.reference_videos !== undefined || b.reference_audios !== undefined;
  const prompt = typeof b.prompt === 'string' && b.prompt.trim() !== '';
  if (b.last_frame_image !== undefined && b.first_frame_image === undefined) return 'last_frame_image needs first_frame_image';
  if (frames && references) return 'reference_videos and reference_audios cannot be combined with first_frame_image or last_frame_image';
  if (typeof b.remix_task_id === 'string') {
    if (frames || references || b.subject_reference !== undefined) return 'a remix takes only a prompt and remix_task_id';
    if (!prompt) return 'prompt is required for a remix';
    if (remixSource(b.remix_task_id) !== '768P') return `the remix source must be a 768P video: task ${b.remix_task_id} is not a succeeded 768P task`;
    return null;
  }
  // Text-to-video needs words; with a first frame, subjects or references the prompt is optional.
  if (!prompt && b.first_frame_image === undefined && b.subject_reference === undefined && !references) return 'prompt is required';
  return null;
}

/** A fault of this simulator: one of faults.ts, or `code:NNNN` (HTTP 200 with base_resp NNNN). */
export type ThetaFault = Fault | { kind: 'code'; code: number };

const CODE_FAULT = /^code:([0-9]{4})$/;
const MARKER = /\[sim:fault=([a-z0-9:-]+)\]/;

/** Like pickFault (header, query, prompt marker, queue, in that order), also knowing the `code:NNNN` form. */
export function pickThetaFault(req: IncomingMessage, url: URL, prompt: string, queue: string[]): ThetaFault | null {
  const header = req.headers['x-sim-fault'];
  const named = (typeof header === 'string' ? header : null) ?? url.searchParams.get('sim_fault') ?? MARKER.exec(prompt)?.[1] ?? null;
  const text = named ?? queue.shift() ?? null;
  const code = text ? CODE_FAULT.exec(text.trim()) : null;
  return code ? { kind: 'code', code: Number(code[1]) } : parseFault(text);
}
