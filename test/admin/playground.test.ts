/**
 * The mapping playground (`POST /admin/playground`, docs/operating.md, "Operating: admin routes and metrics")
 * over real HTTP: a gateway on port 0 whose alpha, zeta and gamma channels point at recording
 * proxies in front of their simulators. What the playground says would be sent is compared with
 * what the proxy records when the same public request is sent for real, so the playground cannot
 * drift from the pipeline; every playground call is checked to reach no vendor and no store.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import type { Simulator } from '../../src/sim/http.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { postJson, readAnswer, type JsonAnswer } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

const ADMIN_KEY = 'admin-playground-test-admin-key';
const PROFILES = ['alpha-native', 'zeta-openai', 'gamma-volc'];
const ALPHA = 'alpha-3-pro-image-preview';
const generate = {
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
};

/** A request as the vendor received it. */
interface Recorded {
  readonly method: string;
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A proxy in front of a simulator that records every request it forwards. */
async function recordingProxy(sim: Simulator): Promise<{ url: string; recorded: Recorded[]; close(): Promise<void> }> {
  const recorded: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      recorded.push({ method: req.method!, target: req.url!, headers: req.headers, body });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k)) headers[k] = v;
      void fetch(sim.url + req.url, { method: req.method, headers, body: body.length > 0 ? body : undefined }).then(
        async (answer) => {
          const bytes = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream', 'content-length': bytes.length });
          res.end(bytes);
        },
        () => res.destroy(),
      );
    });
  });
  return { url: await listenLocal(server), recorded, close: () => closeLocal(server) };
}

/** A store that notes the name of every method called on it, to show the playground calls none. */
/** Store calls of the gateway's own batch writers (src/records/request-batcher.ts, src/tokens/last-used.ts, src/quota/hold-endings.ts). */
const BACKGROUND_WRITES = new Set(['putRequests', 'touchTokens', 'endHolds']);

function watchedStore(store: Store): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const watched = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: watched, calls };
}

describe('admin mapping playground', () => {
  const sims: Record<string, Simulator> = {};
  const proxies: Record<string, Awaited<ReturnType<typeof recordingProxy>>> = {};
  let gateway: Gateway;
  let url: string;
  let key: string;
  let raw: Store;
  let storeCalls: string[];

  before(async () => {
    for (const p of PROFILES) {
      sims[p] = await SIMULATORS[p]!({ finishMs: 20 });
      proxies[p] = await recordingProxy(sims[p]!);
    }
    raw = await openStore(':memory:');
    const watched = watchedStore(raw);
    storeCalls = watched.calls;
    const snapshot = loadConfigOrThrow(PROJECT_ROOT, {
      env: {},
      overrideChannel: (c) => {
        const proxy = proxies[c.profile];
        if (!proxy) return null;
        // Two zeta-openai channels open their breaker at the first failure, for the tests of passed-over
        // channels: epsilon-image for an hour, zeta-images for the shortest cool-down (then it half opens).
        const breaker =
          c.name === 'epsilon-image'
            ? { enabled: true, consecutive_failures: 1, cooldown_ms: 3_600_000 }
            : c.name === 'zeta-images'
              ? { enabled: true, consecutive_failures: 1, cooldown_ms: 100 }
              : { enabled: false };
        return { base_url: proxy.url, secrets: { ...sims[c.profile]!.secrets }, breaker };
      },
    });
    gateway = createGateway({ snapshot: () => snapshot, store: watched.store, log: silentLogger(), adminKey: ADMIN_KEY, poll: false });
    await gateway.listen(0);
    url = gateway.url();
    key = generateKey();
    await raw.createToken({ name: 'playground', keyHash: hashKey(key), group: 'default', models: null, quota: null });
  });
  after(async () => {
    await gateway?.close();
    await raw?.close();
    for (const p of Object.values(proxies)) await p.close();
    for (const s of Object.values(sims)) await s.close();
  });

  const vendorCalls = () => PROFILES.reduce((n, p) => n + proxies[p]!.recorded.length + sims[p]!.stats.requests, 0);
  const secretValues = () => PROFILES.flatMap((p) => Object.values(sims[p]!.secrets));

  /** A playground call that must reach no vendor and touch no store; its answer must carry no secret. */
  const play = async (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}` }): Promise<JsonAnswer> => {
    const vendors = vendorCalls();
    storeCalls.length = 0;
    const r = await readAnswer(
      await fetch(`${url}/admin/playground`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
    );
    assert.equal(vendorCalls(), vendors, 'no vendor was called');
    // The request log and the tokens' last uses are written by timers, in batches, from earlier real
    // requests: they may land during the call without being its doing.
    assert.deepEqual(
      storeCalls.filter((c) => !BACKGROUND_WRITES.has(c)),
      [],
      'the store was not touched',
    );
    for (const s of secretValues()) assert.ok(!r.text.includes(s), `a secret of a channel is in the answer: ${r.text.slice(0, 300)}`);
    return r;
  };
  const publicPost = (path: string, body: unknown) => postJson(url, path, body, { authorization: `Bearer ${key}` });
  const lastAt = (profile: string) => proxies[profile]!.recorded.at(-1)!;
  const channelsReport = async () => readAnswer(await fetch(`${url}/admin/channels`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }));

  /** What the playground showed against what the vendor received: method, target, body, and every header neither masked nor the request's own ids. */
  function sameAsSent(shown: any, sent: Recorded, proxyUrl: string, skip: string[] = []): void {
    assert.equal(shown.method, sent.method);
    assert.equal(shown.url, proxyUrl + sent.target);
    assert.deepEqual(shown.body, JSON.parse(sent.body.toString('utf8')));
    for (const [k, v] of Object.entries(shown.headers as Record<string, string>)) {
      if (v === '***' || v.includes('***') || ['x-request-id', 'traceparent', ...skip].includes(k)) continue;
      assert.equal(sent.headers[k], v, `header ${k}`);
    }
  }

  test('the admin key is required', async () => {
    const body = { model: 'zeta-image-2', body: { prompt: 'x' } };
    for (const headers of [{}, { authorization: 'Bearer not-the-key' }] as Record<string, string>[]) {
      const r = await play(body, headers);
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json.error.code, 'invalid_api_key');
    }
  });

  test('alpha generateContent: route, family, channel, and the upstream request the vendor then receives for real', async () => {
    const r = await play({ model: ALPHA, route: 'alpha-generate-content', body: generate });
    assert.equal(r.status, 200, r.text);
    const a = r.json;
    assert.deepEqual(a.route, {
      id: 'alpha-generate-content',
      method: 'POST',
      path: '/v1beta/models/{model}:generateContent',
      kind: 'sync',
      operation: 'generateContent',
    });
    assert.ok(a.family?.name, 'the model has a family');
    assert.deepEqual([a.checks.outcome, a.checks.error], ['ok', null]);
    assert.deepEqual(
      a.checks.applied.map((c: any) => [c.check, c.ok]),
      [
        ['body', true],
        ['schema', true],
        ['family', true],
        ['routing', true],
        ['mapping', true],
      ],
    );
    assert.equal(a.chosen, 'alpha-primary');
    const alpha = a.channels.find((c: any) => c.name === 'alpha-primary');
    assert.deepEqual([alpha.profile, alpha.passed_over, a.channels[0].name], ['alpha-native', null, 'alpha-primary']);
    assert.equal(a.channels.find((c: any) => c.name === 'zeta-images').passed_over, 'model_not_served');
    assert.equal(a.upstream.length, 1);
    const shown = a.upstream[0];
    assert.equal(shown.headers['x-goog-api-key'], '***', 'the key header is masked');
    assert.equal(shown.signed, true);

    const real = await publicPost(`/v1beta/models/${ALPHA}:generateContent`, generate);
    assert.equal(real.status, 200, real.text);
    assert.ok(storeCalls.length > 0, 'the store watcher sees what a real request does');
    sameAsSent(shown, lastAt('alpha-native'), proxies['alpha-native']!.url);
  });

  test('several routes serve the model: without `route` it is 400 listing them', async () => {
    const r = await play({ model: ALPHA, body: generate });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual([r.json.error.code, r.json.error.param], ['invalid_request', 'route']);
    assert.match(r.json.error.message, /alpha-generate-content, alpha-stream-generate-content/);
    const unknown = await play({ model: ALPHA, route: 'no-such-route', body: generate });
    assert.deepEqual([unknown.status, unknown.json.error.param], [400, 'route']);
    const nobody = await play({ model: 'no-such-model', body: {} });
    assert.deepEqual([nobody.status, nobody.json.error.param], [400, 'model']);
    const group = await play({ model: 'zeta-image-2', group: 'no-such-group', body: { prompt: 'x' } });
    assert.deepEqual([group.status, group.json.error.param], [400, 'group']);
    const other = await play({ model: 'zeta-image-2', body: { model: 'zeta-image-1', prompt: 'x' } });
    assert.deepEqual([other.status, other.json.error.param], [400, 'body.model']);
    for (const bad of [{ body: {} }, { model: ALPHA }, { model: ALPHA, body: [] }, { model: ALPHA, body: {}, extra: 1 }]) {
      assert.equal((await play(bad)).status, 400);
    }
  });

  test('OpenAI images: the model is put in the body; the request matches what the vendor receives', async () => {
    const body = { prompt: 'a red kite over a green hill', size: '1024x1024', response_format: 'url' };
    const r = await play({ model: 'zeta-image-2', body });
    assert.equal(r.status, 200, r.text);
    const a = r.json;
    assert.equal(a.route.id, 'images-generations');
    assert.deepEqual([a.family.name, a.family.mode, a.family.modes], ['zeta image 2', 'text', { text: 'supported', reference: 'supported' }]);
    assert.deepEqual(a.family.limits.properties.aspect_ratio, { enum: ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3'] });
    assert.deepEqual([a.checks.outcome, a.chosen], ['ok', 'zeta-images']);
    assert.equal(a.upstream[0].headers.authorization, 'Bearer ***', 'the template is kept, the secret masked');
    assert.equal(a.price.units >= 0, true);

    const real = await publicPost('/v1/images/generations', { model: 'zeta-image-2', ...body });
    assert.equal(real.status, 200, real.text);
    sameAsSent(a.upstream[0], lastAt('zeta-openai'), proxies['zeta-openai']!.url);
  });

  test('hmac-v4 (gamma-volc): the signature and credentials are masked, the rest matches the signed request sent for real', async () => {
    const body = { model: 'gamma-video-3.0', prompt: 'a paper boat on a river', seconds: 5 };
    const r = await play({ model: 'gamma-video-3.0', route: 'video-generations', body });
    assert.equal(r.status, 200, r.text);
    const a = r.json;
    assert.deepEqual([a.route.kind, a.checks.outcome, a.chosen], ['task-submit', 'ok', 'gamma-volc']);
    const shown = a.upstream[0];
    assert.equal(shown.headers.authorization, '***');
    assert.match(shown.headers['x-date'], /^\d{8}T\d{6}Z$/, 'what no secret goes into is shown');
    assert.equal(shown.headers['x-content-sha256'], createHash('sha256').update(JSON.stringify(shown.body)).digest('hex'));

    const real = await publicPost('/v1/video/generations', body);
    assert.equal(real.status, 200, real.text);
    const sent = lastAt('gamma-volc');
    assert.match(String(sent.headers.authorization), /Credential=.+Signature=[0-9a-f]{64}/, 'the real request was signed');
    assert.ok(!r.text.includes(String(sent.headers.authorization).split('Signature=')[1]!), 'no real signature in the answer');
    // The date is the signing time: a second apart, the two can differ.
    sameAsSent(shown, sent, proxies['gamma-volc']!.url, ['x-date']);
  });

  test('an invalid body: the exact error a client gets, and nothing is sent', async () => {
    const cases: { play: unknown; path: string; body: unknown; check: string }[] = [
      // The route's schema (alpha takes 1K, 2K and 4K).
      {
        play: { model: ALPHA, route: 'alpha-generate-content', body: { ...generate, generationConfig: { imageConfig: { imageSize: '3K' } } } },
        path: `/v1beta/models/${ALPHA}:generateContent`,
        body: { ...generate, generationConfig: { imageConfig: { imageSize: '3K' } } },
        check: 'schema',
      },
      // The family's limits (zeta image 2 takes no 21:9).
      {
        play: { model: 'zeta-image-2', body: { prompt: 'x', size: '21:9' } },
        path: '/v1/images/generations',
        body: { model: 'zeta-image-2', prompt: 'x', size: '21:9' },
        check: 'family',
      },
      // The route's schema.
      { play: { model: 'zeta-image-2', body: { prompt: 7 } }, path: '/v1/images/generations', body: { model: 'zeta-image-2', prompt: 7 }, check: 'schema' },
    ];
    for (const c of cases) {
      const r = await play(c.play);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.checks.outcome, 'refused');
      assert.deepEqual(r.json.checks.applied.at(-1), { ...r.json.checks.applied.at(-1), check: c.check, ok: false });
      assert.deepEqual(r.json.upstream, []);
      const vendors = vendorCalls();
      const real = await publicPost(c.path, c.body);
      assert.equal(vendorCalls(), vendors, 'the real request is refused before any vendor call too');
      assert.deepEqual(r.json.checks.error, { status: real.status, body: real.json });
      assert.equal(real.status, 400);
    }
  });

  test('a channel whose breaker is open is shown passed over, and looking changes nothing live', async () => {
    sims['zeta-openai']!.faults.push('500');
    const failed = await publicPost('/v1/images/generations', { model: 'epsilon-4-2-image', prompt: 'x' });
    assert.ok(failed.status >= 500, failed.text);
    const channelsBefore = await channelsReport();
    const epsilonBefore = channelsBefore.json.channels.find((c: any) => c.name === 'epsilon-image');
    assert.equal(epsilonBefore.breaker.state, 'open');

    const r = await play({ model: 'epsilon-4-2-image', body: { prompt: 'x' } });
    assert.equal(r.status, 200, r.text);
    const epsilon = r.json.channels.find((c: any) => c.name === 'epsilon-image');
    assert.equal(epsilon.passed_over, 'breaker_open');
    assert.equal(epsilon.retry_at, epsilonBefore.breaker.probe_at);
    assert.deepEqual([r.json.chosen, r.json.upstream], [null, []]);
    assert.deepEqual([r.json.checks.outcome, r.json.checks.applied.at(-1).check], ['refused', 'routing']);

    const channelsAfter = await channelsReport();
    assert.deepEqual(channelsAfter.json, channelsBefore.json, 'no slot, probe, call or count was taken');
    const real = await publicPost('/v1/images/generations', { model: 'epsilon-4-2-image', prompt: 'x' });
    assert.deepEqual(r.json.checks.error, { status: real.status, body: real.json }, 'the error a client gets while every channel is out');
  });

  test('a half-open breaker: the playground shows the channel tried, and leaves its one probe to the next real request', async () => {
    sims['zeta-openai']!.faults.push('500');
    const failed = await publicPost('/v1/images/generations', { model: 'zeta-image-2', prompt: 'x' });
    assert.ok(failed.status >= 500, failed.text);
    const before = await until('the zeta-images breaker to half open', async () => {
      const report = await channelsReport();
      return report.json.channels.find((c: any) => c.name === 'zeta-images').breaker.state === 'half_open' && report;
    });
    for (let i = 0; i < 2; i++) {
      const r = await play({ model: 'zeta-image-2', body: { prompt: 'x' } });
      assert.equal(r.json.channels.find((c: any) => c.name === 'zeta-images').passed_over, null, `look ${i + 1}: the probe is still free`);
      assert.equal(r.json.chosen, 'zeta-images');
      assert.equal(r.json.upstream.length, 1);
    }
    assert.deepEqual((await channelsReport()).json, before.json, 'no slot, probe, call or count was taken');
    const probe = await publicPost('/v1/images/generations', { model: 'zeta-image-2', prompt: 'x' });
    assert.equal(probe.status, 200, `the real request got the probe: ${probe.text}`);
    assert.equal((await channelsReport()).json.channels.find((c: any) => c.name === 'zeta-images').breaker.state, 'closed');
  });
});
