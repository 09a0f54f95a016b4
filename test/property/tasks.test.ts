/**
 * Property tests of the task routes under hostile input: POST /v1/video/generations, POST
 * /v1/videos (JSON and multipart), POST /beta/ent/v2/reference2video, POST /iota/submit/music,
 * POST /iota/fetch, and the query and download routes with random ids, over real HTTP against a
 * gateway in front of every simulator. A refused request is a 4xx of shape A (docs/spec/interface.md section
 * 7) whose code is in the catalogue, never a 5xx, a crash or a hang, and it never reaches a vendor.
 * `FC_SEED=<n>` replays a failing run; `FC_SCALE=<k>` runs every property k times longer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { makeFlatPng, makePng } from '../../src/sim/png.js';
import {
  Client,
  assertShapeA,
  dotted,
  expectError,
  namesFieldOrAncestor,
  otherKindArb,
  sendStreaming,
  withAt,
  type Answer,
  type Json,
  type Seg,
} from '../helpers/hostile.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

const HOST = '127.0.0.1';
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const scale = Math.max(1, Number(process.env.FC_SCALE ?? 1) || 1);
const runs = (numRuns: number) => ({ numRuns: numRuns * scale, ...(seed !== undefined ? { seed } : {}) });

const VIDEO_GEN = '/v1/video/generations';
const VIDEOS = '/v1/videos';
const BETA = '/beta/ent/v2/reference2video';
const IOTA_MUSIC = '/iota/submit/music';
const IOTA_FETCH = '/iota/fetch';
const POST_ROUTES = [VIDEO_GEN, VIDEOS, BETA, IOTA_MUSIC, IOTA_FETCH] as const;
const IMG = 'https://example.com/ref.png';
// 128x128: section 8's smallest image, which the beta families take.
const PNG_URI = `data:image/png;base64,${makeFlatPng(128, 128).toString('base64')}`;
const BETA_MODELS = ['betaq3-pro', 'betaq2-pro', 'betaq2-turbo', 'betaq2-pro-fast', 'betaq1', 'betaq1-classic', 'beta2.0'];

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Free text: ASCII, graphemes, any code point, lone surrogates, NUL, BOM, U+2028; never a simulator marker. */
const textArb = fc
  .tuple(
    fc.oneof(
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
    ),
    fc.option(fc.constantFrom('\ud800', '\udfff', '\u0000', '\u2028', '\ufeff', '"\\', '{}'), { nil: '' }),
  )
  .map(([a, b]) => a + b)
  .filter((s) => !s.includes('[sim:') && s.trim() !== '');

const notString = otherKindArb('string');
const notBoolean = otherKindArb('boolean');
const notInteger: fc.Arbitrary<Json> = fc.oneof(
  otherKindArb('number'),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
);
const longString = (min: number) => fc.integer({ min: min + 1, max: min + 3000 }).map((n) => 'x'.repeat(n));

/** Valid bodies per route (the vendors accept them too). */
const videoBodyArb: fc.Arbitrary<Json> = fc.record(
  {
    model: fc.constant('epsilon-video-3'),
    prompt: textArb,
    seconds: fc.constantFrom('4', '8', '12'),
    size: fc.constantFrom('1280x720', '720x1280'),
  },
  { requiredKeys: ['model', 'prompt'] },
) as fc.Arbitrary<Json>;
const betaBodyArb: fc.Arbitrary<Json> = fc.record(
  {
    model: fc.constantFrom(...BETA_MODELS),
    subjects: fc
      .array(fc.record({ id: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), images: fc.array(fc.constantFrom(IMG, PNG_URI), { minLength: 1, maxLength: 3 }) }), {
        minLength: 1,
        maxLength: 3,
      })
      .filter((s) => new Set(s.map((x) => x.id)).size === s.length),
    prompt: textArb,
    duration: fc.integer({ min: 1, max: 10 }),
    resolution: fc.constantFrom('540p', '720p', '1080p'),
    wm_position: fc.constantFrom(1, 2, 3, 4),
    audio: fc.boolean(),
    voice_id: fc.string({ maxLength: 20 }),
    is_rec: fc.boolean(),
    bgm: fc.boolean(),
    seed: fc.maxSafeInteger(),
    off_peak: fc.boolean(),
    watermark: fc.boolean(),
    wm_url: fc.constantFrom('https://example.com/wm.png', 'http://x'),
    payload: fc.string({ maxLength: 40 }),
    meta_data: fc.string({ maxLength: 40 }),
  },
  { requiredKeys: ['model', 'subjects'] },
) as fc.Arbitrary<Json>;
const iotaBodyArb: fc.Arbitrary<Json> = fc.record(
  {
    mv: fc.constantFrom('iota-v4.5', 'iota-v4', 'iota-v3.5', 'iota-x'),
    prompt: textArb,
    gpt_description_prompt: textArb,
    title: fc.string({ maxLength: 30 }),
    tags: fc.string({ maxLength: 30 }),
    make_instrumental: fc.boolean(),
    continue_clip_id: fc.string({ maxLength: 30 }),
    continue_at: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.double({ min: 0, max: 600, noNaN: true })),
  },
  { requiredKeys: ['mv', 'prompt'] },
) as fc.Arbitrary<Json>;

/** One way to break a valid body: the field it touches and the broken body. */
interface Breakage {
  readonly path: Seg[];
  readonly body: Json;
  /** Whether the schema error must name the field (or an ancestor) in `param`. */
  readonly named: boolean;
}
type Breaker = (body: Json) => fc.Arbitrary<Breakage>;
const setTo =
  (path: Seg[], arb: fc.Arbitrary<Json | undefined>, named = true): Breaker =>
  (body) =>
    arb.map((v) => ({ path, body: withAt(body, path, v), named }));

/** Per route: a valid body and ways to break it the public schema catches. */
const BROKEN: Record<string, { valid: fc.Arbitrary<Json>; breakers: Breaker[] }> = {
  video: {
    valid: videoBodyArb,
    breakers: [
      setTo(['model'], fc.oneof(notString, fc.constant(''), longString(200))),
      setTo(['prompt'], fc.oneof(notString, fc.constant(''), longString(20000))),
      setTo(['prompt'], fc.constant(undefined), true),
      setTo(
        ['seconds'],
        fc.oneof(fc.constantFrom<Json>('0', '04', 'abc', '1234', '', ' 4', 0, 121, -1, 4.5, true, null, [], {}), fc.stringMatching(/^[a-z]{1,5}$/)),
      ),
      setTo(['duration'], fc.oneof(fc.constantFrom<Json>(0, 121, -5, 1.5, '5', true, null), fc.integer({ min: 121 }), fc.integer({ max: 0 }))),
      setTo(['size'], fc.oneof(notString, fc.constant(''), longString(40))),
      setTo(
        ['images'],
        fc.oneof(fc.constantFrom<Json>([], 'x', 5, null, {}), fc.array(notString, { minLength: 1, maxLength: 3 }), fc.constant(Array(17).fill(IMG))),
      ),
      setTo(['image'], fc.oneof(notString, fc.constant(''))),
      setTo(['input_reference'], fc.constantFrom<Json>({}, { x: 1 }, { image_url: '' }, { file_id: 5 }, 5, true, null, [], [''], Array(17).fill(IMG))),
      setTo(['metadata'], fc.oneof(otherKindArb('object'), fc.constant(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]))))),
    ],
  },
  beta: {
    valid: betaBodyArb,
    breakers: [
      setTo(
        ['model'],
        fc.oneof(
          notString,
          fc.string({ maxLength: 12 }).filter((s) => !BETA_MODELS.includes(s)),
          fc.constantFrom('BETAQ2-PRO', 'betaq2-pro ', 'beta-q3-pro'),
        ),
      ),
      setTo(
        ['subjects'],
        fc.oneof(otherKindArb('array'), fc.constant<Json>([]), fc.constant<Json>(Array.from({ length: 17 }, (_, i) => ({ id: `s${i}`, images: [IMG] })))),
      ),
      setTo(['subjects', 0], otherKindArb('object')),
      setTo(['subjects', 0, 'id'], fc.oneof(notString, fc.constantFrom('', 'a b', 'x/y', 'é', 'a'.repeat(65)))),
      setTo(['subjects', 0, 'id'], fc.constant(undefined)),
      setTo(['subjects', 0, 'images'], fc.oneof(otherKindArb('array'), fc.constant<Json>([]), fc.constant<Json>([IMG, IMG, IMG, IMG]))),
      setTo(
        ['subjects', 0, 'images', 0],
        fc.oneof(
          notString,
          fc.constantFrom(
            '',
            'iVBORw0KGgo=',
            'ftp://x/y.png',
            'data:image/gif;base64,R0lG',
            'data:text/plain;base64,aGk=',
            'data:image/png;base64,***',
            'https://',
          ),
        ),
      ),
      setTo(['subjects', 0, 'voice_id'], fc.oneof(notString, longString(200))),
      setTo(['subjects', 0, 'extra'], fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json>),
      setTo(['prompt'], fc.oneof(notString, longString(5000))),
      setTo(['audio'], notBoolean),
      setTo(['duration'], fc.oneof(notInteger, fc.integer({ max: 0 }), fc.integer({ min: 17 }))),
      setTo(['seed'], fc.oneof(notInteger, fc.constantFrom(9007199254740992, -9007199254740992))),
      setTo(
        ['resolution'],
        fc.oneof(
          notString,
          fc.string({ maxLength: 8 }).filter((s) => !['540p', '720p', '1080p'].includes(s)),
          fc.constantFrom('4K', '720P', '2160p', '480p'),
        ),
      ),
      setTo(['wm_position'], fc.oneof(fc.constantFrom<Json>(0, 5, '1', 1.5, null, true), fc.integer({ min: 5 }), fc.integer({ max: 0 }))),
      setTo(['wm_url'], fc.oneof(notString, fc.constantFrom('ftp://x', 'example.com', 'javascript:alert(1)'))),
      setTo(['payload'], fc.oneof(notString, longString(10000))),
      setTo(['off_peak'], notBoolean),
      // Unknown fields at the root are refused (additionalProperties: false).
      (body) =>
        fc
          .tuple(
            fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom('constructor', 'toString', '__proto__', 'Model', 'images', 'callback_url')),
            fc.jsonValue({ maxDepth: 1 }),
          )
          .filter(
            ([k]) =>
              ![
                'model',
                'subjects',
                'prompt',
                'audio',
                'voice_id',
                'is_rec',
                'bgm',
                'duration',
                'seed',
                'resolution',
                'off_peak',
                'watermark',
                'wm_position',
                'wm_url',
                'payload',
                'meta_data',
              ].includes(k),
          )
          .map(([k, v]) => ({ path: [k], body: withAt(body, [k], v as Json), named: k !== '__proto__' })),
    ],
  },
  iota: {
    valid: iotaBodyArb,
    breakers: [
      setTo(['mv'], fc.oneof(notString, fc.constant(''), longString(100))),
      setTo(['mv'], fc.constant(undefined)),
      setTo(['prompt'], fc.oneof(notString, fc.constant(''), longString(5000))),
      setTo(['gpt_description_prompt'], fc.oneof(notString, fc.constant(''), longString(3000))),
      // Neither prompt nor gpt_description_prompt: an anyOf at the root, so no field to name.
      (body) => fc.constant({ path: ['prompt'], body: withAt(withAt(body, ['prompt'], undefined), ['gpt_description_prompt'], undefined), named: false }),
      setTo(['title'], fc.oneof(notString, longString(200))),
      setTo(['tags'], fc.oneof(notString, longString(1000))),
      setTo(['make_instrumental'], notBoolean),
      setTo(['continue_at'], fc.oneof(otherKindArb('number'), fc.integer({ max: -1 }))),
      (body) =>
        fc
          .tuple(fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom('constructor', 'model', 'Prompt', 'ids')), fc.jsonValue({ maxDepth: 1 }))
          .filter(
            ([k]) =>
              !['mv', 'prompt', 'gpt_description_prompt', 'title', 'tags', 'make_instrumental', 'continue_clip_id', 'continue_at', '__proto__'].includes(k),
          )
          .map(([k, v]) => ({ path: [k], body: withAt(body, [k], v as Json), named: true })),
    ],
  },
  fetch: {
    valid: fc.record({ ids: fc.array(fc.string({ minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 5 }) }) as fc.Arbitrary<Json>,
    breakers: [
      setTo(
        ['ids'],
        fc.oneof(otherKindArb('array'), fc.constant<Json>([]), fc.array(fc.constant<Json>('x'), { minLength: 101, maxLength: 150 }) as fc.Arbitrary<Json>),
      ),
      setTo(['ids'], fc.constant(undefined)),
      setTo(['ids', 0], fc.oneof(notString, fc.constant(''), longString(100))),
      (body) =>
        fc
          .tuple(
            fc.string({ minLength: 1, maxLength: 10 }).filter((k) => k !== 'ids' && k !== '__proto__'),
            fc.jsonValue({ maxDepth: 1 }),
          )
          .map(([k, v]) => ({ path: [k], body: withAt(body, [k], v as Json), named: true })),
    ],
  },
};
const ROUTE_OF: Record<string, string[]> = { video: [VIDEO_GEN, VIDEOS], beta: [BETA], iota: [IOTA_MUSIC], fetch: [IOTA_FETCH] };
const brokenArb = fc.constantFrom(...Object.keys(BROKEN)).chain((family) => {
  const { valid, breakers } = BROKEN[family]!;
  return fc
    .tuple(
      fc.constantFrom(...ROUTE_OF[family]!),
      valid.chain((body) => fc.oneof(...breakers.map((b) => b(body)))),
    )
    .map(([path, broken]) => ({ family, path, broken }));
});

/** Content types a JSON body may come with, right or wrong. */
const contentTypeArb = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'application/jsonx',
  '',
);

/** Percent-encodes a string's UTF-8 bytes except unreserved characters. */
function pct(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}
/** A path segment standing for a task id: well-formed unknown ids, random text, broken escapes, very long ones. */
const idSegmentArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{24}$/).map((s) => `task_${s}`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(pct),
  fc.stringMatching(/^[\x21-\x2e\x30-\x3e\x40-\x7e]{1,30}$/),
  fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%2F', '%2e%2e', '..', '.', 'task_', 'task_%00', '%ED%A0%80', 'null', 'undefined', '__proto__', 'constructor'),
  fc.integer({ min: 200, max: 6000 }).map((n) => 'task_' + 'A'.repeat(n)),
);
const QUERY_PATHS = [
  (id: string) => `/v1/videos/${id}`,
  (id: string) => `/v1/videos/${id}/content`,
  (id: string) => `/v1/video/generations/${id}`,
  (id: string) => `/beta/ent/v2/tasks/${id}/creations`,
  (id: string) => `/iota/fetch/${id}`,
  (id: string) => `/iota/fetch/${id}/content`,
];

// ---------------------------------------------------------------------------------------------
// Multipart bodies, written byte by byte so anything can be sent

interface Part {
  readonly name: string;
  readonly value: string | Buffer;
  /** A file part: its file name and content type (null: no Content-Type line). */
  readonly file?: { readonly filename: string; readonly type: string | null };
}
function multipart(parts: readonly Part[], boundary = `----gwprop${Math.random().toString(16).slice(2)}`): { body: Buffer; type: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.file) head += `; filename="${p.file.filename}"${p.file.type === null ? '' : `\r\nContent-Type: ${p.file.type}`}`;
    chunks.push(Buffer.from(`${head}\r\n\r\n`, 'utf8'), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value, 'utf8'), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

/** Field names: the real ones, bracket forms, prototype names and names the gateway refuses. */
const fieldNameArb = fc.oneof(
  fc.constantFrom(
    'model',
    'prompt',
    'seconds',
    'size',
    'input_reference',
    'image',
    'images',
    'images[]',
    'metadata',
    'duration',
    'metadata[a]',
    'model[]',
    'model[x]',
    'prompt[]',
  ),
  fc.constantFrom(
    'constructor',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '__proto__',
    'prototype',
    '__proto__[x]',
    'metadata[__proto__]',
    'model[constructor]',
    'toString[]',
  ),
  fc.constantFrom('', ' ', 'a b', 'x]', '[x]', 'a[b][c]', '1abc', 'é', 'a'.repeat(65)),
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,10}$/),
);
const fieldValueArb = fc.oneof(
  textArb,
  fc.constantFrom('epsilon-video-3', '4', '1280x720', '{', '{}', '{"a":1}', '{"__proto__":{"polluted":1}}', '[1,2]', 'null', IMG, PNG_URI, ''),
  // Nested JSON, within the body's max_depth (32) and far past it.
  fc.integer({ min: 1, max: 3000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
);
/** Models of every family /v1/videos serves, each behind another profile. */
const VIDEO_MODELS = ['epsilon-video-3', 'gamma-video-1', 'lambda-3.0', 'beta-q3-pro', 'mu2.6-t2v:1280*720'];
const filePartArb: fc.Arbitrary<Part> = fc.record({
  name: fc.oneof(fc.constant('input_reference'), fieldNameArb),
  value: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  file: fc.record({
    filename: fc.oneof(fc.constantFrom('ref.png', '', '../../etc/passwd', 'a"b.png', 'é.png'), fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/)),
    // With an empty file name busboy reads the part as a text field, so a charset matters.
    type: fc.oneof(
      fc.constantFrom(
        'image/png',
        'image/jpeg',
        'video/mp4',
        'text/plain',
        'text/plain; charset=utf-8',
        'text/plain; charset=iso-8859-2',
        'image/png; charset=x',
        'application/octet-stream',
        'image/png; name=x',
        '',
        'x',
        'image/',
      ),
      fc.constant(null),
    ),
  }),
});
const partsArb: fc.Arbitrary<Part[]> = fc.array(
  fc.oneof({ weight: 3, arbitrary: fc.record({ name: fieldNameArb, value: fieldValueArb }) as fc.Arbitrary<Part> }, { weight: 1, arbitrary: filePartArb }),
  { maxLength: 8 },
);

// ---------------------------------------------------------------------------------------------

describe('task routes under hostile input (property)', () => {
  let h: TaskHarness;
  let client: Client;
  let port: number;
  const json = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', authorization: `Bearer ${h.key}`, ...extra });
  const send = (path: string, body: string | Buffer | null, headers: Record<string, string> = json(), method = 'POST') =>
    client.send({ method, path, headers, body });
  /** Requests the simulators received so far, all together. */
  const vendorRequests = () => Object.values(h.sims).reduce((n, s) => n + s.stats.requests, 0);
  /** Submissions the simulators accepted so far (polls of earlier tasks do not count). */
  const vendorSubmits = () => Object.values(h.sims).reduce((n, s) => n + (s.stats.submits ?? 0), 0);
  /** The gateway still serves: a valid submission on the zeta route is accepted and can be queried. */
  const stillServes = async (why: string) => {
    const a = await send(VIDEO_GEN, JSON.stringify({ model: 'epsilon-video-3', prompt: 'still serving' }));
    assert.equal(a.status, 200, `the gateway no longer serves after ${why}: ${a.text.slice(0, 300)}`);
    const q = await send(`/v1/videos/${JSON.parse(a.text).id}`, null, { authorization: `Bearer ${h.key}` }, 'GET');
    assert.equal(q.status, 200, `the gateway no longer answers queries after ${why}`);
  };
  /** A 4xx of shape A with the catalogue status of its code; returns the error. */
  const refused = (a: Answer, what: string) => assertShapeA(a.status, a.text, what);

  before(async () => {
    h = await startTaskHarness({ finishMs: 300 });
    port = Number(new URL(h.url).port);
    client = new Client(HOST, port);
  });
  after(async () => {
    client?.close();
    await h?.close();
  });

  // 1. Refused before any vendor is involved: these run first, while no task exists, so the
  //    simulators' request counters must stay at zero.

  test('arbitrary JSON values, non-JSON bytes and wrong content types on every POST route: a 4xx of shape A', async () => {
    const bodyArb = fc.oneof(
      // Not an object, or an object without the route's required field.
      fc
        .jsonValue({ maxDepth: 3 })
        .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
        .map((v) => JSON.stringify(v)),
      fc
        .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 })
        .filter((d) => !('model' in d) && !('mv' in d) && !('ids' in d))
        .map((d) => JSON.stringify(d)),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)),
      fc.constantFrom(
        '',
        '{',
        '{"model":',
        '{"model":"epsilon-video-3",}',
        '\ufeff{"model":"epsilon-video-3","prompt":"x"}',
        'nul',
        '[]',
        '1e999',
        '"\\ud800"',
        '{"a":1}{"b":2}',
      ),
      fc.integer({ min: 20, max: 5000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
      fc.integer({ min: 20, max: 5000 }).map((n) => '{"model":'.repeat(n) + '1' + '}'.repeat(n)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...POST_ROUTES), bodyArb, contentTypeArb, async (path, body, type) => {
        const headers: Record<string, string> = { authorization: `Bearer ${h.key}` };
        if (type !== '') headers['content-type'] = type;
        const a = await send(path, body, headers);
        refused(a, `${path} ${type} ${JSON.stringify(String(body).slice(0, 100))}`);
      }),
      runs(120),
    );
    assert.equal(vendorRequests(), 0, 'no vendor saw a request');
  });

  test('valid bodies with exactly one schema violation: 400 invalid_request naming the field (or 404 for an unknown model)', async () => {
    await fc.assert(
      fc.asyncProperty(brokenArb, async ({ path, broken }) => {
        const what = `${path} ${dotted(broken.path)}: ${JSON.stringify(broken.body).slice(0, 200)}`;
        const a = await send(path, JSON.stringify(broken.body));
        const e = refused(a, what);
        if (e.code === 'model_not_found') {
          assert.equal(e.param, 'model', what);
          assert.ok(['model', 'mv'].includes(String(broken.path[0])), `only a changed model is not found: ${what}`);
          return;
        }
        assert.equal(e.code, 'invalid_request', `${what}: ${a.text}`);
        // The field itself, an ancestor, or something inside the value put there (`images[0]` for images: [[]]).
        const field = dotted(broken.path);
        const named = namesFieldOrAncestor(e.param, broken.path) || e.param.startsWith(`${field}[`) || e.param.startsWith(`${field}.`);
        if (broken.named) assert.ok(named, `param ${JSON.stringify(e.param)} names ${field}: ${a.text}`);
      }),
      runs(250),
    );
    assert.equal(vendorRequests(), 0, 'no vendor saw a refused request');
  });

  test('GET with random ids on every query and download route: a 4xx of shape A', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...QUERY_PATHS),
        idSegmentArb,
        fc.option(fc.constantFrom('?variant=x', '?index=-1', '?index=999', '?key=x', '?task_id=1'), { nil: '' }),
        async (route, id, q) => {
          const path = route(id) + q;
          const a = await send(path, null, { authorization: `Bearer ${h.key}` }, 'GET');
          const e = refused(a, path.slice(0, 200));
          assert.ok(['task_not_found', 'invalid_request', 'not_found'].includes(e.code), `${path.slice(0, 200)}: ${a.text}`);
        },
      ),
      runs(150),
    );
    assert.equal(vendorRequests(), 0, 'no vendor saw a request for an unknown id');
  });

  test('malformed multipart bodies on POST /v1/videos: a 4xx of shape A', async () => {
    const boundary = 'gwpropBOUNDARY';
    const good = multipart(
      [
        { name: 'model', value: 'epsilon-video-3' },
        { name: 'prompt', value: 'x' },
      ],
      boundary,
    );
    // Where the closing delimiter `--gwpropBOUNDARY--` starts; a body cut before its last dash has none.
    const close = good.body.lastIndexOf(`--${boundary}--`);
    const malformedArb = fc.oneof(
      // A valid body cut short anywhere before its closing delimiter is complete.
      fc.integer({ min: 1, max: close + boundary.length + 3 }).map((n) => ({ body: good.body.subarray(0, n), type: good.type })),
      // The right bytes with a wrong, missing or garbled boundary.
      fc
        .constantFrom(
          'multipart/form-data',
          'multipart/form-data; boundary=',
          'multipart/form-data; boundary=nope',
          'multipart/form-data; boundary="unterminated',
          `${good.type}x`,
        )
        .map((type) => ({ body: good.body, type })),
      // Random bytes under a plausible header.
      fc.uint8Array({ maxLength: 200 }).map((b) => ({ body: Buffer.from(b), type: good.type })),
      // Parts whose headers are broken.
      fc
        .constantFrom(
          '--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--\r\n',
          '--B\r\nContent-Disposition: form-data; name=\r\n\r\nx\r\n--B--\r\n',
          '--B\r\n\r\nx\r\n--B--\r\n',
          '--B\r\nContent-Disposition: attachment; name="model"\r\n\r\nepsilon-video-3\r\n--B--\r\n',
          '--B--\r\n',
          '',
        )
        .map((text) => ({ body: Buffer.from(text), type: 'multipart/form-data; boundary=B' })),
    );
    await fc.assert(
      fc.asyncProperty(malformedArb, async ({ body, type }) => {
        const a = await send(VIDEOS, body, { authorization: `Bearer ${h.key}`, 'content-type': type });
        refused(a, `${type} ${JSON.stringify(body.toString('latin1').slice(0, 120))}`);
      }),
      runs(80),
    );
    assert.equal(vendorRequests(), 0, 'no vendor saw a malformed multipart body');
  });

  // 2. Bodies that may reach a vendor: never a 5xx; refused ones are shape A.

  test('random multipart parts on POST /v1/videos (odd names, prototype names, files, deep JSON): 200 or a 4xx of shape A', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(partsArb, fc.option(fc.constantFrom(...VIDEO_MODELS), { nil: null }), async (parts, model) => {
        const all: Part[] = model ? [{ name: 'model', value: model }, { name: 'prompt', value: 'x' }, ...parts] : parts;
        const { body, type } = multipart(all);
        const a = await send(VIDEOS, body, { authorization: `Bearer ${h.key}`, 'content-type': type });
        const what = JSON.stringify(all.map((p) => [p.name, p.file ? `<file ${p.file.type}>` : String(p.value).slice(0, 40)]));
        if (a.status === 200) {
          accepted++;
          assert.match(JSON.parse(a.text).id, /^task_/, what);
        } else refused(a, what);
      }),
      runs(120),
    );
    assert.ok(accepted > 0, 'some random multipart bodies were valid and accepted');
    await stillServes('random multipart bodies');
  });

  test('valid bodies with hostile free text on every submit route: 200, or a vendor refusal in shape A', async () => {
    const arb = fc.oneof(
      fc.tuple(fc.constantFrom(VIDEO_GEN, VIDEOS), videoBodyArb),
      fc.tuple(fc.constant(BETA), betaBodyArb),
      fc.tuple(fc.constant(IOTA_MUSIC), iotaBodyArb),
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(arb, async ([path, body]) => {
        const a = await send(path, JSON.stringify(body));
        if (a.status === 200) ok++;
        else refused(a, `${path} ${JSON.stringify(body).slice(0, 200)}`);
      }),
      runs(60),
    );
    assert.ok(ok > 0, 'valid bodies were accepted');
  });

  test('schema-valid unified video bodies for every model family (odd sizes, images, metadata): 200 or a 4xx of shape A', async () => {
    const mediaArb = fc.oneof(
      fc.constantFrom(IMG, PNG_URI, makePng(4, 4).toString('base64'), 'data:video/mp4;base64,AAAA', 'http://127.0.0.1:9/x.png'),
      fc.string({ minLength: 1, maxLength: 30 }),
    );
    const metaValueArb = fc.oneof(fc.jsonValue({ maxDepth: 2 }), mediaArb, fc.integer(), fc.constantFrom('16:9', '9:16', '1:1', 'pro', 'std', '1080p'));
    const metadataArb = fc.dictionary(
      fc.oneof(
        fc.constantFrom(
          'last_frame_url',
          'image_tail',
          'aspect_ratio',
          'aspectRatio',
          'negative_prompt',
          'cfg_scale',
          'mode',
          'camera_control',
          'output_config',
          'file_infos',
          'watermark',
          'seed',
          'resolution',
          'movement_amplitude',
          'audio',
          'bgm',
        ),
        fc.string({ maxLength: 8 }),
      ),
      metaValueArb as fc.Arbitrary<Json>,
      { maxKeys: 4 },
    );
    const bodyArb = fc.record(
      {
        model: fc.constantFrom(
          ...VIDEO_MODELS,
          'epsilon-video-3-pro',
          'lambda-3.0-Omni',
          'mu2.6-i2v:1920*1080',
          'beta-q3-turbo',
          'GV-1',
          'OS-x',
          'nu-2',
          'xi-v',
          'SV-1',
          'JV-1',
          'mu-other',
          'lambda-9',
        ),
        prompt: textArb,
        image: mediaArb,
        images: fc.array(mediaArb, { minLength: 1, maxLength: 3 }),
        input_reference: fc.oneof(
          mediaArb,
          fc.array(mediaArb, { minLength: 1, maxLength: 2 }),
          fc
            .record({ image_url: mediaArb, file_id: fc.string({ minLength: 1, maxLength: 10 }) }, { requiredKeys: [] })
            .filter((o) => Object.keys(o).length > 0),
        ),
        duration: fc.integer({ min: 1, max: 120 }),
        seconds: fc.oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 1, max: 999 }).map(String)),
        size: fc.oneof(
          fc.constantFrom('1280x720', '720x1280', '1920x1080', '16:9', '9:16', '1:1', '720p', '1280*720', 'x', '0x0', '99999x99999'),
          fc.string({ minLength: 1, maxLength: 20 }),
        ),
        metadata: metadataArb,
      },
      { requiredKeys: ['model', 'prompt'] },
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(VIDEO_GEN, VIDEOS), bodyArb, async (path, body) => {
        const a = await send(path, JSON.stringify(body));
        if (a.status === 200) {
          ok++;
          assert.match(JSON.parse(a.text).id, /^task_/);
        } else refused(a, `${path} ${JSON.stringify(body).slice(0, 300)}`);
      }),
      runs(150),
    );
    assert.ok(ok > 0, 'some were accepted');
  });

  // 3. The specific limits of the task routes.

  describe('specific limits', () => {
    const beta = (extra: Record<string, unknown> = {}, subject: Record<string, unknown> = {}) =>
      JSON.stringify({ model: 'betaq2-pro', subjects: [{ id: 's1', images: [IMG], ...subject }], prompt: 'a dancer', ...extra });

    test('the baseline: a valid beta request is accepted', async () => {
      const a = await send(BETA, beta());
      assert.equal(a.status, 200, a.text);
      assert.match(JSON.parse(a.text).task_id, /^task_/);
    });

    test('beta: a subject with 4 images → 400 naming subjects[0].images', async () => {
      const e = expectError(await send(BETA, beta({}, { images: [IMG, IMG, IMG, IMG] })), 'invalid_request');
      assert.equal(e.param, 'subjects[0].images');
    });

    test('beta: a base64 image without its data:image/... prefix → 400 naming it', async () => {
      const raw = makePng(8, 8).toString('base64');
      const e = expectError(await send(BETA, beta({}, { images: [raw] })), 'invalid_request');
      assert.equal(e.param, 'subjects[0].images[0]');
      const e2 = expectError(await send(BETA, beta({}, { images: [IMG, `data:image/gif;base64,${raw}`] })), 'invalid_request');
      assert.equal(e2.param, 'subjects[0].images[1]');
    });

    test('beta: resolution 4K → 400', async () => {
      const e = expectError(await send(BETA, beta({ resolution: '4K' })), 'invalid_request');
      assert.equal(e.param, 'resolution');
    });

    test('beta: wm_position 5 → 400', async () => {
      const e = expectError(await send(BETA, beta({ wm_position: 5 })), 'invalid_request');
      assert.equal(e.param, 'wm_position');
    });

    test('beta: duration 11 for betaq2-pro (and the other betaq2 models) → 400', async () => {
      for (const model of ['betaq2-pro', 'betaq2-turbo', 'betaq2-pro-fast']) {
        const e = expectError(await send(BETA, beta({ model, duration: 11 })), 'invalid_request', model);
        assert.equal(e.param, 'duration', model);
      }
      const ten = await send(BETA, beta({ duration: 10 }));
      assert.equal(ten.status, 200, `duration 10 is allowed: ${ten.text}`);
    });

    test('beta: a 21 MB body → 413, whether declared up front or streamed without a length', async () => {
      const before = vendorSubmits();
      const big = 21 * 1024 * 1024;
      // The body never ends: an answer can only be a refusal made before the whole of it was read.
      const declared = await sendStreaming(
        HOST,
        port,
        BETA,
        { 'content-type': 'application/json', authorization: `Bearer ${h.key}`, 'content-length': String(big) },
        big - 1,
        64 * 1024,
        10_000,
        false,
      );
      expectError(declared.answer, 'payload_too_large', 'declared');
      const streamed = await sendStreaming(
        HOST,
        port,
        BETA,
        { 'content-type': 'application/json', authorization: `Bearer ${h.key}`, 'transfer-encoding': 'chunked' },
        big,
        64 * 1024,
        10_000,
      );
      expectError(streamed.answer, 'payload_too_large', 'chunked');
      // A real JSON body just over the limit (one huge image) is refused too.
      const huge = beta({}, { images: [`data:image/png;base64,${'A'.repeat(21 * 1024 * 1024)}`] });
      expectError(await send(BETA, huge), 'payload_too_large', 'real body');
      assert.equal(vendorSubmits(), before, 'nothing reached a vendor');
      await stillServes('21 MB bodies');
    });

    test('POST /v1/videos: a multipart body with 20 files → 400', async () => {
      const png = makePng(4, 4);
      const parts: Part[] = [
        { name: 'model', value: 'epsilon-video-3' },
        { name: 'prompt', value: 'x' },
        ...Array.from({ length: 20 }, (_, i) => ({ name: 'input_reference', value: png, file: { filename: `r${i}.png`, type: 'image/png' } })),
      ];
      const { body, type } = multipart(parts);
      const submits = h.sims['zeta-openai']!.stats.submits;
      const e = expectError(await send(VIDEOS, body, { authorization: `Bearer ${h.key}`, 'content-type': type }), 'invalid_request');
      assert.match(e.message, /16 files/);
      assert.equal(h.sims['zeta-openai']!.stats.submits, submits);
      // 16 files is the limit, so it is accepted by the gateway (the vendor takes several references).
      const sixteen = multipart(parts.slice(0, 18));
      const ok = await send(VIDEOS, sixteen.body, { authorization: `Bearer ${h.key}`, 'content-type': sixteen.type });
      assert.notEqual(ok.status, 400, 'the files limit is 16, not less');
    });

    test('iota fetch with 101 ids → 400 naming ids; 100 unknown ids are fine', async () => {
      const e = expectError(
        await send(IOTA_FETCH, JSON.stringify({ ids: Array.from({ length: 101 }, (_, i) => `task_${String(i).padStart(24, 'A')}`) })),
        'invalid_request',
      );
      assert.equal(e.param, 'ids');
      const hundred = await send(IOTA_FETCH, JSON.stringify({ ids: Array.from({ length: 100 }, (_, i) => `task_${String(i).padStart(24, 'A')}`) }));
      assert.equal(hundred.status, 200, hundred.text);
    });

    test('iota fetch: a batch of one own task answers data as an array of that task', async () => {
      const sub = await send(IOTA_MUSIC, JSON.stringify({ mv: 'iota-v4.5', prompt: 'a piano' }));
      assert.equal(sub.status, 200, sub.text);
      const id = JSON.parse(sub.text).data as string;
      const a = await send(IOTA_FETCH, JSON.stringify({ ids: [id, 'task_AAAAAAAAAAAAAAAAAAAAAAAA'] }));
      assert.equal(a.status, 200, a.text);
      const out = JSON.parse(a.text);
      assert.equal(out.code, 'success');
      assert.ok(Array.isArray(out.data), `data is an array: ${a.text}`);
      assert.equal(out.data.length, 1);
      assert.equal(out.data[0].task_id, id);
    });

    // Regression: the answer mapping once took the empty array for "no batch" and built one task from nothing.
    test('iota fetch: a batch whose ids are all unknown answers data: [] (upstream-protocols.md: "the same with data an array")', async () => {
      const a = await send(IOTA_FETCH, JSON.stringify({ ids: ['task_AAAAAAAAAAAAAAAAAAAAAAAA', 'nope'] }));
      assert.equal(a.status, 200, a.text);
      assert.deepEqual(JSON.parse(a.text), { code: 'success', message: '', data: [] });
    });

    test('a video task is not found on the audio routes, nor an audio task on the video routes', async () => {
      const v = await send(VIDEO_GEN, JSON.stringify({ model: 'epsilon-video-3', prompt: 'family' }));
      const m = await send(IOTA_MUSIC, JSON.stringify({ mv: 'iota-v4.5', prompt: 'family' }));
      const vid = JSON.parse(v.text).id as string;
      const mid = JSON.parse(m.text).data as string;
      for (const path of [
        `/iota/fetch/${vid}`,
        `/iota/fetch/${vid}/content`,
        `/v1/videos/${mid}`,
        `/v1/videos/${mid}/content`,
        `/beta/ent/v2/tasks/${mid}/creations`,
      ]) {
        expectError(await send(path, null, { authorization: `Bearer ${h.key}` }, 'GET'), 'task_not_found', path);
      }
      const batch = await send(IOTA_FETCH, JSON.stringify({ ids: [vid, mid] }));
      assert.equal(batch.status, 200);
      const data = JSON.parse(batch.text).data;
      assert.ok(Array.isArray(data), batch.text);
      assert.deepEqual(
        data.map((t: { task_id: string }) => t.task_id),
        [mid],
        'the batch leaves the video task out',
      );
    });

    // Regression: multipart JSON fields once skipped max_depth, and the unified-passthrough mapping answered 500.
    test('multipart: a metadata field nested 5000 deep is refused like its JSON form, never a 500', async () => {
      const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
      for (const model of ['gamma-video-1', 'epsilon-video-3']) {
        const asJson = await send(VIDEOS, `{"model":${JSON.stringify(model)},"prompt":"x","metadata":${deep}}`);
        const e = expectError(asJson, 'invalid_request', `${model} JSON`);
        assert.match(e.message, /nested deeper than/);
        const { body, type } = multipart([
          { name: 'model', value: model },
          { name: 'prompt', value: 'x' },
          { name: 'metadata', value: deep },
        ]);
        const asForm = await send(VIDEOS, body, { authorization: `Bearer ${h.key}`, 'content-type': type });
        expectError(asForm, 'invalid_request', `${model} multipart: ${asForm.status} ${asForm.text.slice(0, 200)}`);
      }
    });

    // Regression: busboy hands over `undefined` for an undecodable charset; that was a TypeError and a 500.
    test('multipart: a text part whose Content-Type names a charset busboy cannot decode gets a 4xx, not a 500', async () => {
      for (const charset of ['x', 'iso-8859-2']) {
        const b = 'BOUNDARY';
        const body = `--${b}\r\nContent-Disposition: form-data; name="model"\r\n\r\nepsilon-video-3\r\n--${b}\r\nContent-Disposition: form-data; name="prompt"\r\nContent-Type: text/plain; charset=${charset}\r\n\r\nhello\r\n--${b}--\r\n`;
        const a = await send(VIDEOS, body, { authorization: `Bearer ${h.key}`, 'content-type': `multipart/form-data; boundary=${b}` });
        // Node decodes iso-8859-2 when it carries full ICU; either way, never a 5xx.
        if (charset === 'x') expectError(a, 'invalid_request', 'charset=x');
        else if (a.status !== 200) assertShapeA(a.status, a.text, `charset=${charset}`);
      }
    });

    test('beta createVideo and a non-string metadata.last_frame_url: a 4xx or a single-frame task, not a 500', async () => {
      for (const last of [5, true, { a: 1 }, ['x']]) {
        const a = await send(VIDEO_GEN, JSON.stringify({ model: 'beta-q3-turbo', prompt: 'x', image: IMG, metadata: { last_frame_url: last } }));
        assert.ok(a.status === 200 || (a.status >= 400 && a.status < 500), `last_frame_url ${JSON.stringify(last)}: ${a.status} ${a.text.slice(0, 200)}`);
        if (a.status !== 200) assertShapeA(a.status, a.text, `last_frame_url ${JSON.stringify(last)}`);
      }
    });

    test('the gateway still serves after everything', async () => {
      await stillServes('the whole file');
    });
  });
});
