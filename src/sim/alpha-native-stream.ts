import type { ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { json } from './http.js';

/**
 * The streaming side of the alpha-native simulator: `:streamGenerateContent`, as the Gemini API
 * answers it (and as @google/genai's generateContentStream reads it). One answer is cut into
 * GenerateContentResponse chunks, one per part as the model produces them (a text part in two
 * pieces, so a client has to join them): each chunk has the candidate's role and index, the
 * answer's modelVersion and responseId, and usage so far (the prompt only); the last chunk alone
 * has the finishReason and the whole usage. A blocked prompt is one chunk with promptFeedback.
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

/**
 * Sends the chunks: with `alt=sse` as Server-Sent Events (`text/event-stream`, each frame `data:
 * <json>` and a blank line, CRLF line ends, no `[DONE]`), written one by one; without it, as the
 * API does, one JSON array of the same chunks. `pauseMs` (a slow-body fault) stalls the stream
 * after its first half.
 */
export async function sendAlphaStream(res: ServerResponse, chunks: readonly unknown[], sse: boolean, pauseMs = 0): Promise<void> {
  if (!sse) return json(res, 200, chunks);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const half = Math.ceil(chunks.length / 2);
  for (const [i, c] of chunks.entries()) {
    if (pauseMs > 0 && i === half) await delay(pauseMs);
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(c)}\r\n\r\n`);
  }
  res.end();
}
