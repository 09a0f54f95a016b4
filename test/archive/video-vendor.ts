/**
 * A vendor speaking just enough zeta-openai for the shipped video route (the epsilon-video
 * channel), whose files are made on the fly (src/sim/generated-file.ts): any size, never held, every
 * answer counted. A video is `completed` at once; its id names its seed and size
 * (`video_<seed>b<size>`), set by the prompt's `[bytes=N]`.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { serveGenerated, type Transfer } from '../../src/sim/generated-file.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';
import { until } from '../helpers/until.js';

export const VIDEO_VENDOR_KEY = 'archive-vendor-key';

/** The seed of a vendor video id (`video_<seed>b<size>`). */
export const seedOf = (upstream: string) => Number(/^video_([0-9]+)b/.exec(upstream)?.[1]);

/** The running vendor. */
export interface VideoVendor {
  readonly url: string;
  /** Answers of each video's content, in order. */
  contentAnswers(id: string): Transfer[];
  /** The ids of the videos made so far, in order. */
  made(): string[];
  /** From now on the content of `id` is answered 404, as a vendor past its retention answers. */
  forget(id: string): void;
  close(): Promise<void>;
}

/** Starts it on a free port of 127.0.0.1. */
export async function startVideoVendor(): Promise<VideoVendor> {
  let seq = 0;
  const answers = new Map<string, Transfer[]>();
  const made: string[] = [];
  const forgotten = new Set<string>();
  const video = (id: string) => {
    const now = Math.floor(Date.now() / 1000);
    return {
      id,
      object: 'video',
      model: 'epsilon-video-3',
      status: 'completed',
      progress: 100,
      created_at: now,
      completed_at: now,
      expires_at: null,
      prompt: 'archive',
      seconds: '4',
      size: '1280x720',
      remixed_from_video_id: null,
      error: null,
    };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://vendor').pathname;
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.headers.authorization !== `Bearer ${VIDEO_VENDOR_KEY}`)
        return json(401, { error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' } });
      if (req.method === 'POST' && path === '/v1/videos') {
        const text = Buffer.concat(chunks).toString('latin1');
        const bytes = /\[bytes=([0-9]{1,13})\]/.exec(text)?.[1] ?? '1024';
        const id = `video_${++seq}b${bytes}`;
        made.push(id);
        return json(200, video(id));
      }
      const m = /^\/v1\/videos\/(video_([0-9]+)b([0-9]+))(\/content)?$/.exec(path);
      if (req.method === 'GET' && m) {
        if (!m[4]) return json(200, video(m[1]!));
        if (forgotten.has(m[1]!)) return json(404, { error: { message: 'no such video', type: 'invalid_request_error', code: null } });
        const t = serveGenerated(req, res, { seed: Number(m[2]), size: Number(m[3]), contentType: 'video/mp4' });
        answers.set(m[1]!, [...(answers.get(m[1]!) ?? []), t]);
        return;
      }
      json(404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error', code: null } });
    });
  });
  const url = await listenLocal(server);
  return {
    url,
    contentAnswers: (id) => answers.get(id) ?? [],
    made: () => [...made],
    forget: (id) => void forgotten.add(id),
    close: () => closeLocal(server),
  };
}

/**
 * Submits a video of `bytes` through the gateway at `base` (the shipped route, served by `vendor`)
 * and waits until the gateway says it is completed: the gateway's task id and the vendor's video id.
 */
export async function completedVideo(base: string, key: string, vendor: VideoVendor, bytes: number): Promise<{ id: string; upstream: string }> {
  const auth = { authorization: `Bearer ${key}` };
  const before = vendor.made().length;
  const res = await fetch(`${base}/v1/videos`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'epsilon-video-3', prompt: `a take [bytes=${bytes}]` }),
  });
  const task = (await res.json()) as { id: string };
  assert.equal(res.status, 200, JSON.stringify(task));
  await until(
    'the task completes',
    async () => ((await (await fetch(`${base}/v1/videos/${task.id}`, { headers: auth })).json()) as { status: string }).status === 'completed',
    20_000,
  );
  const upstream = vendor.made()[before];
  assert.ok(upstream, 'the vendor made the video');
  return { id: task.id, upstream };
}
