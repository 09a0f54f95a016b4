/**
 * Hot reload end to end (docs/operating.md, "Hot reload"): a real gateway over a scratch config directory,
 * reloaded by POST /admin/reload and SIGHUP while simulators serve traffic. The channel sets of the
 * alpha route come from test/fixtures/reload; the task tests use a copy of the project's own config.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { connectReloads } from '../../src/app.js';
import { LiveConfig } from '../../src/config/live-config.js';
import type { LoadOptions } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { startAlphaSimulator } from '../../src/sim/alpha-native.js';
import type { Simulator } from '../../src/sim/http.js';
import { startZetaOpenaiSimulator } from '../../src/sim/zeta-openai.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { channelEnv } from '../helpers/channel-env.js';
import { postJson, type JsonAnswer, readAnswer } from '../helpers/harness.js';
import { startCli } from '../helpers/process.js';

const FIXTURE = join(PROJECT_ROOT, 'test/fixtures/reload');
const ALPHA_PATH = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const ALPHA_BODY = {
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
};
const ADMIN_KEY = `adm-${'k'.repeat(24)}`;
const log = silentLogger();

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The small fixture (one alpha route) in a scratch directory. */
function fixtureConfig(): string {
  const dir = scratchDir('gw-reload-');
  cpSync(FIXTURE, dir, { recursive: true });
  cpSync(join(PROJECT_ROOT, 'schemas/public'), join(dir, 'schemas/public'), { recursive: true });
  return dir;
}

/** The project's own configuration (both tables, fragments, schemas) in a scratch directory. */
function projectConfig(): string {
  const dir = scratchDir('gw-reload-project-');
  for (const f of ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas']) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
  return dir;
}

interface AlphaChannel {
  readonly name: string;
  readonly url: string;
  readonly key: string;
}

/** The fixture's channels.yaml with these alpha channels. */
function channelsYaml(channels: readonly AlphaChannel[]): string {
  const head = readFileSync(join(FIXTURE, 'channels.yaml'), 'utf8').split('\nchannels:\n')[0]!;
  const list = channels.map(
    (c) =>
      `  - name: ${c.name}\n    profile: alpha-native\n    base_url: ${c.url}\n    secrets: { key: ${c.key} }\n    groups: [default]\n    models: [alpha-3-pro-image-preview]\n`,
  );
  return `${head}\nchannels:\n${list.join('')}`;
}

const alphaChannel = (name: string, sim: Simulator): AlphaChannel => ({ name, url: sim.url, key: sim.secrets.key! });

/** A gateway whose configuration is a LiveConfig over `dir`, wired as src/app.ts wires it. */
interface Rig {
  readonly url: string;
  readonly key: string;
  readonly live: LiveConfig;
  readonly gateway: Gateway;
  readonly store: Store;
  readonly metrics: Metrics;
  post(path: string, body: unknown): Promise<JsonAnswer>;
  get(path: string): Promise<JsonAnswer>;
  admin(method: 'GET' | 'POST', path: string, key?: string | null): Promise<JsonAnswer>;
}

async function startRig(dir: string, opts: { load?: LoadOptions; adminKey?: string | null; control?: boolean } = {}): Promise<Rig> {
  const metrics = new Metrics();
  const live = LiveConfig.open({ dir, log, metrics, load: opts.load ?? { env: {} } });
  const store = await openStore(':memory:');
  const adminKey = opts.adminKey === undefined ? ADMIN_KEY : opts.adminKey;
  const gateway = createGateway({
    snapshot: () => live.current(),
    store,
    log,
    metrics,
    adminKey: adminKey ?? undefined,
    config: opts.control === false ? undefined : live,
  });
  connectReloads(live, gateway, log);
  await gateway.listen(0);
  cleanups.push(async () => {
    live.close();
    await gateway.close();
    await store.close();
  });
  const key = generateKey();
  await store.createToken({ name: 'reload-test', keyHash: hashKey(key), group: 'default', models: null, quota: null });
  const url = gateway.url();
  return {
    url,
    key,
    live,
    gateway,
    store,
    metrics,
    post: (path, body) => postJson(url, path, body, { authorization: `Bearer ${key}` }),
    get: async (path) => readAnswer(await fetch(url + path, { headers: { authorization: `Bearer ${key}` } })),
    admin: async (method, path, k = adminKey) => readAnswer(await fetch(url + path, { method, headers: k === null ? {} : { authorization: `Bearer ${k}` } })),
  };
}

async function startSim<T extends Simulator>(start: () => Promise<T>): Promise<T> {
  const sim = await start();
  cleanups.push(() => sim.close());
  return sim;
}

/** Polls `cond` every 20 ms until it holds; fails after `ms` naming `what`. */
async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One sample of a metric without labels from the Prometheus text. */
function sample(text: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
  assert.ok(m, `metric ${name} in:\n${text.slice(0, 2000)}`);
  return Number(m[1]);
}

describe('hot reload', () => {
  test('a reload loop under bounded load changes the channel set with zero failed requests', async () => {
    const simA = await startSim(() => startAlphaSimulator());
    const simB = await startSim(() => startAlphaSimulator());
    const dir = fixtureConfig();
    const setA = channelsYaml([alphaChannel('alpha-set-a', simA)]);
    const setB = channelsYaml([alphaChannel('alpha-set-b1', simB), { ...alphaChannel('alpha-set-b2', simB), url: `${simB.url}/` }]);
    writeFileSync(join(dir, 'channels.yaml'), setA);
    const rig = await startRig(dir);

    const MAX_REQUESTS = 800;
    const CLIENTS = 6;
    const answers: { status: number; text: string }[] = [];
    let stop = false;
    const client = async () => {
      while (!stop && answers.length < MAX_REQUESTS) {
        const res = await rig.post(ALPHA_PATH, ALPHA_BODY);
        answers.push({ status: res.status, text: res.text.slice(0, 300) });
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);

    const RELOADS = 12;
    try {
      for (let i = 1; i <= RELOADS; i++) {
        const [text, sim] = i % 2 === 1 ? [setB, simB] : [setA, simA];
        writeFileSync(join(dir, 'channels.yaml'), text);
        const before = sim.stats.requests;
        const res = await rig.admin('POST', '/admin/reload');
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.ok, true);
        assert.equal(res.json.generation, i + 1);
        // Each set must really serve before the next swap: new requests reach its simulator.
        await until(`set ${i % 2 === 1 ? 'B' : 'A'} to serve`, () => sim.stats.requests >= before + 3 || answers.length >= MAX_REQUESTS);
      }
    } finally {
      stop = true;
      await Promise.all(clients);
    }
    const failed = answers.filter((a) => a.status !== 200);
    assert.deepEqual(failed.slice(0, 5), [], `${failed.length} of ${answers.length} requests failed during reloads`);
    assert.ok(answers.length >= RELOADS * 3, `only ${answers.length} requests were answered`);
    assert.ok(simA.stats.requests > 0 && simB.stats.requests > 0, `both sets served (A ${simA.stats.requests}, B ${simB.stats.requests})`);
    assert.equal(rig.live.generation, RELOADS + 1);
  });

  test('a broken config file never takes the gateway down; fixing it and reloading recovers', async () => {
    const sim = await startSim(() => startAlphaSimulator());
    const dir = fixtureConfig();
    const good = channelsYaml([alphaChannel('alpha-a', sim)]);
    writeFileSync(join(dir, 'channels.yaml'), good);
    const rig = await startRig(dir);
    const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

    const broken = [
      { what: 'invalid YAML', text: good.replace('groups: [default]', 'groups: [default'), needle: null, message: /./ },
      { what: 'a schema error', text: good.replace('groups: [default]', 'groups: [default]\n    colour: red'), needle: 'colour: red', message: /colour/ },
      {
        // jsonata would only find it when a request runs the mapping: every request a 500.
        what: 'a misspelled function',
        text: good.replace('$encodeUrlComponent(model)', '$segmnt(model)'),
        needle: 'path: \'"/v1beta/models/" & $segmnt',
        message: /unknown function \$segmnt \(did you mean \$segment\?\)/,
      },
      {
        what: 'an unknown profile',
        text: good.replace('profile: alpha-native\n    base_url', 'profile: alpha-nope\n    base_url'),
        needle: 'profile: alpha-nope',
        message: /alpha-nope/,
      },
    ];
    let generation = 1;
    for (const b of broken) {
      writeFileSync(join(dir, 'channels.yaml'), b.text);
      const res = await rig.admin('POST', '/admin/reload');
      assert.equal(res.status, 422, `${b.what}: ${res.text}`);
      assert.equal(res.json.error.code, 'config_invalid');
      const where = b.needle ? `channels.yaml:${lineOf(b.text, b.needle)}:` : 'channels.yaml:';
      assert.ok(res.json.error.message.includes(where), `${b.what}: the message names ${where}: ${res.json.error.message}`);
      assert.match(res.json.error.message, b.message);
      assert.match(res.json.error.message, new RegExp(`generation ${generation} keeps serving`));

      const cfg = await rig.admin('GET', '/admin/config');
      assert.equal(cfg.status, 200);
      assert.equal(cfg.json.generation, generation);
      assert.equal(cfg.json.last_reload.ok, false);
      assert.equal(cfg.json.last_reload.reason, 'admin');
      assert.ok(Number.isInteger(cfg.json.last_reload.ms) && cfg.json.last_reload.ms >= 0, 'how long the failed build took');
      assert.ok(
        cfg.json.last_reload.issues.some((i: string) => i.includes(where)),
        `${b.what}: GET /admin/config shows ${where}`,
      );

      const metrics = await rig.admin('GET', '/metrics');
      assert.equal(sample(metrics.text, 'gateway_config_last_reload_ok'), 0);
      assert.equal(sample(metrics.text, 'gateway_config_generation'), generation);

      const served = await rig.post(ALPHA_PATH, ALPHA_BODY);
      assert.equal(served.status, 200, `${b.what}: the old configuration keeps serving: ${served.text}`);
    }
    const bad = await rig.admin('GET', '/metrics');
    assert.match(bad.text, new RegExp(`gateway_config_reloads_total\\{result="error"\\} ${broken.length}`));

    writeFileSync(join(dir, 'channels.yaml'), good);
    const fixed = await rig.admin('POST', '/admin/reload');
    assert.equal(fixed.status, 200, fixed.text);
    assert.deepEqual(fixed.json.warnings, []);
    generation++;
    assert.equal(fixed.json.generation, generation);
    const metrics = await rig.admin('GET', '/metrics');
    assert.equal(sample(metrics.text, 'gateway_config_last_reload_ok'), 1);
    assert.equal(sample(metrics.text, 'gateway_config_generation'), generation);
    const cfg = await rig.admin('GET', '/admin/config');
    assert.equal(cfg.json.last_reload.ok, true);
    assert.deepEqual(cfg.json.channels, ['alpha-a']);
    assert.equal((await rig.post(ALPHA_PATH, ALPHA_BODY)).status, 200);
  });

  test('the watched file reloads a running gateway: GET /admin/config shows the new generation', async () => {
    const simA = await startSim(() => startAlphaSimulator());
    const simB = await startSim(() => startAlphaSimulator());
    const dir = fixtureConfig();
    writeFileSync(join(dir, 'channels.yaml'), channelsYaml([alphaChannel('alpha-a', simA)]));
    const rig = await startRig(dir);
    rig.live.watch();
    const cfg0 = await rig.admin('GET', '/admin/config');
    assert.equal(cfg0.json.watching, true);
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'channels.yaml'), channelsYaml([alphaChannel(`alpha-b${i}`, simB)]));
    let cfg = cfg0;
    await until('the watched change to load', async () => (cfg = await rig.admin('GET', '/admin/config')).json.generation > 1);
    assert.equal(cfg.json.generation, 2);
    assert.equal(cfg.json.last_reload.reason, 'watch');
    assert.deepEqual(cfg.json.channels, ['alpha-b4']);
    assert.equal((await rig.post(ALPHA_PATH, ALPHA_BODY)).status, 200);
    assert.equal(simB.stats.requests, 1);
    assert.equal(rig.live.changePending, false);
    assert.equal(rig.live.generation, 2, 'one burst, one reload');
  });

  test('an in-flight request finishes on its snapshot after a reload removed its channel; the channel pool is closed', async () => {
    const simA = await startSim(() => startAlphaSimulator());
    const simB = await startSim(() => startAlphaSimulator());
    const dir = fixtureConfig();
    writeFileSync(join(dir, 'channels.yaml'), channelsYaml([alphaChannel('alpha-a', simA)]));
    const rig = await startRig(dir);

    simA.faults.push('slow-headers:1500');
    let answeredAt = 0;
    const slow = rig.post(ALPHA_PATH, ALPHA_BODY).then((r) => ((answeredAt = Date.now()), r));
    await until('the slow request to reach the vendor', () => simA.stats.requests === 1);
    assert.deepEqual(rig.gateway.pools.origins(), [simA.url]);

    writeFileSync(join(dir, 'channels.yaml'), channelsYaml([alphaChannel('alpha-b', simB)]));
    const reload = await rig.admin('POST', '/admin/reload');
    const reloadedAt = Date.now();
    assert.equal(reload.status, 200, reload.text);
    // The old channel's pool left the map at the swap; it closes once the slow request is done.
    assert.deepEqual(rig.gateway.pools.origins(), []);

    const res = await slow;
    assert.equal(res.status, 200, res.text);
    assert.ok(answeredAt > reloadedAt, 'the request was still in flight when the snapshot was swapped');
    assert.ok(res.json.candidates[0].content.parts.some((p: { inlineData?: unknown }) => p.inlineData));

    const next = await rig.post(ALPHA_PATH, ALPHA_BODY);
    assert.equal(next.status, 200);
    assert.equal(simB.stats.requests, 1, 'a new request takes the new channel');
    assert.equal(simA.stats.requests, 1);
    assert.deepEqual(rig.gateway.pools.origins(), [simB.url]);
  });

  test('admin routes: a missing or wrong admin key is invalid_api_key; without GATEWAY_ADMIN_KEY they stay closed', async () => {
    const sim = await startSim(() => startAlphaSimulator());
    const dir = fixtureConfig();
    writeFileSync(join(dir, 'channels.yaml'), channelsYaml([alphaChannel('alpha-a', sim)]));
    const rig = await startRig(dir);
    for (const [method, path] of [
      ['GET', '/admin/config'],
      ['POST', '/admin/reload'],
    ] as const) {
      for (const key of [null, 'wrong', rig.key]) {
        const res = await rig.admin(method, path, key);
        assert.equal(res.status, 401, `${method} ${path} with ${key === null ? 'no key' : 'a wrong key'}`);
        assert.equal(res.json.error.code, 'invalid_api_key');
      }
    }
    assert.equal(rig.live.generation, 1, 'no reload without the admin key');
    const ok = await rig.admin('GET', '/admin/config');
    assert.equal(ok.status, 200);
    assert.equal(ok.json.generation, 1);
    assert.equal(ok.json.last_reload, null);
    assert.deepEqual(ok.json.dirs, [dir]);

    const closed = await startRig(dir, { adminKey: null });
    for (const key of [null, ADMIN_KEY]) {
      const res = await closed.admin('POST', '/admin/reload', key);
      assert.equal(res.status, 401);
      assert.equal(res.json.error.code, 'invalid_api_key');
      assert.match(res.json.error.message, /GATEWAY_ADMIN_KEY/);
    }
    assert.equal(closed.live.generation, 1);

    // A gateway whose configuration is fixed answers a clear error, not a crash.
    const fixed = await startRig(dir, { control: false });
    for (const [method, path] of [
      ['GET', '/admin/config'],
      ['POST', '/admin/reload'],
    ] as const) {
      const res = await fixed.admin(method, path);
      assert.equal(res.status, 404);
      assert.equal(res.json.error.code, 'not_found');
      assert.match(res.json.error.message, /fixed configuration/);
    }
    assert.equal((await fixed.post(ALPHA_PATH, ALPHA_BODY)).status, 200);
  });
});

describe('tasks across reloads', () => {
  /** The project's config with one zeta-openai channel for epsilon-video-3 (the shipped one is left out: no env). */
  function epsilonFragment(name: string, url: string, key: string): string {
    return `version: 1
channels:
  - name: ${name}
    profile: zeta-openai
    base_url: ${url}
    secrets: { key: ${key} }
    groups: [default]
    models: [epsilon-video-3]
    polling: { interval_ms: 100, stale_ms: 50, deadline_ms: 60000 }
`;
  }
  const submit = { model: 'epsilon-video-3', prompt: 'a paper boat [sim:finish=1500]', seconds: '8', size: '1280x720' };

  test('a task accepted before a reload that changed its channel credentials is followed to completion with the old ones', async () => {
    const sim = await startSim(() => startZetaOpenaiSimulator({}));
    const dir = projectConfig();
    const fragment = join(dir, 'channels.d/zz-reload-test.yaml');
    writeFileSync(fragment, epsilonFragment('epsilon-reload', sim.url, sim.secrets.key!));
    const rig = await startRig(dir, { load: { env: {} } });

    const sub = await rig.post('/v1/video/generations', submit);
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    assert.equal(rig.gateway.poller.pinnedChannels().size, 1);

    writeFileSync(fragment, epsilonFragment('epsilon-reload', sim.url, 'a-key-the-vendor-refuses'));
    const reload = await rig.admin('POST', '/admin/reload');
    assert.equal(reload.status, 200, reload.text);
    assert.notEqual((await rig.store.getTask(id))!.status, 'completed', 'the task was still running at the reload');
    const queriesAtReload = sim.stats.queries!;

    let task: JsonAnswer = sub;
    await until('the task to complete', async () => (task = await rig.get(`/v1/videos/${id}`)).json?.status === 'completed' || task.json?.status === 'failed');
    assert.equal(task.json.status, 'completed', task.text);
    assert.ok(sim.stats.queries! > queriesAtReload, 'the vendor was asked after the reload');
    assert.equal(rig.gateway.poller.pinnedChannels().size, 0, 'the pinned definition went with the finished task');

    // The vendor really refuses the new key: a task submitted now fails.
    const refused = await rig.post('/v1/video/generations', submit);
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.json.error.code, 'bad_response');
  });

  test('a task accepted before a reload that moved its channel keeps its vendor and its connection pool until it ends', async () => {
    const simOld = await startSim(() => startZetaOpenaiSimulator({}));
    const simNew = await startSim(() => startZetaOpenaiSimulator({}));
    const dir = projectConfig();
    const fragment = join(dir, 'channels.d/zz-reload-test.yaml');
    writeFileSync(fragment, epsilonFragment('epsilon-reload', simOld.url, simOld.secrets.key!));
    const rig = await startRig(dir, { load: { env: {} } });

    const sub = await rig.post('/v1/video/generations', submit);
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;

    writeFileSync(fragment, epsilonFragment('epsilon-reload', simNew.url, simNew.secrets.key!));
    assert.equal((await rig.admin('POST', '/admin/reload')).status, 200);
    assert.ok(rig.gateway.pools.origins().includes(simOld.url), 'the pool of the pinned definition stays open');

    const after = await rig.post('/v1/video/generations', { ...submit, prompt: 'a second boat' });
    assert.equal(after.status, 200, after.text);
    assert.equal(simNew.stats.submits, 1, 'a new task goes to the moved channel');

    let task: JsonAnswer = sub;
    await until(
      'the first task to complete',
      async () => (task = await rig.get(`/v1/videos/${id}`)).json?.status === 'completed' || task.json?.status === 'failed',
    );
    assert.equal(task.json.status, 'completed', task.text);
    assert.equal(simOld.stats.submits, 1);
    assert.ok(simOld.stats.queries! > 0, 'the first task was asked about where it was made');

    // Once no task needs the old origin, the next swap closes its pool.
    assert.equal((await rig.admin('POST', '/admin/reload')).status, 200);
    assert.ok(!rig.gateway.pools.origins().includes(simOld.url), `the old origin's pool is closed: ${rig.gateway.pools.origins().join(', ')}`);
  });
});

describe('SIGHUP', () => {
  test('SIGHUP reloads a running gateway process; a broken file is logged with file:line and the process keeps serving', async () => {
    const dir = projectConfig();
    const db = join(scratchDir('gw-reload-db-'), 'gateway.db');
    const gw = startCli(['start'], {
      ...channelEnv(),
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_CONFIG_DIR: dir,
      GATEWAY_CONFIG_EXTRA: '',
      GATEWAY_DB: db,
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      GATEWAY_WATCH: '0',
      LOG_LEVEL: 'info',
    });
    cleanups.push(async () => void (await gw.stop('SIGKILL')));
    const url = (await gw.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"gateway listening"/))[1]!;
    const config = async () => {
      const res = await fetch(`${url}/admin/config`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      assert.equal(res.status, 200);
      return (await res.json()) as { generation: number; watching: boolean; last_reload: { ok: boolean; reason: string; issues: string[] } | null };
    };
    const first = await config();
    assert.equal(first.generation, 1);
    assert.equal(first.watching, false);

    gw.child.kill('SIGHUP');
    await until('SIGHUP to reload', async () => (await config()).generation === 2);
    assert.equal((await config()).last_reload?.reason, 'SIGHUP');
    await gw.waitFor(/"reason":"SIGHUP"[^\n]*"msg":"configuration reloaded"/);

    // A broken file: the reload fails, the log names file:line, and the gateway still answers.
    const channels = join(dir, 'channels.yaml');
    const text = readFileSync(channels, 'utf8');
    writeFileSync(channels, text.replace('\nchannels:\n', '\nchannels:\n  - name: broken\n    profile: no-such-profile\n'));
    gw.child.kill('SIGHUP');
    await until('the failed reload', async () => (await config()).last_reload?.ok === false);
    await gw.waitFor(/channels\.yaml:\d+:\d+: [^\n]*"msg":"configuration reload failed; the previous configuration keeps serving"/);
    const after = await config();
    assert.equal(after.generation, 2);
    assert.ok(after.last_reload!.issues.some((i) => /^channels\.yaml:\d+:\d+: /.test(i)));
    assert.equal(gw.child.exitCode, null, 'the process is still running');

    writeFileSync(channels, text);
    gw.child.kill('SIGHUP');
    await until('the recovering reload', async () => (await config()).generation === 3);
    assert.equal(await gw.stop('SIGTERM'), 0);
  });
});
