/**
 * The zeta-openai simulator's image streams over real HTTP (`stream: true` on generations and
 * edits): the events as OpenAI's document names and orders them (read raw, frame by frame), the
 * same figures as the JSON answer, the refusals (a model that does not stream, n > 1,
 * partial_images out of 0..3), errors before a stream staying JSON, each mid-stream fault, and the
 * writer's manners: a reader that does not read holds the simulator back, a client that leaves
 * stops it. The events are held to OpenAI's schemas in test/contract/openai-spec.test.ts, and the
 * official client reads them in test/contract/openai-zeta.test.ts.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Simulator } from '../../src/sim/http.js';
import { makePng, pngSize } from '../../src/sim/png.js';
import { startZetaOpenaiSimulator } from '../../src/sim/zeta-openai.js';
import { until } from '../helpers/until.js';

/** One Server-Sent Event as it came: its name, its data as text, when it was read. */
interface Frame {
  event: string | null;
  data: string;
  at: number;
}

function parseFrame(raw: string): Frame {
  let event: string | null = null;
  const data: string[] = [];
  for (const line of raw.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
    else throw new Error(`not an SSE line: ${line.slice(0, 80)}`);
  }
  return { event, data: data.join('\n'), at: performance.now() };
}

/**
 * The frames of a stream as they are read; `frames` keeps those read before a failure, so a test of
 * a cut stream sees what came first. Throws when the body fails or ends inside a frame.
 */
async function readFrames(res: Response, frames: Frame[] = [], onFrame?: (f: Frame) => void): Promise<Frame[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const f = parseFrame(buf.slice(0, i));
      buf = buf.slice(i + 2);
      frames.push(f);
      onFrame?.(f);
    }
  }
  if (buf !== '') throw new Error(`the stream ended inside a frame: ${buf.slice(0, 80)}`);
  return frames;
}

const json = (f: Frame) => JSON.parse(f.data) as Record<string, any>;
/** A counter of the simulator's stats (those of its streams are always there). */
const count = (sim: Simulator, name: string) => sim.stats[name] ?? Number.NaN;

describe('zeta-openai simulator: image streams', () => {
  let sim: Simulator;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(sim.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.secrets.key}`, ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body instanceof FormData ? body : JSON.stringify(body),
    });
  const generate = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    post('/v1/images/generations', { model: 'zeta-image-1', prompt: 'a red kite over the sea', stream: true, ...body }, headers);
  const editForm = (fields: Record<string, string>, images = 1) => {
    const form = new FormData();
    for (const [k, v] of Object.entries({ model: 'zeta-image-1', prompt: 'make it blue', stream: 'true', ...fields })) form.append(k, v);
    for (let i = 0; i < images; i++) form.append('image[]', new Blob([makePng(32, 32, i)], { type: 'image/png' }), `${i}.png`);
    return form;
  };
  /** A refusal before any stream: JSON, the vendor's error object. */
  async function refused(res: Response, param: string, code: string): Promise<string> {
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await res.json()) as { error: { type: string; param: string; code: string; message: string } };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.deepEqual([body.error.type, body.error.param, body.error.code], ['invalid_request_error', param, code]);
    return body.error.message;
  }

  before(async () => {
    sim = await startZetaOpenaiSimulator();
  });
  after(() => sim.close());

  test('generations: partial_images 0..3 partial events (index 0..k-1), then one completed with the JSON answer figures', async () => {
    const plain = (await (
      await post('/v1/images/generations', { model: 'zeta-image-1', prompt: 'a red kite over the sea', size: '1536x1024' })
    ).json()) as Record<string, any>;
    for (const k of [0, 1, 2, 3]) {
      const res = await generate({ partial_images: k, size: '1536x1024' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      const frames = await readFrames(res);
      assert.deepEqual(
        frames.map((f) => f.event),
        [...Array.from({ length: k }, () => 'image_generation.partial_image'), 'image_generation.completed'],
      );
      const events = frames.map(json);
      for (const [i, f] of frames.entries()) assert.equal(events[i]!.type, f.event, 'the data names its event');
      assert.deepEqual(
        events.slice(0, -1).map((e) => e.partial_image_index),
        Array.from({ length: k }, (_, i) => i),
      );
      const done = events.at(-1)!;
      assert.equal(done.partial_image_index, undefined);
      // The completed event says what the JSON answer says, usage included.
      for (const field of ['size', 'quality', 'background', 'output_format', 'usage'])
        assert.deepEqual(done[field], plain[field], `completed.${field} is the JSON answer's`);
      for (const e of events) {
        assert.ok(Number.isInteger(e.created_at), 'created_at in Unix seconds');
        assert.deepEqual([e.size, e.quality, e.background, e.output_format], [done.size, done.quality, done.background, done.output_format]);
      }
      // Every image is a real PNG of the final size; the partials differ from one another and from the final image.
      const pngs = events.map((e) => Buffer.from(e.b64_json as string, 'base64'));
      for (const p of pngs) assert.deepEqual(pngSize(p), { width: 96, height: 64 });
      assert.equal(new Set(pngs.map((p) => p.toString('base64'))).size, pngs.length, 'all images differ');
    }
  });

  test('edits: multipart stream "true" and partial_images "1" (as the package sends them) → image_edit events', async () => {
    const res = await post('/v1/images/edits', editForm({ partial_images: '1', quality: 'high' }, 2));
    assert.equal(res.status, 200);
    const frames = await readFrames(res);
    assert.deepEqual(
      frames.map((f) => f.event),
      ['image_edit.partial_image', 'image_edit.completed'],
    );
    const [partial, done] = frames.map(json);
    assert.deepEqual([partial!.type, partial!.partial_image_index, done!.type], ['image_edit.partial_image', 0, 'image_edit.completed']);
    assert.equal(done!.quality, 'high');
    assert.equal(done!.usage.input_tokens_details.image_tokens, 2 * 272, 'both input images are counted, as in the JSON answer');
    assert.equal(done!.usage.total_tokens, done!.usage.input_tokens + done!.usage.output_tokens);
    // stream "false" is an ordinary JSON answer.
    const plain = await post('/v1/images/edits', editForm({ stream: 'false' }));
    assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await plain.json()) as { data: unknown[] }).data.length, 1);
  });

  test('no model and stream: true picks the GPT image model (the package documents it), which streams', async () => {
    const res = await post('/v1/images/generations', { prompt: 'x', stream: true });
    assert.equal(res.status, 200);
    assert.deepEqual(
      (await readFrames(res)).map((f) => f.event),
      ['image_generation.completed'],
    );
  });

  test('refusals before any stream: a model that does not stream, n > 1, stream and partial_images of the wrong type or range', async () => {
    for (const model of ['zeta-draw-3', 'zeta-draw-2', 'epsilon-4-2-image']) {
      const message = await refused(await generate({ model }), 'stream', 'unsupported_value');
      assert.match(message, /'stream' does not support true with this model/);
    }
    await refused(await post('/v1/images/edits', editForm({ model: 'zeta-draw-2' })), 'stream', 'unsupported_value');
    const plain = await post('/v1/images/generations', { model: 'zeta-draw-2', prompt: 'x', stream: false });
    assert.equal(plain.status, 200, 'stream: false is the default, and every model takes it');
    await refused(await generate({ n: 2 }), 'n', 'invalid_value');
    for (const bad of [4, -1]) assert.match(await refused(await generate({ partial_images: bad }), 'partial_images', 'invalid_value'), /from 0 to 3/);
    await refused(await generate({ partial_images: 1.5 }), 'partial_images', 'invalid_type');
    await refused(await generate({ partial_images: '2' }), 'partial_images', 'invalid_type');
    await refused(await post('/v1/images/edits', editForm({ partial_images: '4' })), 'partial_images', 'invalid_value');
    await refused(await generate({ stream: 'true' }), 'stream', 'invalid_type');
    await refused(await post('/v1/images/edits', editForm({ stream: 'yes' })), 'stream', 'invalid_type');
  });

  test('errors before a stream stay JSON with their status: a wrong key, a status fault; a stream fault on a JSON answer is ignored', async () => {
    const denied = await post('/v1/images/generations', { model: 'zeta-image-1', prompt: 'x', stream: true }, { authorization: 'Bearer wrong' });
    assert.equal(denied.status, 401);
    assert.equal(((await denied.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
    const limited = await generate({ partial_images: 2 }, { 'x-sim-fault': '429' });
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'rate_limit_exceeded');
    for (const fault of ['stream-error', 'stream-cut', 'stream-malformed', 'stream-stall:60000']) {
      const plain = await post('/v1/images/generations', { model: 'zeta-image-1', prompt: 'x' }, { 'x-sim-fault': fault });
      assert.equal(plain.status, 200, fault);
      assert.equal(((await plain.json()) as { data: unknown[] }).data.length, 1, fault);
    }
  });

  describe('mid-stream faults, each after the first event', () => {
    test('stream-error: the vendor error event (`event: error`, data {type: "error", error}), then the end', async () => {
      const frames = await readFrames(await generate({ partial_images: 2 }, { 'x-sim-fault': 'stream-error' }));
      assert.deepEqual(
        frames.map((f) => f.event),
        ['image_generation.partial_image', 'error'],
      );
      assert.deepEqual(json(frames[1]!), {
        type: 'error',
        error: { type: 'server_error', code: 'server_error', message: 'The server had an error while processing your request. Sorry about that!', param: null },
      });
    });

    test('stream-malformed: one frame whose data is not JSON, then the end', async () => {
      const frames = await readFrames(await generate({ partial_images: 2, prompt: 'a kite [sim:fault=stream-malformed]' }));
      assert.deepEqual(
        frames.map((f) => f.event),
        ['image_generation.partial_image', 'image_generation.partial_image'],
      );
      json(frames[0]!);
      assert.throws(() => json(frames[1]!), SyntaxError);
    });

    test('stream-cut: the connection is destroyed after the first event, the body never ends', async () => {
      const frames: Frame[] = [];
      await assert.rejects(
        readFrames(await post('/v1/images/generations?sim_fault=stream-cut', { model: 'zeta-image-1', prompt: 'x', stream: true, partial_images: 3 }), frames),
      );
      assert.deepEqual(
        frames.map((f) => f.event),
        ['image_generation.partial_image'],
      );
    });

    test('stream-stall:MS: the first event at once, the rest MS later (the queue names the fault)', async () => {
      sim.faults.push('stream-stall:300');
      const frames = await readFrames(await generate({ partial_images: 2 }));
      assert.deepEqual(
        frames.map((f) => f.event),
        ['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed'],
      );
      const stalled = frames[1]!.at - frames[0]!.at;
      assert.ok(stalled >= 250, `the second event came ${Math.round(stalled)} ms after the first`);
    });

    test('slow-body:MS on a stream stalls before its second half', async () => {
      const frames = await readFrames(await generate({ partial_images: 3 }, { 'x-sim-fault': 'slow-body:300' }));
      assert.equal(frames.length, 4);
      const gaps = frames.slice(1).map((f, i) => f.at - frames[i]!.at);
      assert.ok(gaps[1]! >= 250, `the third event came ${Math.round(gaps[1]!)} ms after the second`);
    });
  });

  test('a client that goes away stops the stream: in the wait between events and in a stall', async () => {
    const paced = await startZetaOpenaiSimulator({ streamGapMs: 60_000 });
    try {
      for (const headers of [{}, { 'x-sim-fault': 'stream-stall:60000' }] as Record<string, string>[]) {
        const before = { events: count(paced, 'events'), abandoned: count(paced, 'abandoned') };
        const abort = new AbortController();
        const res = await fetch(`${paced.url}/v1/images/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${paced.secrets.key}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ model: 'zeta-image-1', prompt: 'x', stream: true, partial_images: 3 }),
          signal: abort.signal,
        });
        const frames: Frame[] = [];
        await assert.rejects(
          readFrames(res, frames, () => abort.abort()),
          (e: Error) => e.name === 'AbortError',
        );
        assert.equal(frames.length, 1);
        // Bounded well under the 60 s wait: the simulator stops when the client leaves, not when its wait ends.
        await until('the simulator to notice the client left', () => count(paced, 'abandoned') === before.abandoned + 1, 5_000);
        assert.equal(count(paced, 'events') - before.events, 1, 'nothing more was written');
      }
    } finally {
      await paced.close();
    }
  });

  test('backpressure: a reader that does not read holds the simulator back; once it reads, every event comes', async () => {
    // Full-size images (a 1536x1024 PNG of random pixels, ~6.3 MB of base64 per event, 4 events)
    // are far more than the socket buffers hold, so a writer that ignored write()'s answer would
    // have written all of them at once.
    const big = await startZetaOpenaiSimulator({ fullSizeImages: true });
    try {
      const body = JSON.stringify({ model: 'zeta-image-1', prompt: 'x', size: '1536x1024', stream: true, partial_images: 3 });
      const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        const req = request(`${big.url}/v1/images/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${big.secrets.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        });
        req.on('response', resolve).on('error', reject).end(body);
      });
      // Nothing consumes the response yet: the client stops reading its socket once its buffer is full.
      res.pause();
      await until('the simulator to wait for its reader', () => big.stats.blocked === 1);
      assert.ok(count(big, 'events') < 4, `${count(big, 'events')} of 4 events written while the reader reads nothing`);
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (c: string) => (text += c));
      const ended = new Promise((resolve) => res.on('end', resolve));
      res.resume();
      await ended;
      const frames = text
        .split('\n\n')
        .filter((f) => f !== '')
        .map(parseFrame);
      assert.deepEqual(
        frames.map((f) => f.event),
        ['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed'],
      );
      for (const f of frames) assert.deepEqual(pngSize(Buffer.from(json(f).b64_json as string, 'base64')), { width: 1536, height: 1024 });
      assert.deepEqual([big.stats.events, big.stats.blocked, big.stats.abandoned], [4, 0, 0]);
    } finally {
      await big.close();
    }
  });
});
