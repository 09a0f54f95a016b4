/**
 * Contract (issue 38): OpenAI's published OpenAPI document, pinned as an extract
 * (test/contract/specs/openai-openapi.json, its origin in sources.json), is the reference for the
 * OpenAI-compatible routes and the zeta-openai protocol (DESIGN.md, "The vendors are the
 * reference"). Held to it:
 *  - every public answer of the OpenAI-compatible routes (images generations and edits; videos
 *    create, list, retrieve, delete, content, remix), success and error: the golden cases' answers of
 *    every profile on those routes, and a live gateway in front of every simulator, one video model
 *    of each family;
 *  - every request the zeta-openai profile sends upstream (the zeta image channels and the epsilon
 *    lines): the golden cases of test/golden/zeta-openai, which the golden runner holds the mapping to;
 *  - every answer of the zeta-openai simulator, and every event of its image streams (the
 *    `text/event-stream` answers of generations and edits: ImageGenStreamEvent, ImageEditStreamEvent).
 * Where interface.md deliberately differs from OpenAI, the difference is listed once below
 * (INTERFACE_DIFFERENCES, with its section) and exactly that is let through; a listed difference
 * that nothing shows any more fails too, so the list stays true.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { makePng } from '../../src/sim/png.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { formObject, loadSpec, toJsonSchema, type Operation, type Problem } from './openapi-check.js';

const spec = loadSpec('openai-openapi.json', '/v1');

/** Who is held to the document: the gateway's public answers, the requests it sends the vendor, the simulator's answers. */
type Side = 'answer' | 'upstream' | 'simulator';

/** A deliberate difference of the interface from OpenAI's document. */
interface Difference {
  readonly id: string;
  /** The interface.md section that wants it. */
  readonly section: string;
  readonly side: Side;
  /** The operations (operationId, or `ErrorResponse` for error answers) it concerns. */
  readonly operations: readonly string[];
  /** Where in the value (ajv's instance path) and which schema keywords fail. */
  readonly path: RegExp;
  readonly keywords: readonly string[];
  readonly why: string;
}

/** Every deliberate difference, once. Nothing else is let through. */
const INTERFACE_DIFFERENCES: readonly Difference[] = [
  {
    id: 'video-size',
    section: '2.3, 4.6, 8',
    side: 'answer',
    operations: ['createVideo', 'GetVideo', 'ListVideos', 'CreateVideoRemix'],
    path: /^(\/data\/\d+)?\/size$/,
    keywords: ['enum', 'type'],
    why: "the video object's size is the family's own (720p, 768P, 2K, 1920x1080, a ratio hint; 2.3 `size`, 4.6, 8 theta size), or null while no size is known, where VideoSize lists four",
  },
  {
    id: 'video-seconds',
    section: '2.3',
    side: 'answer',
    operations: ['createVideo', 'GetVideo', 'ListVideos', 'CreateVideoRemix'],
    path: /^(\/data\/\d+)?\/seconds$/,
    keywords: ['type'],
    why: '`seconds` and `duration` are both optional and the adapter decides (2.3): a task whose request named no duration and whose vendor reports none has seconds null',
  },
  {
    id: 'image-size',
    section: '4.5',
    side: 'answer',
    operations: ['createImage', 'createImageEdit'],
    path: /^\/size$/,
    keywords: ['enum'],
    why: "the delta and epsilon lines answer the sizes of 4.5's aspect-ratio table (16:9 → 2560x1440, …), where ImagesResponse.size lists three",
  },
  {
    id: 'error-shape-b',
    section: '7',
    side: 'answer',
    operations: ['ErrorResponse'],
    path: /^$/,
    keywords: ['required'],
    why: 'too_many_requests is answered in shape B `{code, message, data: null}` (section 7), not in the `{error}` of shape A',
  },
  {
    id: 'stream-url',
    section: '4.5 (response_format url)',
    side: 'answer',
    operations: ['createImage', 'createImageEdit'],
    // The event is then neither of the document's two (a completed without b64_json): both branches' misses are its.
    path: /^(\/type)?$/,
    keywords: ['required', 'anyOf', 'enum'],
    why: 'a streamed image asked with response_format url is offered as a gateway link in the completed event\'s `url` instead of its b64_json, as a JSON answer\'s url is (docs/client-api.md, "Streamed images")',
  },
  {
    id: 'epsilon-seconds',
    section: '8',
    side: 'upstream',
    operations: ['createVideo'],
    path: /^\/seconds$/,
    keywords: ['enum'],
    why: 'epsilon-video-3-pro is fixed at 10 s and -max at 15 s (section 8), where VideoSeconds lists 4, 8, 12',
  },
  {
    id: 'epsilon-several-references',
    section: '4.6',
    side: 'upstream',
    operations: ['createVideo'],
    path: /^\/input_reference$/,
    keywords: ['oneOf', 'type'],
    why: 'epsilon video takes several `input_reference` files (4.6: "Multipart input_reference, several allowed"; first frame plus references combined), where the document has one',
  },
];

/** Differences seen, to fail a listed one nothing shows. */
const used = new Set<string>();

/** The problems of `side` on `operation` that no listed difference covers. */
function unexcused(side: Side, operation: string, problems: readonly Problem[]): Problem[] {
  return problems.filter((p) => {
    const d = INTERFACE_DIFFERENCES.find((x) => x.side === side && x.operations.includes(operation) && x.path.test(p.path) && x.keywords.includes(p.keyword));
    if (d) used.add(d.id);
    return !d;
  });
}

/** How many values were checked, by side (reported, and each must be more than none). */
const checked: Record<Side, number> = { answer: 0, upstream: 0, simulator: 0 };

/** Checks one JSON answer of `op` (a 2xx against its answer, any other status against ErrorResponse); the problems left. */
function answerProblems(side: Side, op: Operation, status: number, body: unknown): string[] {
  const ok = status >= 200 && status < 300;
  const check = ok ? spec.answer(op, status, 'application/json') : spec.component('ErrorResponse');
  assert.ok(check, `${op.id} ${status}: the document describes no JSON answer`);
  checked[side]++;
  return unexcused(side, ok ? op.id : 'ErrorResponse', check(body)).map((p) => `${op.id} ${status}: ${p.message}`);
}

/**
 * Checks a streamed answer of `op`, its events as the golden cases record them (`{event, data}`):
 * each against the operation's `text/event-stream` answer, the error event's `error` against the
 * document's error object (the document gives these routes no error event; the official client
 * throws the `error` of any event as its APIError); the problems left.
 */
function streamProblems(side: Side, op: Operation, events: readonly unknown[]): string[] {
  const check = spec.answer(op, 200, 'text/event-stream');
  assert.ok(check, `${op.id}: the document describes a text/event-stream answer`);
  return events.flatMap((e, i) => {
    const { event, data } = e as { event?: string; data?: { type?: string } };
    checked[side]++;
    if (data?.type !== event) return [`${op.id} event ${i}: its data's type ${data?.type} is not its name ${event}`];
    const problems = event === 'error' ? spec.component('ErrorResponse')(data) : check(data);
    return unexcused(side, event === 'error' ? 'ErrorResponse' : op.id, problems).map((p) => `${op.id} ${event}: ${p.message}`);
  });
}

/** Fails with every problem found, each with what it was found on. */
function noProblems(found: readonly string[]): void {
  assert.deepEqual(found, [], `\n${found.slice(0, 40).join('\n')}${found.length > 40 ? `\n… ${found.length - 40} more` : ''}`);
}

// ---- golden cases -------------------------------------------------------------------------------

interface GoldenRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}
interface GoldenStep {
  request: GoldenRequest;
  upstream?: GoldenRequest | null;
  then?: { upstream: GoldenRequest | null }[];
  response: { status: number; body: unknown };
}

/** Every golden case step, by profile and case name. */
function goldenSteps(): { where: string; profile: string; step: GoldenStep }[] {
  const root = join(PROJECT_ROOT, 'test/golden');
  const out: { where: string; profile: string; step: GoldenStep }[] = [];
  for (const profile of readdirSync(root)) {
    for (const file of readdirSync(join(root, profile)).filter((f) => f.endsWith('.yaml'))) {
      const doc = parse(readFileSync(join(root, profile, file), 'utf8')) as GoldenStep & { steps?: GoldenStep[] };
      for (const [i, step] of (doc.steps ?? [doc]).entries()) out.push({ where: `${profile}/${file}#${i + 1}`, profile, step });
    }
  }
  return out;
}

/** A recorded upstream body as the object its schema describes (a multipart form's parts as fields). */
function upstreamBody(r: GoldenRequest): { media: string; value: unknown } | null {
  if (r.body === null || r.body === undefined) return null;
  const type = (r.headers?.['content-type'] ?? 'application/json').split(';')[0]!.trim();
  if (type === 'multipart/form-data')
    return { media: type, value: formObject((r.body as { parts: { name: string; value?: string; filename?: string }[] }).parts) };
  return { media: type, value: r.body };
}

describe("OpenAI's OpenAPI document (pinned extract)", () => {
  const steps = goldenSteps();

  test("the golden cases' public answers on the OpenAI-compatible routes, every profile", () => {
    const found: string[] = [];
    let n = 0;
    for (const { where, step } of steps) {
      const op = spec.operation(step.request.method, step.request.path);
      if (!op || op.id === 'RetrieveVideoContent') continue; // the content route's bytes are checked live
      n++;
      // A streamed answer is recorded as its events.
      const streamed = step.response.status === 200 && Array.isArray(step.response.body);
      found.push(
        ...(streamed
          ? streamProblems('answer', op, step.response.body as unknown[])
          : answerProblems('answer', op, step.response.status, step.response.body)
        ).map((p) => `${where}: ${p}`),
      );
    }
    assert.ok(n > 100, `${n} golden answers on the OpenAI-compatible routes`);
    noProblems(found);
  });

  test('every request the zeta-openai profile sends upstream (its golden cases: zeta images, epsilon image and video)', () => {
    const found: string[] = [];
    let n = 0;
    for (const { where, profile, step } of steps) {
      if (profile !== 'zeta-openai') continue;
      for (const sent of [step.upstream, ...(step.then ?? []).map((t) => t.upstream)]) {
        if (!sent) continue;
        n++;
        const op = spec.operation(sent.method, sent.path);
        if (!op) {
          found.push(`${where}: ${sent.method} ${sent.path} is no operation of the document`);
          continue;
        }
        const body = upstreamBody(sent);
        if (!body) continue;
        const check = spec.request(op, body.media);
        if (!check) {
          found.push(`${where}: ${op.id} takes no ${body.media} body`);
          continue;
        }
        checked.upstream++;
        found.push(...unexcused('upstream', op.id, check(body.value)).map((p) => `${where}: ${op.id} request: ${p.message}`));
      }
    }
    assert.ok(n > 50, `${n} upstream requests`);
    noProblems(found);
  });
});

// ---- a live gateway in front of every simulator ------------------------------------------------

/** One video model of each family on POST /v1/videos (interface.md 4.6), text only. */
const VIDEO_MODELS = [
  'epsilon-video-3',
  'theta-H3',
  'beta-q3-pro',
  'lambda-3.0',
  'mu2.6-t2v:1280*720',
  'delta-vid-1-5-pro_720p',
  'delta-vid-2-0-260128',
  'gamma-video-3.0',
  'eta_3_1',
  'omni-fast',
  'xi-2.3',
  'GV-2.0',
];
/** Models that remix (routes.yaml videos-remix). */
const REMIX_MODELS = ['theta-H3', 'epsilon-video-3'];

describe('a live gateway in front of the simulators: every answer of the OpenAI-compatible routes', () => {
  let h: TaskHarness;
  const found: string[] = [];
  /** Sends a request and checks its JSON answer against the operation's; the parsed answer. */
  async function call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; json: any }> {
    const op = spec.operation(method, path);
    assert.ok(op, `${method} ${path} is an operation of the document`);
    const form = body instanceof FormData;
    const res = await fetch(h.url + path, {
      method,
      headers: { authorization: `Bearer ${key ?? h.key}`, ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    });
    const json = await res.json();
    found.push(...answerProblems('answer', op, res.status, json).map((p) => `${method} ${path}: ${p}`));
    return { status: res.status, json };
  }

  before(async () => {
    h = await startTaskHarness({ finishMs: 150 });
  });
  after(() => h?.close());

  test('videos: create, retrieve until completed, list, content, remix and delete, one model of each family', async () => {
    const ids: string[] = [];
    for (const model of VIDEO_MODELS) {
      // theta remixes only a 768P source (4.6).
      const size = model === 'theta-H3' ? { size: '768P' } : {};
      const created = await call('POST', '/v1/videos', { model, prompt: `a paper boat (${model})`, ...size });
      assert.equal(created.status, 200, `${model}: ${JSON.stringify(created.json)}`);
      assert.equal(created.json.prompt, `a paper boat (${model})`, `${model}: the prompt submitted`);
      assert.equal(created.json.remixed_from_video_id, null);
      ids.push(created.json.id);
    }
    for (const [i, id] of ids.entries()) {
      let last: any;
      for (let n = 0; n < 200 && !['completed', 'failed'].includes(last?.status); n++) {
        if (n > 0) await new Promise((r) => setTimeout(r, 25));
        last = (await call('GET', `/v1/videos/${id}`)).json;
      }
      assert.equal(last.status, 'completed', `${VIDEO_MODELS[i]}: ${JSON.stringify(last)}`);
      const content = await fetch(`${h.url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${h.key}` } });
      await content.arrayBuffer();
      const op = spec.operation('GET', `/v1/videos/${id}/content`)!;
      const type = (content.headers.get('content-type') ?? '').split(';')[0]!;
      assert.equal(content.status, 200, VIDEO_MODELS[i]);
      assert.ok(spec.answerTypes(op, 200).includes(type), `${VIDEO_MODELS[i]}: content of type ${type}, the document's are ${spec.answerTypes(op, 200)}`);
      checked.answer++;
    }
    const listed = await call('GET', '/v1/videos?limit=100');
    assert.equal(listed.status, 200);
    assert.ok(listed.json.data.length >= VIDEO_MODELS.length);
    await call('GET', '/v1/videos?limit=2&order=asc');

    for (const model of REMIX_MODELS) {
      const source = ids[VIDEO_MODELS.indexOf(model)]!;
      const remix = await call('POST', `/v1/videos/${source}/remix`, { prompt: 'the same, at night' });
      assert.equal(remix.status, 200, JSON.stringify(remix.json));
      assert.deepEqual([remix.json.prompt, remix.json.remixed_from_video_id], ['the same, at night', source]);
      assert.equal((await call('GET', `/v1/videos/${remix.json.id}`)).json.remixed_from_video_id, source, 'the query answers it too');
    }
    const deleted = await call('DELETE', `/v1/videos/${ids[0]}`);
    assert.equal(deleted.status, 200);
    noProblems(found.splice(0));
  });

  test('images: generations of every image family, edits (multipart)', async () => {
    for (const [model, extra] of [
      ['zeta-image-1', {}],
      ['zeta-image-2', { size: '1536x1024' }],
      ['zeta-draw-3', { response_format: 'url' }],
      ['zeta-draw-2', { response_format: 'b64_json', n: 2, size: '256x256' }],
      ['epsilon-4-2-image', { size: '16:9' }],
      ['gamma-4.0', {}],
      ['delta-img-4-0-250828', { size: '1:1' }],
    ] as const) {
      const r = await call('POST', '/v1/images/generations', { model, prompt: 'a red kite', ...extra });
      assert.equal(r.status, 200, `${model}: ${JSON.stringify(r.json).slice(0, 300)}`);
    }
    for (const model of ['zeta-image-1', 'gamma-4.0']) {
      const form = new FormData();
      form.append('model', model);
      form.append('prompt', 'make it blue');
      form.append('image', new Blob([makePng(256, 256, 3)], { type: 'image/png' }), 'a.png');
      const r = await call('POST', '/v1/images/edits', form);
      assert.equal(r.status, 200, `${model}: ${JSON.stringify(r.json).slice(0, 300)}`);
    }
    noProblems(found.splice(0));
  });

  /** Posts a streamed request to the gateway; its events (`{event, data}`) after checking them against the document. */
  async function streamed(path: string, body: Record<string, unknown> | FormData): Promise<{ event: string; data: any }[]> {
    const op = spec.operation('POST', path);
    assert.ok(op);
    const form = body instanceof FormData;
    const res = await fetch(h.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, ...(form ? {} : { 'content-type': 'application/json' }) },
      body: form ? body : JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 300));
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const events = text
      .split('\r\n\r\n')
      .filter((f) => f !== '')
      .map((f) => ({ event: /^event: (.+)$/m.exec(f)?.[1] ?? '', data: JSON.parse(/^data: (.*)$/m.exec(f)?.[1] ?? 'null') }));
    found.push(...streamProblems('answer', op, events).map((p) => `POST ${path}: ${p}`));
    return events;
  }

  test('image streams through the gateway: generations and edits, partial and completed events, the error event, a url as a gateway link', async () => {
    const gen = await streamed('/v1/images/generations', { model: 'zeta-image-1', prompt: 'a red kite', stream: true, partial_images: 2 });
    assert.deepEqual(
      gen.map((e) => e.event),
      ['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed'],
    );
    const url = await streamed('/v1/images/generations', { model: 'zeta-image-2', prompt: 'a red kite', stream: true, response_format: 'url' });
    assert.match(url.at(-1)?.data.url, /\/v1\/links\//);
    const form = new FormData();
    for (const [k, v] of Object.entries({ model: 'zeta-image-1', prompt: 'make it blue', stream: 'true', partial_images: '1' })) form.append(k, v);
    form.append('image', new Blob([makePng(256, 256, 3)], { type: 'image/png' }), 'a.png');
    const edit = await streamed('/v1/images/edits', form);
    assert.deepEqual(
      edit.map((e) => e.event),
      ['image_edit.partial_image', 'image_edit.completed'],
    );
    const failed = await streamed('/v1/images/generations', {
      model: 'zeta-image-1',
      prompt: 'a red kite [sim:fault=stream-error]',
      stream: true,
      partial_images: 1,
    });
    assert.deepEqual(
      failed.map((e) => e.event),
      ['image_generation.partial_image', 'error'],
    );
    noProblems(found.splice(0));
  });

  test('errors: 400, 401, 404 (shape A) and 429 (shape B, listed)', async () => {
    assert.equal((await call('POST', '/v1/videos', { model: 'epsilon-video-3' })).status, 400);
    assert.equal((await call('POST', '/v1/images/generations', { model: 'zeta-image-1', prompt: 'x', n: 'many' })).status, 400);
    assert.equal((await call('GET', '/v1/videos/task_nope', undefined, 'not-a-key')).status, 401);
    assert.equal((await call('GET', '/v1/videos/task_000000000000000000000000')).status, 404);
    assert.equal((await call('DELETE', '/v1/videos/task_000000000000000000000000')).status, 404);
    assert.equal((await call('POST', '/v1/videos/task_000000000000000000000000/remix', { prompt: 'x' })).status, 404);
    h.sims['zeta-openai']!.faults.push('429');
    assert.equal((await call('POST', '/v1/images/generations', { model: 'zeta-image-1', prompt: 'x' })).status, 429);
    noProblems(found.splice(0));
  });

  // A known gap, kept visible rather than skipped: the document types a thumbnail image/webp (or
  // JSON), and the gateway passes the beta vendor's cover as the PNG it is (converting images is not
  // its job). This fails when that changes, so the gap is taken off once it is closed (issue 38).
  test("content ?variant=thumbnail where a family makes one (beta): a known gap, the vendor's PNG where the document says image/webp", async () => {
    const created = await call('POST', '/v1/videos', { model: 'beta-q3-pro', prompt: 'a cover' });
    await h.waitFor(created.json.id, (t) => t.status === 'completed');
    const thumb = await fetch(`${h.url}/v1/videos/${created.json.id}/content?variant=thumbnail`, { headers: { authorization: `Bearer ${h.key}` } });
    await thumb.arrayBuffer();
    assert.equal(thumb.status, 200);
    assert.equal(thumb.headers.get('content-type'), 'image/png', 'still the gap this test names; if it is closed, assert image/webp here');
  });
});

// ---- the zeta-openai simulator ----------------------------------------------------------------

describe('the zeta-openai simulator: every answer', () => {
  let sim: Simulator;
  const found: string[] = [];
  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
    const op = spec.operation(method, path);
    assert.ok(op, `${method} ${path} is an operation of the document`);
    const form = body instanceof FormData;
    const res = await fetch(sim.url + path, {
      method,
      headers: { authorization: `Bearer ${sim.secrets.key}`, ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    });
    const json = await res.json();
    found.push(...answerProblems('simulator', op, res.status, json).map((p) => `${method} ${path}: ${p}`));
    return { status: res.status, json };
  }
  const video = (fields: Record<string, string>, files = 0) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    for (let i = 0; i < files; i++) form.append('input_reference', new Blob([makePng(16, 9, i)], { type: 'image/png' }), `r${i}.png`);
    return form;
  };

  before(async () => {
    sim = await SIMULATORS['zeta-openai']!({ finishMs: 60 });
  });
  after(() => sim?.close());

  test('videos: create (form and JSON), retrieve, list, content and its variants, remix, delete', async () => {
    const a = await call('POST', '/v1/videos', video({ model: 'zeta-video-2', prompt: 'a boat', seconds: '8', size: '1280x720' }, 1));
    const b = await call('POST', '/v1/videos', { model: 'epsilon-video-3', prompt: 'a kite', input_reference: { image_url: 'https://example.test/a.png' } });
    const c = await call('POST', '/v1/videos', { prompt: 'never done [sim:finish=60000]' });
    for (const r of [a, b, c]) assert.equal(r.status, 200, JSON.stringify(r.json));
    let done: any;
    for (let n = 0; n < 200 && done?.status !== 'completed'; n++) {
      await new Promise((r) => setTimeout(r, 20));
      done = (await call('GET', `/v1/videos/${a.json.id}`)).json;
    }
    assert.equal(done.status, 'completed');
    const op = spec.operation('GET', `/v1/videos/${a.json.id}/content`)!;
    for (const variant of ['video', 'thumbnail', 'spritesheet']) {
      const r = await fetch(`${sim.url}/v1/videos/${a.json.id}/content?variant=${variant}`, { headers: { authorization: `Bearer ${sim.secrets.key}` } });
      await r.arrayBuffer();
      assert.equal(r.status, 200, variant);
      const type = r.headers.get('content-type') ?? '';
      assert.ok(spec.answerTypes(op, 200).includes(type), `${variant}: ${type}; the document's are ${spec.answerTypes(op, 200)}`);
      checked.simulator++;
    }
    for (const q of ['', '?limit=1', '?order=asc&limit=2', `?after=${c.json.id}`]) assert.equal((await call('GET', `/v1/videos${q}`)).status, 200, q);
    const remix = await call('POST', `/v1/videos/${a.json.id}/remix`, { prompt: 'at night' });
    assert.equal(remix.json.remixed_from_video_id, a.json.id);
    assert.equal((await call('DELETE', `/v1/videos/${a.json.id}`)).status, 200);
    noProblems(found.splice(0));
  });

  test('images: generations of each line, edits', async () => {
    for (const body of [
      { model: 'zeta-image-1', prompt: 'x' },
      { model: 'zeta-image-2', prompt: 'x', size: '1024x1536', output_format: 'webp' },
      { model: 'zeta-draw-3', prompt: 'x', response_format: 'url' },
      { model: 'zeta-draw-2', prompt: 'x', n: 2, response_format: 'b64_json' },
      { model: 'epsilon-4-2-image', prompt: 'x', response_format: 'url' },
    ])
      assert.equal((await call('POST', '/v1/images/generations', body)).status, 200, body.model);
    const form = new FormData();
    for (const [k, v] of Object.entries({ model: 'zeta-image-1', prompt: 'bluer' })) form.append(k, v);
    form.append('image[]', new Blob([makePng(32, 32, 1)], { type: 'image/png' }), 'a.png');
    form.append('image[]', new Blob([makePng(32, 32, 2)], { type: 'image/png' }), 'b.png');
    assert.equal((await call('POST', '/v1/images/edits', form)).status, 200);
    noProblems(found.splice(0));
  });

  /** Posts a streamed request and checks every event against the operation's `text/event-stream` answer; the events' names. */
  async function stream(path: string, body: Record<string, unknown> | FormData, fault?: string): Promise<string[]> {
    const op = spec.operation('POST', path);
    assert.ok(op, `POST ${path} is an operation of the document`);
    const check = spec.answer(op, 200, 'text/event-stream');
    assert.ok(check, `${op.id}: the document describes a text/event-stream answer`);
    const form = body instanceof FormData;
    const res = await fetch(sim.url + path, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${sim.secrets.key}`,
        ...(form ? {} : { 'content-type': 'application/json' }),
        ...(fault ? { 'x-sim-fault': fault } : {}),
      },
      body: form ? body : JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    assert.ok(spec.answerTypes(op, 200).includes(res.headers.get('content-type') ?? ''), `a stream of type ${res.headers.get('content-type')}`);
    const names: string[] = [];
    for (const raw of (await res.text()).split('\n\n').filter((f) => f !== '')) {
      const name = /^event: (.+)$/m.exec(raw)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(raw)?.[1] ?? 'null') as { type?: string };
      names.push(name);
      assert.equal(data.type, name, 'the data names its event');
      // The document describes no error event on these routes: its `error` is the document's error object, as in ErrorResponse.
      const problems = name === 'error' ? spec.component('ErrorResponse')(data) : check(data);
      checked.simulator++;
      found.push(...unexcused('simulator', op.id, problems).map((p) => `${op.id} ${name}: ${p.message}`));
    }
    return names;
  }

  test('image streams: every event of generations and edits, partial and completed, and the mid-stream error event', async () => {
    const gen = '/v1/images/generations';
    for (const body of [
      { model: 'zeta-image-1', prompt: 'x', stream: true, partial_images: 3 },
      {
        model: 'zeta-image-2',
        prompt: 'x',
        stream: true,
        partial_images: 1,
        size: '1024x1536',
        quality: 'high',
        background: 'transparent',
        output_format: 'webp',
      },
      { prompt: 'x', stream: true },
    ]) {
      const names = await stream(gen, body);
      assert.equal(names.at(-1), 'image_generation.completed');
      assert.equal(names.length, ((body as { partial_images?: number }).partial_images ?? 0) + 1);
    }
    const form = new FormData();
    for (const [k, v] of Object.entries({ model: 'zeta-image-1', prompt: 'bluer', stream: 'true', partial_images: '2', size: '1536x1024', quality: 'low' }))
      form.append(k, v);
    form.append('image', new Blob([makePng(32, 32, 1)], { type: 'image/png' }), 'a.png');
    assert.deepEqual(await stream('/v1/images/edits', form), ['image_edit.partial_image', 'image_edit.partial_image', 'image_edit.completed']);
    assert.deepEqual(await stream(gen, { model: 'zeta-image-1', prompt: 'x', stream: true, partial_images: 2 }, 'stream-error'), [
      'image_generation.partial_image',
      'error',
    ]);
    noProblems(found.splice(0));
  });

  test('errors: 400, 401, 404, 429, 500, 503 in the error object', async () => {
    const cases: [number, Promise<{ status: number }>][] = [
      [400, call('POST', '/v1/videos', { model: 'zeta-video-2', prompt: 'x', size: '1920x1080' })],
      [400, call('POST', '/v1/images/generations', { model: 'zeta-image-1', prompt: 'x', response_format: 'url' })],
      [401, call('GET', '/v1/videos/video_x', undefined, { authorization: 'Bearer wrong' })],
      [404, call('GET', '/v1/videos/video_nope')],
      [404, call('DELETE', '/v1/videos/video_nope')],
      [404, call('POST', '/v1/videos/video_nope/remix', { prompt: 'x' })],
      [429, call('POST', '/v1/images/generations', { model: 'zeta-image-1', prompt: 'x' }, { 'x-sim-fault': '429' })],
      [500, call('POST', '/v1/videos', { prompt: 'x' }, { 'x-sim-fault': '500' })],
      [503, call('GET', '/v1/videos', undefined, { 'x-sim-fault': '503' })],
    ];
    for (const [status, r] of cases) assert.equal((await r).status, status);
    noProblems(found.splice(0));
  });
});

test('the converter: nullable, $ref, discriminator and OpenAPI 3.1 null types as ajv reads them', () => {
  const converted = toJsonSchema({
    oneOf: [{ $ref: '#/components/schemas/A' }, { type: 'string', enum: ['x'], nullable: true }],
    discriminator: { propertyName: 'kind' },
    properties: { n: { type: ['integer', 'null'] }, m: { anyOf: [{ type: 'string' }], nullable: true }, 'x-note': { type: 'string' } },
  });
  assert.deepEqual(converted, {
    oneOf: [{ $ref: 'spec#/$defs/A' }, { type: ['string', 'null'], enum: ['x', null] }],
    properties: { n: { type: ['integer', 'null'] }, m: { anyOf: [{ anyOf: [{ type: 'string' }] }, { type: 'null' }] }, 'x-note': { type: 'string' } },
  });
  assert.deepEqual(
    formObject([
      { name: 'n', value: '2' },
      { name: 'image[]', filename: 'a' },
      { name: 'image[]', filename: 'b' },
      { name: 'ref[image_url]', value: 'u' },
    ]),
    {
      n: '2',
      image: ['<file>', '<file>'],
      ref: { image_url: 'u' },
    },
  );
});

test('every listed difference is still seen, and every side was checked', () => {
  assert.deepEqual(
    INTERFACE_DIFFERENCES.map((d) => d.id).filter((id) => !used.has(id)),
    [],
    'a difference nothing shows any more is taken off the list',
  );
  assert.equal(new Set(INTERFACE_DIFFERENCES.map((d) => d.id)).size, INTERFACE_DIFFERENCES.length, 'each difference once');
  for (const side of ['answer', 'upstream', 'simulator'] as const) assert.ok(checked[side] > 0, `${side}: ${checked[side]} checked`);
  console.log(
    `checked against the document: ${JSON.stringify(checked)}; differences listed: ${INTERFACE_DIFFERENCES.map((d) => `${d.id} (${d.section})`).join(', ')}`,
  );
});
