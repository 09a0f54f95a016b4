import type { ServerResponse } from 'node:http';
import { sendEventStream, type StreamEnd, type StreamFault, type StreamStats } from './faults.js';
import { json } from './http.js';

/**
 * The streaming side of the alpha-native simulator: `:streamGenerateContent`, as the Gemini API
 * answers it (and as @google/genai's generateContentStream reads it). One answer is cut into
 * GenerateContentResponse chunks, one per part as the model produces them (a text part in two
 * pieces, so a client has to join them): each chunk has the candidate's role and index, the
 * answer's modelVersion and responseId, and usage so far (the prompt only); the last chunk alone
 * has the finishReason and the whole usage. A blocked prompt is one chunk with promptFeedback.
 *
 * Mid-stream faults (faults.ts) act after the first chunk: the vendor's error chunk is a frame whose
 * data is the error body of a 500 (`{"error":{code, message, status}}`, the google.rpc.Status
 * @google/genai throws as ApiError when a chunk has one), the malformed frame a chunk cut inside
 * its JSON.
 */

interface Usage {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
}
/** A part: text, or anything else (inlineData), passed on whole. */
interface Part {
  text?: string;
}
interface Candidate {
  content: { role: string; parts: Part[] };
  finishReason?: string;
  index: number;
}
/** A whole answer of the simulator, as generateContent sends it. */
export interface AlphaAnswer {
  candidates?: Candidate[];
  promptFeedback?: unknown;
  usageMetadata: Usage;
  modelVersion: string;
  responseId: string;
}

/** The chunks a stream of `answer` is made of, in order (their concatenation is the answer). */
export function alphaChunks(answer: AlphaAnswer): unknown[] {
  const cand = answer.candidates?.[0];
  if (!cand) return [answer];
  const pieces: Part[] = cand.content.parts.flatMap((p) => (typeof p.text === 'string' ? halves(p.text).map((text) => ({ text })) : [p]));
  const { promptTokenCount } = answer.usageMetadata;
  const early = { promptTokenCount, totalTokenCount: promptTokenCount };
  const chunk = (parts: Part[], last: boolean) => ({
    candidates: [{ content: { role: cand.content.role, parts }, ...(last ? { finishReason: cand.finishReason } : {}), index: cand.index }],
    usageMetadata: last ? answer.usageMetadata : early,
    modelVersion: answer.modelVersion,
    responseId: answer.responseId,
  });
  if (pieces.length === 0) return [chunk([], true)];
  return pieces.map((p, i) => chunk([p], i === pieces.length - 1));
}

/** A text cut at a space near its middle (the model streams text in pieces); one piece when it has no space. */
function halves(text: string): string[] {
  const cut = text.indexOf(' ', Math.floor(text.length / 2));
  return cut <= 0 ? [text] : [text.slice(0, cut + 1), text.slice(cut + 1)];
}

/** How a stream is written: the vendor's error body for its error chunk, the wait between chunks, its fault, what to count. */
export interface AlphaStreamOptions {
  readonly error: unknown;
  readonly gapMs: number;
  readonly fault: StreamFault | null;
  readonly stats: StreamStats;
}

/** One Server-Sent Event as the API frames it: `data: <json>`, CRLF line ends. */
const frame = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

/**
 * Sends the chunks: with `alt=sse` as Server-Sent Events (`text/event-stream`, each frame `data:
 * <json>` and a blank line, CRLF line ends, no `[DONE]`), one write each, the next once the socket
 * took the last; without it, as the API does, one JSON array of the same chunks (stream faults are
 * ignored there). A slow-body fault stalls the stream before its second half.
 */
export async function sendAlphaStream(res: ServerResponse, chunks: readonly unknown[], sse: boolean, opts: AlphaStreamOptions): Promise<StreamEnd> {
  if (!sse) {
    json(res, 200, chunks);
    return 'complete';
  }
  return sendEventStream(res, {
    frames: chunks.map((c) => () => frame(c)),
    errorFrame: frame(opts.error),
    malformedFrame: 'data: {"candidates": [{"content": {"role": "model", "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo\r\n\r\n',
    gapMs: opts.gapMs,
    fault: opts.fault,
    stats: opts.stats,
  });
}
