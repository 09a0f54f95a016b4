/**
 * Contract: the Gemini API's own protos (Generative Language v1beta, googleapis/googleapis), pinned
 * as a JSON Schema extract (test/contract/specs/generativelanguage-v1beta.json, rebuilt by
 * scripts/spec-extracts/generativelanguage.mjs; unknown fields are errors, as protobuf's JSON parsers
 * treat them). Held to it: every request the gateway sends to alpha-native and eta-operations
 * channels (the golden cases' recorded upstream calls, which the golden runner proves the mappings
 * produce: method and path against the call's http rule, the body against the request message),
 * every answer of the alpha and eta simulators, and every public answer of the Gemini-compatible
 * routes (alpha generateContent and its stream: the golden cases, and a live gateway in front of the
 * simulator). Where interface.md wants something else, the difference is listed ONCE in DIFFERENCES
 * with its section and skipped exactly there; a listed difference that nothing shows any more fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { GoldenCase, GoldenStep, RecordedRequest } from '../../src/golden/golden-case.js';
import { createAjv } from '../../src/schema/ajv.js';
import { startAlphaSimulator } from '../../src/sim/alpha-native.js';
import { startEtaOperationsSimulator } from '../../src/sim/eta-operations.js';
import type { Simulator } from '../../src/sim/http.js';
import { makePng } from '../../src/sim/png.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const EXTRACT = 'generativelanguage-v1beta.json';
const spec = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/contract/specs', EXTRACT), 'utf8')) as {
  calls: Record<string, Call>;
  $defs: Record<string, unknown>;
};
interface Binding {
  method: string;
  path: string;
}
interface Call {
  http: Binding & { additionalBindings?: Binding[] };
  response: string;
  requestBody?: string;
}
const ajv = createAjv({ allErrors: true });
ajv.addSchema({ $id: EXTRACT, $defs: spec.$defs });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function check(def: string, value: unknown, what: string): void {
  let v = validators.get(def);
  if (!v) {
    v = ajv.compile({ $ref: `${EXTRACT}#/$defs/${def}` });
    validators.set(def, v);
  }
  checks++;
  if (!v(value)) {
    // The null alternatives of singular fields repeat every error; the rest say what is wrong.
    const errs = (v.errors ?? []).filter((e) => !e.schemaPath.endsWith('/anyOf/1/type') && e.keyword !== 'anyOf');
    assert.fail(`${what} is not a ${def}:\n${ajv.errorsText(errs, { separator: '\n' })}\n${JSON.stringify(value).slice(0, 600)}`);
  }
}
let checks = 0;

const RESPONSE = spec.calls.generateContent!.response;
const ERROR = 'http-error';
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The differences interface.md wants from the vendor's messages, each listed once. `apply` takes the
 * difference out of a copy (after checking it is what the interface says) and reports whether it
 * was there; the copy is then held to the extract whole.
 */
interface Difference {
  readonly what: string;
  readonly section: string;
  /** public: the gateway's answers on the alpha routes; upstream: what it sends the vendor; sim: the simulators' answers. */
  readonly in: readonly ('public' | 'upstream' | 'sim')[];
  apply(body: Record<string, unknown>): boolean;
}
const DIFFERENCES: readonly Difference[] = [
  {
    what: 'createTime, an ISO 8601 UTC time of the answer, made by the gateway',
    section: 'interface.md 2.2',
    in: ['public'],
    apply(b) {
      if (!('createTime' in b)) return false;
      assert.match(String(b.createTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      delete b.createTime;
      return true;
    },
  },
  {
    what: 'usageMetadata.trafficType "ON_DEMAND", made by the gateway (UsageMetadata has no such field)',
    section: 'interface.md 2.2',
    in: ['public'],
    apply(b) {
      const u = b.usageMetadata;
      if (!isObj(u) || !('trafficType' in u)) return false;
      assert.equal(u.trafficType, 'ON_DEMAND');
      delete u.trafficType;
      return true;
    },
  },
  {
    what: 'inlineData.data as an image URL instead of base64 bytes (the simulator\'s imageDelivery "url" makes them)',
    section: 'interface.md 2.2',
    in: ['public', 'sim'],
    apply(b) {
      let found = false;
      for (const c of Array.isArray(b.candidates) ? b.candidates : []) {
        for (const p of (c as { content?: { parts?: { inlineData?: { data?: unknown } }[] } }).content?.parts ?? []) {
          if (typeof p.inlineData?.data === 'string' && /^https?:\/\//.test(p.inlineData.data)) {
            p.inlineData.data = '';
            found = true;
          }
        }
      }
      return found;
    },
  },
  {
    what: 'generationConfig.imageConfig.imageSize (1K, 2K, 4K), passed on as @google/genai 2.32.0 sends it; ImageConfig at the pinned commit has only aspectRatio',
    section: 'interface.md 2.1',
    in: ['upstream'],
    apply(b) {
      const c = (b.generationConfig as { imageConfig?: Record<string, unknown> } | undefined)?.imageConfig;
      if (!isObj(c) || !('imageSize' in c)) return false;
      assert.ok(['1K', '2K', '4K'].includes(String(c.imageSize)));
      delete c.imageSize;
      return true;
    },
  },
  {
    what: 'labels (a map of strings), taken by the route and passed on as @google/genai 2.32.0 sends it in Gemini API mode; GenerateContentRequest at the pinned commit lacks it',
    section: 'not in interface.md 2.1: the route takes what the official client sends (routes.yaml alpha-generate-content)',
    in: ['upstream'],
    apply(b) {
      if (!('labels' in b)) return false;
      assert.ok(isObj(b.labels) && Object.values(b.labels).every((v) => typeof v === 'string'));
      delete b.labels;
      return true;
    },
  },
];
/** Error shapes A and B (interface.md 7): the public routes' errors, never the vendor's body. */
const SHAPES = 'interface.md 7';
const shapeA = (b: unknown) =>
  isObj(b) &&
  isObj(b.error) &&
  Object.keys(b).length === 1 &&
  ['message', 'type', 'param', 'code'].every((k) => typeof (b.error as Record<string, unknown>)[k] === 'string');
const shapeB = (b: unknown) => isObj(b) && typeof b.code === 'string' && typeof b.message === 'string' && b.data === null && Object.keys(b).length === 3;
const used = new Set<string>();

/** Holds a value to a message, skipping exactly the listed differences of that place. */
function hold(def: string, value: unknown, place: 'public' | 'upstream' | 'sim', what: string): void {
  const copy = structuredClone(value);
  if (isObj(copy)) for (const d of DIFFERENCES) if (d.in.includes(place) && d.apply(copy)) used.add(d.what);
  check(def, copy, what);
}

/** A public answer of an alpha route: an error is shape A or B; a success the vendor's message. */
function holdPublic(status: number, body: unknown, what: string): void {
  if (status >= 400) {
    checks++;
    assert.ok(shapeA(body) || shapeB(body), `${what}: an error of shape A or B (${SHAPES}): ${JSON.stringify(body)}`);
    used.add(SHAPES);
    return;
  }
  const frames = Array.isArray(body) ? body : [body];
  for (const [i, frame] of frames.entries()) {
    // A stream that fails after its first chunk ends with Google's own error chunk, as the API sends it.
    if (Array.isArray(body) && i === frames.length - 1 && i > 0 && isObj(frame) && 'error' in frame) check(ERROR, frame, `${what} frame ${i} (error chunk)`);
    else hold(RESPONSE, frame, 'public', `${what} frame ${i}`);
  }
}

/** Does a path match an http rule's template (`{name=models/*}`, `*` one segment, `**` any)? */
function matches(template: string, path: string): boolean {
  const re = template
    .replace(/[.+?^$()|[\]\\]/g, '\\$&')
    .replace(/\{[a-z_]+=([^}]+)\}|\{[a-z_]+\}/g, (_, p: string | undefined) => `(${(p ?? '*').replace(/\*\*/g, '.+').replace(/(?<![.])\*/g, '[^/]+')})`);
  return new RegExp(`^${re}$`).test(path);
}
/** The call of `calls` an upstream request is, by method and path; fails when it is none of them. */
function callOf(req: RecordedRequest, calls: readonly string[], what: string): Call {
  for (const id of calls) {
    const c = spec.calls[id]!;
    if ([c.http, ...(c.http.additionalBindings ?? [])].some((b) => b.method === req.method && matches(b.path, decodeURIComponent(req.path)))) return c;
  }
  assert.fail(`${what}: ${req.method} ${req.path} is none of the vendor's calls ${calls.join(', ')}`);
}

/** Every golden case of a profile, with its steps. */
function goldenSteps(profile: string): [string, GoldenStep][] {
  const dir = join(PROJECT_ROOT, 'test/golden', profile);
  const out: [string, GoldenStep][] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.yaml') && statSync(join(dir, n)).isFile())) {
    const c = parse(readFileSync(join(dir, f), 'utf8')) as GoldenCase;
    for (const [i, s] of (c.steps ?? [c]).entries()) out.push([`${profile}/${f}${c.steps ? ` step ${i + 1}` : ''}`, s]);
  }
  return out;
}
function upstreamOf(step: GoldenStep): RecordedRequest[] {
  return [step.upstream, ...(step.then ?? []).map((t) => t.upstream)].filter((u): u is RecordedRequest => u !== null && u !== undefined);
}

describe('the gateway and the simulators hold to the Generative Language v1beta protos', () => {
  test('every request the gateway sends an alpha-native channel is a GenerateContentRequest (golden cases)', () => {
    let n = 0;
    for (const [name, step] of goldenSteps('alpha-native')) {
      for (const req of upstreamOf(step)) {
        const call = callOf(req, ['generateContent', 'streamGenerateContent'], name);
        if (call === spec.calls.streamGenerateContent) assert.equal(req.query.alt, 'sse', `${name}: the stream is asked for as SSE`);
        assert.equal(req.headers['x-goog-api-key'], 'golden-key', `${name}: the key header`);
        hold(call.requestBody!, req.body, 'upstream', `${name} upstream body`);
        n++;
      }
    }
    assert.ok(n >= 40, `only ${n} upstream requests`);
  });

  test('every submit, poll and download the gateway sends an eta-operations channel is the vendor call its http rule names (golden cases)', () => {
    const seen = new Set<Call>();
    for (const [name, step] of goldenSteps('eta-operations')) {
      for (const req of upstreamOf(step)) {
        const call = callOf(req, ['predictLongRunning', 'getOperation', 'downloadFile'], name);
        seen.add(call);
        if (call.requestBody) hold(call.requestBody, req.body, 'upstream', `${name} upstream body`);
        else assert.equal(req.body, null, `${name}: a GET has no body`);
        if (call === spec.calls.downloadFile) assert.equal(req.query.alt, 'media', `${name}: a download asks for the media`);
      }
    }
    assert.equal(seen.size, 3, 'submit, poll and download are all among the cases');
  });

  test('every public answer of the alpha routes in the golden cases is a GenerateContentResponse (or error shape A/B)', () => {
    let n = 0;
    for (const [name, step] of goldenSteps('alpha-native')) {
      holdPublic(step.response.status, step.response.body, name);
      n++;
    }
    assert.ok(n >= 40);
  });

  describe('the alpha simulator', () => {
    let sim: Simulator;
    let urlSim: Simulator;
    before(async () => {
      sim = await startAlphaSimulator();
      urlSim = await startAlphaSimulator({ imageDelivery: 'url' });
    });
    after(async () => {
      await sim.close();
      await urlSim.close();
    });
    const post = (s: Simulator, path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': s.secrets.key! }) =>
      fetch(`${s.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const gen = (prompt: string, extra: Record<string, unknown> = {}) => ({
      contents: [{ role: 'user', parts: [{ text: prompt }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9' } },
      ...extra,
    });
    const png = makePng(4, 4, 1).toString('base64');
    const bodies: [string, unknown][] = [
      ['text to image', gen('a cat')],
      ['image to image', { contents: [{ role: 'user', parts: [{ text: 'make it blue' }, { inlineData: { mimeType: 'image/png', data: png } }] }] }],
      ['image only', gen('a dog', { generationConfig: { responseModalities: ['IMAGE'] } })],
      ['blocked', gen('[sim:block]')],
      ['no image', gen('[sim:no-image] a bird')],
    ];

    test('generateContent answers are GenerateContentResponse', async () => {
      for (const [what, body] of bodies) {
        const res = await post(sim, '/v1beta/models/alpha-3-pro-image-preview:generateContent', body);
        assert.equal(res.status, 200, what);
        hold(RESPONSE, await res.json(), 'sim', what);
      }
      const res = await post(urlSim, '/v1beta/models/alpha-3-pro-image-preview:generateContent', gen('a url'));
      hold(RESPONSE, await res.json(), 'sim', 'image delivered as a URL');
    });

    test('streamGenerateContent: each SSE event and each item of the JSON array is a GenerateContentResponse', async () => {
      for (const [what, body] of bodies) {
        const sse = await post(sim, '/v1beta/models/alpha-3-pro-image-preview:streamGenerateContent?alt=sse', body);
        const frames = (await sse.text()).split('\r\n\r\n').filter(Boolean);
        assert.ok(frames.length >= 1);
        for (const f of frames) hold(RESPONSE, JSON.parse(f.replace(/^data: /, '')), 'sim', `${what} (SSE)`);
        const array = await post(sim, '/v1beta/models/alpha-3-pro-image-preview:streamGenerateContent', body);
        for (const c of (await array.json()) as unknown[]) hold(RESPONSE, c, 'sim', `${what} (array)`);
      }
    });

    test('its errors are the REST error body of google.rpc.Status', async () => {
      const m = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
      const cases: [string, Promise<Response>][] = [
        ['no key', post(sim, m, gen('x'), {})],
        ['wrong key', post(sim, m, gen('x'), { 'x-goog-api-key': 'wrong' })],
        ['bad JSON', post(sim, m, '{')],
        ['unknown field', post(sim, m, { ...gen('x'), nope: 1 })],
        ['unknown model', post(sim, '/v1beta/models/nope:generateContent', gen('x'))],
        ['no contents', post(sim, m, { contents: [] })],
        ['bad base64', post(sim, m, { contents: [{ parts: [{ text: 'x' }, { inlineData: { mimeType: 'image/png', data: '%%' } }] }] })],
        ['unknown path', post(sim, '/v1beta/nothing', gen('x'))],
        ...['429', '429:wait:7', '500', '503', '503:wait:3', '504'].map((f): [string, Promise<Response>] => [
          `fault ${f}`,
          post(sim, m, gen(`x [sim:fault=${f}]`)),
        ]),
        ['stream fault', post(sim, '/v1beta/models/alpha-3-pro-image-preview:streamGenerateContent?alt=sse', gen('x [sim:fault=429:wait:2]'))],
      ];
      for (const [what, p] of cases) {
        const res = await p;
        assert.ok(res.status >= 400, `${what}: ${res.status}`);
        check(ERROR, await res.json(), what);
      }
    });
  });

  describe('the eta simulator', () => {
    let now = 1_700_000_000_000;
    let sim: Simulator;
    before(async () => {
      sim = await startEtaOperationsSimulator({ finishMs: 3000, clock: () => now });
    });
    after(() => sim.close());
    const call = (method: string, path: string, body?: unknown, key = sim.secrets.key!) =>
      fetch(`${sim.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(key ? { 'x-goog-api-key': key } : {}) },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
    const submit = (prompt: string, parameters: Record<string, unknown> = { aspectRatio: '16:9' }) =>
      call('POST', '/v1beta/models/eta_3_1:predictLongRunning', { instances: [{ prompt }], parameters });
    const operation = async (res: Response, what: string) => {
      assert.equal(res.status, 200, what);
      const body = await res.json();
      check('google.longrunning.Operation', body, what);
      return body as { name: string; done?: boolean; response?: unknown; error?: unknown };
    };

    test("submit and every form of the polled operation are google.longrunning.Operation, with the vendor's Any types", async () => {
      const ops = await Promise.all(
        ['a lighthouse', 'a storm [sim:fail=broken]', 'a crowd [sim:filtered]'].map(
          async (p) => (await operation(await submit(p, { sampleCount: 2 }), `submit ${p}`)).name,
        ),
      );
      const stuck = (await operation(await submit('slow [sim:never]'), 'submit never')).name;
      for (const name of ops) await operation(await call('GET', `/v1beta/${name}`), 'queued');
      now += 1500;
      const running = await operation(await call('GET', `/v1beta/${ops[0]}`), 'running');
      assert.equal(running.done, false);
      now += 1500;
      const [done, failed, filtered] = await Promise.all(ops.map(async (name) => operation(await call('GET', `/v1beta/${name}`), `finished ${name}`)));
      assert.ok(done!.response && failed!.error && filtered!.response);
      assert.equal((await operation(await call('GET', `/v1beta/${stuck}`), 'stuck')).done, false);
      const uri = (done!.response as { generateVideoResponse: { generatedSamples: { video: { uri: string } }[] } }).generateVideoResponse.generatedSamples[1]!
        .video.uri;
      const path = new URL(uri).pathname;
      assert.ok(matches(spec.calls.downloadFile!.http.path, path), `${path} is the DownloadFile rule`);
      const file = await fetch(uri, { headers: { 'x-goog-api-key': sim.secrets.key! } });
      assert.equal(file.status, 200);
    });

    test('its errors are the REST error body of google.rpc.Status', async () => {
      const cases: [string, Promise<Response>][] = [
        ['no key', call('POST', '/v1beta/models/eta_3_1:predictLongRunning', { instances: [{ prompt: 'x' }] }, '')],
        ['wrong key', call('POST', '/v1beta/models/eta_3_1:predictLongRunning', { instances: [{ prompt: 'x' }] }, 'wrong')],
        ['bad JSON', call('POST', '/v1beta/models/eta_3_1:predictLongRunning', '{')],
        ['unknown model', call('POST', '/v1beta/models/nope:predictLongRunning', { instances: [{ prompt: 'x' }] })],
        ['bad parameter', submit('x', { durationSeconds: 5 })],
        ['unknown field', call('POST', '/v1beta/models/eta_3_1:predictLongRunning', { instances: [{ prompt: 'x' }], seed: 1 })],
        ['unknown operation', call('GET', '/v1beta/models/eta_3_1/operations/0123456789abcdef01234567')],
        ['download without alt=media', call('GET', '/v1beta/files/abc:download')],
        ['missing file', call('GET', '/v1beta/files/abc:download?alt=media')],
        ...['429', '429:wait:7', '500', '503'].map((f): [string, Promise<Response>] => [`fault ${f}`, submit(`x [sim:fault=${f}]`)]),
      ];
      for (const [what, p] of cases) {
        const res = await p;
        assert.ok(res.status >= 400, `${what}: ${res.status}`);
        check(ERROR, await res.json(), what);
      }
    });
  });

  describe('a live gateway in front of the alpha simulator', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(() => h.close());
    const post = (path: string, body: unknown) =>
      fetch(`${h.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${h.key}` },
        body: JSON.stringify(body),
      });
    const body = (prompt: string) => ({
      contents: [{ role: 'user', parts: [{ text: prompt }] }],
      generationConfig: { imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
    });

    test('generateContent and its SSE stream answer GenerateContentResponse; errors are shape A/B', async () => {
      for (const prompt of ['a cat', '[sim:block]', '[sim:no-image] a bird', 'x [sim:fault=429]', 'x [sim:fault=400]']) {
        const res = await post('/v1beta/models/alpha-3-pro-image-preview:generateContent', body(prompt));
        holdPublic(res.status, await res.json(), `generateContent ${prompt}`);
        const sse = await post('/v1beta/models/alpha-3-pro-image-preview:streamGenerateContent?alt=sse', body(prompt));
        const text = await sse.text();
        const frames =
          sse.status === 200
            ? text
                .split(/\r?\n\r?\n/)
                .filter(Boolean)
                .map((f) => JSON.parse(f.replace(/^data: /, '')))
            : JSON.parse(text);
        holdPublic(sse.status, frames, `stream ${prompt}`);
      }
      const refused = await post('/v1beta/models/alpha-3-pro-image-preview:generateContent', { contents: [] });
      holdPublic(refused.status, await refused.json(), 'refused by the route');
    });
  });

  test('every listed difference is still one (the table holds nothing stale)', () => {
    for (const d of DIFFERENCES) assert.ok(used.has(d.what), `never seen: ${d.what} (${d.section})`);
    assert.ok(used.has(SHAPES));
    assert.ok(checks > 100, `${checks} checks`);
  });
});
