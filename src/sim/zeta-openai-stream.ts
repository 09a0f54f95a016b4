import type { ServerResponse } from 'node:http';
import { sendEventStream, type StreamEnd, type StreamFault, type StreamStats } from './faults.js';
import { zetaError } from './zeta-openai-body.js';
import { jobPng, type ImageJob } from './zeta-openai-images.js';

/**
 * The streamed answers of the zeta-openai simulator's image routes (`stream: true`), as OpenAI's
 * published OpenAPI document gives them: the `text/event-stream` answers of POST
 * /images/generations (ImageGenStreamEvent) and /images/edits (ImageEditStreamEvent), every event
 * held to them by test/contract/openai-spec.test.ts, and as the official `openai` package reads
 * them (its Stream: one JSON object per event, any with an `error` thrown as APIError).
 *
 * Each event is `event: <type>\ndata: <json>\n\n`, the data's `type` the event's name: first
 * `partial_images` partial events (`image_generation.partial_image` or `image_edit.partial_image`,
 * `partial_image_index` 0, 1, …), each a real PNG of the final image's size that differs from it and
 * from the others, then one completed event (`image_generation.completed` or
 * `image_edit.completed`) carrying the image, `usage` and the `size`, `quality`, `background` and
 * `output_format` of the JSON answer the same request would get (all inside the document's enums:
 * the GPT image models' sizes are its sizes). No `[DONE]`: the document names none, and the stream
 * ends after the completed event. One image per stream (zeta-openai-images.ts refuses n > 1).
 *
 * Mid-stream faults (faults.ts) act after the first event: the vendor's error event is
 * `event: error` with `{"type":"error","error":{type, code, message, param}}` (a 500's error object),
 * the malformed frame a partial event cut inside its JSON.
 */

/** The GPT-image-style JSON answer (imagesAnswer), whose figures the events repeat. */
interface GptAnswer {
  readonly created: number;
  readonly background: string;
  readonly data: readonly { readonly b64_json: string }[];
  readonly output_format: string;
  readonly quality: string;
  readonly size: string;
  readonly usage: unknown;
}

/** How a stream is written: the wait between events, its fault, what to count. */
export interface ImageStreamOptions {
  /** Full-size images with a photograph's weight (the simulator's `fullSizeImages`). */
  readonly full: boolean;
  readonly gapMs: number;
  readonly fault: StreamFault | null;
  readonly stats: StreamStats;
}

/** One Server-Sent Event whose name is its data's `type`. */
const frame = (data: { type: string; [field: string]: unknown }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/** The event type prefix of a route: `image_edit` or `image_generation`. */
const prefixOf = (job: ImageJob) => (job.edit ? 'image_edit' : 'image_generation');

/**
 * The frames of a stream of `answer`, each built only when it is written: the partial images
 * (seeds chosen so none equals the final image), then the completed event.
 */
export function imageFrames(job: ImageJob, answer: GptAnswer, full: boolean): (() => string)[] {
  const b64 = answer.data[0]?.b64_json ?? '';
  const common = { created_at: answer.created, size: answer.size, quality: answer.quality, background: answer.background, output_format: answer.output_format };
  const partial = (i: number) => () => {
    let png = jobPng(job, i + 1, full);
    // Seeds i+1, i+5, … never meet another partial's; the loop only steps past the final image's
    // seed (a full-size image is random: it meets none).
    const final = full ? null : Buffer.from(b64, 'base64');
    for (let seed = i + 5; final && png.equals(final); seed += 4) png = jobPng(job, seed, full);
    return frame({ type: `${prefixOf(job)}.partial_image`, b64_json: png.toString('base64'), ...common, partial_image_index: i });
  };
  const completed = () => frame({ type: `${prefixOf(job)}.completed`, b64_json: b64, ...common, usage: answer.usage });
  return [...Array.from({ length: job.partials }, (_, i) => partial(i)), completed];
}

/** Streams the events of a GPT-image-style answer (`imagesAnswer` of a job with `stream`); how it ended. */
export function sendImageStream(res: ServerResponse, job: ImageJob, answer: unknown, opts: ImageStreamOptions): Promise<StreamEnd> {
  const error = (zetaError(500) as { error: Record<string, unknown> }).error;
  const type = `${prefixOf(job)}.partial_image`;
  return sendEventStream(res, {
    frames: imageFrames(job, answer as GptAnswer, opts.full),
    errorFrame: frame({ type: 'error', error: { type: error.type, code: error.code, message: error.message, param: error.param } }),
    malformedFrame: `event: ${type}\ndata: {"type": "${type}", "b64_json": \n\n`,
    gapMs: opts.gapMs,
    fault: opts.fault,
    stats: opts.stats,
  });
}
