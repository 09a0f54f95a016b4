import busboy from 'busboy';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GoldenStep, RecordedRequest, UpstreamAnswer } from './golden-case.js';

/**
 * Headers the case does not record: those the transport adds by itself, and the request id and
 * trace every vendor call of a public request carries (src/upstream/trace-headers.ts). Neither says
 * anything about a mapping, and the ids are new for every request; test/gateway/observability.test.ts
 * checks that they are sent.
 */
const UNRECORDED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'x-request-id', 'traceparent', 'tracestate']);

/** The fake vendor of a golden run: it records what it is sent and answers what the step scripts. */
export interface RecordingVendor {
  readonly url: string;
  /** Scripts the answers for `step` and forgets what was recorded before. */
  play(step: GoldenStep): void;
  recorded(): RecordedRequest[];
  close(): Promise<void>;
}

/** Starts the fake vendor on a free port of 127.0.0.1. */
export async function startRecordingVendor(): Promise<RecordingVendor> {
  let current: GoldenStep | null = null;
  let recorded: RecordedRequest[] = [];
  const vendor = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://vendor');
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (!UNRECORDED_HEADERS.has(k) && typeof v === 'string') headers[k] = v;
        const raw = Buffer.concat(chunks);
        let body: unknown;
        if ((headers['content-type'] ?? '').startsWith('multipart/form-data')) {
          // The boundary is random: the case records the parts, and the header without it.
          body = await readParts(req.headers, raw);
          headers['content-type'] = 'multipart/form-data; boundary=<boundary>';
        } else {
          const text = raw.toString('utf8');
          try {
            body = text === '' ? null : JSON.parse(text);
          } catch {
            body = text;
          }
        }
        const n = recorded.length;
        recorded.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body });
        const answer = (n === 0 ? current?.upstream_response : current?.then?.[n - 1]?.upstream_response) ?? {
          status: 500,
          raw_body: `golden case has no upstream_response for vendor call ${n + 1}`,
        };
        if (answer.events !== undefined) await sendEvents(res, answer);
        else if (answer.body_base64 !== undefined) res.writeHead(answer.status, answer.headers).end(Buffer.from(answer.body_base64, 'base64'));
        else
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.raw_body ?? JSON.stringify(answer.body ?? null));
      })();
    });
  });
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`,
    play(step) {
      current = step;
      recorded = [];
    },
    recorded: () => recorded,
    close: () =>
      new Promise<void>((r) => {
        vendor.close(() => r());
        vendor.closeAllConnections();
      }),
  };
}

/** Standard base64, padded: what `Buffer.from(…, 'base64')` would otherwise half-read in silence. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * What is wrong with the answers a step scripts, each named by where it is: more than one body, or
 * a `body_base64` that is not base64. A case that says two things of one answer runs neither.
 */
export function scriptedAnswerProblems(step: GoldenStep): string[] {
  const answers: [string, UpstreamAnswer | undefined][] = [
    ['upstream_response', step.upstream_response],
    ...(step.then ?? []).map((t, k): [string, UpstreamAnswer] => [`then[${k}].upstream_response`, t.upstream_response]),
  ];
  return answers.flatMap(([where, answer]) => {
    if (!answer) return [];
    const given = (['body', 'raw_body', 'body_base64', 'events'] as const).filter((k) => answer[k] !== undefined);
    const problems = given.length > 1 ? [`${where} gives ${given.join(' and ')}; give one of body, raw_body, body_base64, events`] : [];
    if (answer.stream_end !== undefined && answer.events === undefined) problems.push(`${where}.stream_end needs events`);
    if (answer.body_base64 !== undefined && (typeof answer.body_base64 !== 'string' || !BASE64.test(answer.body_base64)))
      problems.push(`${where}.body_base64 is not base64 (standard alphabet, padded)`);
    return problems;
  });
}

/**
 * A scripted event stream: each event written on its own and flushed before the next (the gateway
 * must relay them as they come), then the end or, for `stream_end: cut`, a destroyed connection
 * (no end of the chunked body: a vendor cut off mid-stream).
 */
async function sendEvents(res: ServerResponse, answer: UpstreamAnswer): Promise<void> {
  res.writeHead(answer.status, { 'content-type': 'text/event-stream', ...answer.headers });
  for (const e of answer.events ?? []) {
    const text = 'raw' in e ? e.raw : `${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`;
    if (!res.write(text)) await new Promise((r) => res.once('drain', r));
  }
  if (answer.stream_end === 'cut') {
    // Let the events written go out first: the cut is of the stream's end, not of its events.
    await new Promise<void>((r) => res.socket?.write('', () => r()) ?? r());
    res.socket?.destroy();
  } else res.end();
}

/** The parts of a multipart body as a case records them: text parts by value, files by size and digest. */
async function readParts(headers: IncomingHttpHeaders, raw: Buffer): Promise<unknown> {
  const parts: unknown[] = [];
  await new Promise<void>((resolve, reject) => {
    const bb = busboy({ headers, limits: { fieldSize: 64 * 1024 * 1024 } });
    bb.on('field', (name, value) => parts.push({ name, value }));
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const bytes = Buffer.concat(chunks);
        parts.push({
          name,
          filename: info.filename,
          type: info.mimeType,
          bytes: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex').slice(0, 16),
        });
      });
    });
    bb.on('close', resolve);
    bb.on('error', reject);
    bb.end(raw);
  });
  return { parts };
}
