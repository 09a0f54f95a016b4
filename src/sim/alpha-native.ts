import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { alphaChunks, sendAlphaStream, type AlphaAnswer } from './alpha-native-stream.js';
import { applyFault, pickFault, streamFault } from './faults.js';
import { json, listen, type Simulator } from './http.js';
import { dropOldest, group } from './invariants.js';
import { makePng } from './png.js';

/** Options of the alpha-native simulator. */
export interface AlphaSimOptions {
  readonly port?: number;
  /** Address to listen on, named in its URL (default 127.0.0.1). */
  readonly host?: string;
  readonly key?: string;
  /** `url` answers `inlineData.data` as a URL served by the simulator instead of base64. */
  readonly imageDelivery?: 'base64' | 'url';
  /** Milliseconds between two chunks of a `:streamGenerateContent?alt=sse` stream (default 0). */
  readonly streamGapMs?: number;
}

const MODELS = new Set(['alpha-3-pro-image-preview', 'alpha-2.5-flash-image-preview', 'alpha-3.1-flash-image-preview']);
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
const MESSAGES: Record<number, string> = {
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred.',
  503: 'The model is overloaded. Please try again later.',
  504: 'Deadline exceeded.',
};
/** Pixels per aspect-ratio unit: images stay tiny but keep the requested shape. */
const SCALE = { '1K': 4, '2K': 8, '4K': 16 } as const;
const MAX_FILES = 500;
/**
 * The top-level fields of a GenerateContentRequest in the Gemini API (its JSON parser refuses any
 * other): those @google/genai 2.32.0 sends in Gemini API mode (labels included: it sends them there).
 */
const REQUEST_FIELDS = [
  'contents',
  'generationConfig',
  'systemInstruction',
  'safetySettings',
  'tools',
  'toolConfig',
  'labels',
  'cachedContent',
  'serviceTier',
  'store',
  'continuationToken',
];
const UNREGISTERED =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";

/** The vendor's error body for a status (docs/spec/upstream-protocols.md, alpha-native). */
export function alphaError(status: number, message?: string, reason?: string): unknown {
  const error: Record<string, unknown> = {
    code: status,
    message: message ?? MESSAGES[status] ?? `Simulated error ${status}.`,
    status: STATUS_NAMES[status] ?? 'UNKNOWN',
  };
  if (reason) error.details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' }];
  return { error };
}

/**
 * The error body of a simulated fault: `waitS` becomes the wait the vendor states in its body, a
 * RetryInfo detail whose `retryDelay` is a protobuf Duration ("37s"), as its quota errors carry one.
 */
export function alphaFaultError(status: number, waitS?: number): unknown {
  const body = alphaError(status) as { error: Record<string, unknown> };
  if (waitS !== undefined) body.error.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${waitS}s` }];
  return body;
}

interface Part {
  text?: string;
  inlineData?: { mimeType?: string; data?: string };
}
interface Body {
  contents?: { parts?: Part[] }[];
  generationConfig?: { responseModalities?: string[]; imageConfig?: { aspectRatio?: string; imageSize?: string } };
}

/**
 * A fake vendor speaking alpha-native (the Gemini API's generateContent, checked against
 * @google/genai: test/contract/genai-alpha.test.ts): checks the key the way the vendor does
 * (x-goog-api-key or ?key=; none: 403 PERMISSION_DENIED, a wrong one: 400 API_KEY_INVALID), refuses
 * a top-level request field the API does not know (400 "Unknown name"), answers a real small PNG
 * shaped like the requested aspect ratio, and can produce every fault of faults.ts (`STATUS:wait:S`
 * states the wait in the body: alphaFaultError). `POST …:streamGenerateContent` streams the same
 * answer in chunks (alpha-native-stream.ts): Server-Sent Events with `?alt=sse`, else a JSON array;
 * errors come before the stream, as JSON with their status, as on generateContent; the stream forms of
 * faults.ts (stream-stall, stream-cut, stream-error, stream-malformed, and slow-body) act inside an
 * SSE stream, after its first chunk, and are ignored elsewhere. Option `streamGapMs`: a wait between
 * chunks. Stats: requests; of SSE streams: streams, events (chunks written), blocked (streams waiting
 * for their client to read), abandoned (streams the client left before their end). Prompt markers:
 * `[sim:block]` blocks the prompt (no candidates), `[sim:no-image]` finishes with NO_IMAGE and text only.
 */
export async function startAlphaSimulator(opts: AlphaSimOptions = {}): Promise<Simulator> {
  const key = opts.key ?? `sim-alpha-${randomBytes(6).toString('hex')}`;
  const faults: string[] = [];
  const stats = { requests: 0, streams: 0, events: 0, blocked: 0, abandoned: 0 };
  const files = new Map<string, Buffer>();
  let base = '';
  let counter = 0;

  async function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: URL): Promise<void> {
    stats.requests++;
    const file = /^\/files\/([a-z0-9-]+)\.png$/.exec(url.pathname);
    if (req.method === 'GET' && file) {
      const png = files.get(group(file, 1));
      if (!png) return json(res, 404, alphaError(404, 'File not found.'));
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
      res.end(png);
      return;
    }
    const route = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
    if (!route || req.method !== 'POST') return json(res, 404, alphaError(404, `Path ${url.pathname} was not found.`));
    const given = req.headers['x-goog-api-key'] ?? url.searchParams.get('key');
    if (!given) return json(res, 403, alphaError(403, UNREGISTERED));
    if (given !== key) return json(res, 400, alphaError(400, 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'));
    const model = decodeURIComponent(group(route, 1));
    const stream = route[2] === 'streamGenerateContent';

    let body: Body;
    try {
      body = JSON.parse(raw.toString('utf8')) as Body;
    } catch {
      return json(res, 400, alphaError(400, 'Invalid JSON payload received.'));
    }
    const unknown = body && typeof body === 'object' ? Object.keys(body).find((k) => !REQUEST_FIELDS.includes(k)) : undefined;
    if (unknown !== undefined) return json(res, 400, alphaError(400, `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`));
    const parts = body.contents?.flatMap((c) => c.parts ?? []) ?? [];
    const prompt = parts.map((p) => p.text ?? '').join(' ');
    const fault = pickFault(req, url, prompt, faults);
    const answer = () => answerFor(model, body, prompt, parts);
    // A stream's faults act inside it (a slow stream stalls between its frames, not inside one JSON body).
    const inside = stream ? streamFault(fault) : null;
    if (fault && !inside && (await applyFault(fault, res, alphaFaultError, answer))) return;

    if (!MODELS.has(model)) return json(res, 404, alphaError(404, `models/${model} is not found for API version v1beta.`));
    if (parts.length === 0) return json(res, 400, alphaError(400, '* GenerateContentRequest.contents: contents is not specified'));
    for (const p of parts) {
      if (p.inlineData && !/^[A-Za-z0-9+/]*={0,2}$/.test(p.inlineData.data ?? '')) {
        return json(res, 400, alphaError(400, 'Invalid value at inline_data.data: Base64 decoding failed.'));
      }
    }
    if (stream) {
      const sse = url.searchParams.get('alt') === 'sse';
      if (sse) stats.streams++;
      const end = await sendAlphaStream(res, alphaChunks(answer()), sse, { error: alphaError(500), gapMs: opts.streamGapMs ?? 0, fault: inside, stats });
      if (end === 'gone') stats.abandoned++;
      return;
    }
    json(res, 200, answer());
  }

  function answerFor(model: string, body: Body, prompt: string, parts: Part[]): AlphaAnswer {
    const promptTokenCount = Math.ceil(prompt.length / 4) + parts.filter((p) => p.inlineData).length * 258;
    const usage = (candidates: number) => ({
      promptTokenCount,
      candidatesTokenCount: candidates,
      totalTokenCount: promptTokenCount + candidates,
    });
    const responseId = randomBytes(8).toString('hex');
    if (prompt.includes('[sim:block]')) {
      return { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: usage(0), modelVersion: model, responseId };
    }
    const modalities = body.generationConfig?.responseModalities ?? ['TEXT', 'IMAGE'];
    const out: Part[] = [];
    if (modalities.includes('TEXT')) out.push({ text: 'Here is the image you asked for.' });
    const noImage = prompt.includes('[sim:no-image]');
    if (modalities.includes('IMAGE') && !noImage) {
      const ratio = body.generationConfig?.imageConfig?.aspectRatio ?? '1:1';
      const [w, h] = ratio.split(':').map(Number) as [number, number];
      const scale = SCALE[(body.generationConfig?.imageConfig?.imageSize ?? '1K') as keyof typeof SCALE] ?? 4;
      const png = makePng(w * scale, h * scale, counter++);
      out.push({ inlineData: { mimeType: 'image/png', data: opts.imageDelivery === 'url' ? storeFile(png) : png.toString('base64') } });
    }
    return {
      candidates: [{ content: { role: 'model', parts: out }, finishReason: noImage ? 'NO_IMAGE' : 'STOP', index: 0 }],
      usageMetadata: usage(noImage ? 12 : 1290),
      modelVersion: model,
      responseId,
    };
  }

  function storeFile(png: Buffer): string {
    const id = randomBytes(8).toString('hex');
    files.set(id, png);
    if (files.size > MAX_FILES) dropOldest(files);
    return `${base}/files/${id}.png`;
  }

  const server = await listen(handle, opts.port, opts.host);
  base = server.url;
  return { profile: 'alpha-native', url: server.url, secrets: { key }, faults, stats, targets: server.targets, traces: server.traces, close: server.close };
}
