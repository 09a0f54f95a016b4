/**
 * LiveConfig (src/config/live-config.ts) and the file watch (src/config/watch-config.ts) over a
 * scratch copy of test/fixtures/reload: builds are serialised and coalesced, a bad file keeps the
 * old snapshot and says where it is wrong, and a burst of file writes gives exactly one reload.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { ReloadOutcome } from '../../src/config/config-control.js';
import { LiveConfig } from '../../src/config/live-config.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { concernsConfig } from '../../src/config/watch-config.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';

const FIXTURE = join(PROJECT_ROOT, 'test/fixtures/reload');
const log = silentLogger();
const scratch: string[] = [];
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** A scratch config directory: the fixture and the public schemas it names. */
function scratchConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-live-config-'));
  scratch.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  cpSync(join(PROJECT_ROOT, 'schemas/public'), join(dir, 'schemas/public'), { recursive: true });
  return dir;
}

/** The fixture's channels.yaml with its channel list replaced by channels of these names. */
function channelsYaml(names: readonly string[]): string {
  const head = readFileSync(join(FIXTURE, 'channels.yaml'), 'utf8').split('\nchannels:\n')[0]!;
  const list = names.map(
    (n) =>
      `  - { name: ${n}, profile: alpha-native, base_url: "http://127.0.0.1:9", secrets: { key: k }, groups: [default], models: [alpha-3-pro-image-preview] }`,
  );
  return `${head}\nchannels:\n${list.join('\n')}\n`;
}

/** A fragment of the same shape (channels.d/*.yaml) holding channels of these names. */
function fragmentYaml(names: readonly string[]): string {
  return `version: 1\nchannels:\n${names.map((n) => `  - { name: ${n}, profile: alpha-native, base_url: "http://127.0.0.1:9", secrets: { key: k }, groups: [default], models: [alpha-3-pro-image-preview] }`).join('\n')}\n`;
}

const names = (s: Snapshot) => s.channels.map((c) => c.name).sort();

/** Resolves with the snapshot of the next swap; fails after `ms` so a missing reload cannot hang the suite. */
function nextSwap(live: LiveConfig, ms = 5_000): Promise<Snapshot> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no reload within ${ms} ms`));
    }, ms);
    const off = live.onSwap((next) => {
      clearTimeout(timer);
      off();
      resolve(next);
    });
  });
}

async function gauge(g: Metrics['configLastReloadOk']): Promise<number> {
  return (await g.get()).values[0]!.value;
}

async function reloads(metrics: Metrics): Promise<Record<string, number>> {
  return Object.fromEntries((await metrics.configReloads.get()).values.map((v) => [String(v.labels.result), v.value]));
}

describe('LiveConfig', () => {
  test('a reload that compiles swaps the snapshot and counts a generation; the old snapshot object is untouched', async () => {
    const dir = scratchConfig();
    const metrics = new Metrics();
    const live = LiveConfig.open({ dir, log, metrics });
    const first = live.current();
    assert.deepEqual(names(first), ['alpha-a']);
    writeFileSync(join(dir, 'channels.yaml'), channelsYaml(['alpha-b', 'alpha-c']));
    const out = await live.reload('test');
    assert.equal(out.ok, true);
    assert.equal(out.generation, 2);
    assert.ok(out.ms >= 0);
    assert.notEqual(live.current(), first);
    assert.deepEqual(names(live.current()), ['alpha-b', 'alpha-c']);
    // A request that captured the first snapshot keeps reading it unchanged.
    assert.deepEqual(names(first), ['alpha-a']);
    assert.equal(live.status().generation, 2);
    assert.deepEqual(live.status().lastReload && { ok: live.status().lastReload!.ok, reason: live.status().lastReload!.reason }, { ok: true, reason: 'test' });
    assert.equal(await gauge(metrics.configGeneration), 2);
    assert.deepEqual(await reloads(metrics), { ok: 1 });
  });

  test('reloads asked in the same turn share one build; reloads asked while a build runs share one more build after it', async () => {
    const dir = scratchConfig();
    const live = LiveConfig.open({ dir, log });
    const [a, b, c] = await Promise.all([live.reload('admin'), live.reload('SIGHUP'), live.reload('admin')]);
    assert.equal(a.generation, 2);
    assert.equal(b, a);
    assert.equal(c, a);
    assert.equal(live.status().lastReload!.reason, 'admin, SIGHUP');

    // A swap listener runs inside a build: what it asks for must wait for that build, then run once.
    const during: Promise<ReloadOutcome>[] = [];
    const off = live.onSwap(() => {
      if (during.length === 0) during.push(live.reload('during'), live.reload('during'), live.reload('watch'));
    });
    const outer = await live.reload('outer');
    assert.equal(outer.generation, 3);
    const inner = await Promise.all(during);
    off();
    assert.deepEqual(
      inner.map((o) => o.generation),
      [4, 4, 4],
    );
    assert.equal(live.generation, 4, 'three requests during one build make exactly one more build');
    assert.equal(live.status().lastReload!.reason, 'during, watch');
  });

  test('a file that does not load keeps the old snapshot serving, says file:line, and the fix recovers', async () => {
    const dir = scratchConfig();
    const metrics = new Metrics();
    const live = LiveConfig.open({ dir, log, metrics });
    const first = live.current();

    writeFileSync(join(dir, 'channels.yaml'), `${channelsYaml(['alpha-b'])}  - name: [unclosed\n`);
    const bad = await live.reload('admin');
    assert.equal(bad.ok, false);
    assert.equal(bad.generation, 1);
    assert.equal(live.current(), first);
    const issue = bad.issues.find((i) => i.severity === 'error');
    assert.ok(issue, 'a failed reload names its problem');
    assert.equal(issue.file, 'channels.yaml');
    assert.ok(issue.line > 1, `the line of the problem, got ${issue.line}`);
    const s = live.status();
    assert.equal(s.generation, 1);
    assert.equal(s.lastReload!.ok, false);
    assert.deepEqual(s.lastReload!.issues, bad.issues);
    assert.equal(await gauge(metrics.configLastReloadOk), 0);

    writeFileSync(join(dir, 'channels.yaml'), channelsYaml(['alpha-b']));
    const good = await live.reload('admin');
    assert.equal(good.ok, true);
    assert.equal(good.generation, 2);
    assert.deepEqual(names(live.current()), ['alpha-b']);
    assert.equal(await gauge(metrics.configLastReloadOk), 1);
    assert.deepEqual(await reloads(metrics), { ok: 1, error: 1 });
  });

  test('a loader that throws is a failed reload, not a crash', async () => {
    const dir = scratchConfig();
    let calls = 0;
    const live = LiveConfig.open({
      dir,
      log,
      load: {
        overrideChannel: () => {
          if (++calls > 1) throw new Error('simulator registry is gone');
          return null;
        },
      },
    });
    const out = await live.reload('admin');
    assert.equal(out.ok, false);
    assert.match(out.issues[0]!.message, /simulator registry is gone/);
    assert.equal(live.generation, 1);
  });

  test('every reload uses the loader options the process started with (env, override, extra directories)', async () => {
    const dir = scratchConfig();
    const extra = mkdtempSync(join(tmpdir(), 'gw-live-extra-'));
    scratch.push(extra);
    mkdirSync(join(extra, 'channels.d'));
    writeFileSync(join(extra, 'channels.d/more.yaml'), fragmentYaml(['alpha-extra']));
    const seen: string[] = [];
    const live = LiveConfig.open({
      dir,
      log,
      load: {
        env: { RELOAD_KEY: 'from-env' },
        extraDirs: [extra],
        overrideChannel: (c) => {
          seen.push(c.name);
          return null;
        },
      },
    });
    writeFileSync(join(extra, 'channels.d/more.yaml'), fragmentYaml(['alpha-extra', 'alpha-extra-2']));
    assert.equal((await live.reload('admin')).ok, true);
    assert.deepEqual(names(live.current()), ['alpha-a', 'alpha-extra', 'alpha-extra-2']);
    assert.equal(live.current().channelsByName.get('alpha-a')!.secrets.key!.reveal(), 'from-env');
    assert.deepEqual(seen, ['alpha-a', 'alpha-extra', 'alpha-a', 'alpha-extra', 'alpha-extra-2']);
    assert.deepEqual(live.status().dirs, [dir, extra]);
  });
});

describe('watching the config files', () => {
  test('a burst of writes to channels.yaml gives exactly one reload, of the last content', async () => {
    const dir = scratchConfig();
    const metrics = new Metrics();
    const live = LiveConfig.open({ dir, log, metrics, debounceMs: 100 });
    live.watch();
    after(() => live.close());
    assert.equal(live.status().watching, true);

    const first = nextSwap(live);
    for (let i = 0; i < 8; i++) writeFileSync(join(dir, 'channels.yaml'), channelsYaml([`alpha-${i}`]));
    assert.deepEqual(names(await first), ['alpha-7']);
    assert.equal(live.generation, 2);
    assert.equal(live.changePending, false, 'no second reload is waiting');
    assert.deepEqual(await reloads(metrics), { ok: 1 });

    // A second burst gives one more: a reload left over from the first burst would make it a third.
    const second = nextSwap(live);
    for (let i = 0; i < 8; i++) writeFileSync(join(dir, 'channels.yaml'), channelsYaml([`alpha-b${i}`]));
    assert.deepEqual(names(await second), ['alpha-b7']);
    assert.equal(live.generation, 3);
    assert.deepEqual(await reloads(metrics), { ok: 2 });
  });

  test('fragments are watched, also in a fragment directory made after the start and in extra directories', async () => {
    const dir = scratchConfig();
    const extra = mkdtempSync(join(tmpdir(), 'gw-live-extra-'));
    scratch.push(extra);
    const live = LiveConfig.open({ dir, log, debounceMs: 50, load: { extraDirs: [extra] } });
    live.watch();
    after(() => live.close());

    // channels.d does not exist yet: making it is a change, and its files are watched from then on.
    let swap = nextSwap(live);
    mkdirSync(join(dir, 'channels.d'));
    writeFileSync(join(dir, 'channels.d/one.yaml'), fragmentYaml(['frag-1']));
    assert.deepEqual(names(await swap), ['alpha-a', 'frag-1']);
    swap = nextSwap(live);
    writeFileSync(join(dir, 'channels.d/one.yaml'), fragmentYaml(['frag-2']));
    assert.deepEqual(names(await swap), ['alpha-a', 'frag-2']);

    swap = nextSwap(live);
    writeFileSync(join(extra, 'channels.yaml'), fragmentYaml(['extra-1']));
    assert.deepEqual(names(await swap), ['alpha-a', 'extra-1', 'frag-2']);
  });

  test('a Kubernetes-style update (the ..data link swapped to a new directory) reloads once', async () => {
    const dir = scratchConfig();
    // As a ConfigMap volume lays it out: the files are links through ..data, a link to a versioned directory.
    for (const v of ['..v1', '..v2']) mkdirSync(join(dir, v));
    renameSync(join(dir, 'routes.yaml'), join(dir, '..v1/routes.yaml'));
    cpSync(join(dir, '..v1/routes.yaml'), join(dir, '..v2/routes.yaml'));
    rmSync(join(dir, 'channels.yaml'));
    writeFileSync(join(dir, '..v1/channels.yaml'), channelsYaml(['cm-1']));
    writeFileSync(join(dir, '..v2/channels.yaml'), channelsYaml(['cm-2']));
    symlinkSync('..v1', join(dir, '..data'));
    for (const f of ['routes.yaml', 'channels.yaml']) symlinkSync(`..data/${f}`, join(dir, f));
    const live = LiveConfig.open({ dir, log, debounceMs: 50 });
    live.watch();
    after(() => live.close());
    assert.deepEqual(names(live.current()), ['cm-1']);

    const swap = nextSwap(live);
    symlinkSync('..v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    assert.deepEqual(names(await swap), ['cm-2']);
    assert.equal(live.generation, 2);
  });

  test('a watched write that breaks the file is reported and the old snapshot keeps serving', async () => {
    const dir = scratchConfig();
    const metrics = new Metrics();
    const live = LiveConfig.open({ dir, log, metrics, debounceMs: 50 });
    live.watch();
    after(() => live.close());
    const first = live.current();
    writeFileSync(join(dir, 'channels.yaml'), channelsYaml(['alpha-b']).replace('profile: alpha-native', 'profile: alpha-nope'));
    // No swap comes from a bad file: wait for the failed attempt itself, bounded.
    const deadline = Date.now() + 5_000;
    while (live.status().lastReload === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const last = live.status().lastReload;
    assert.ok(last, 'the watch tried a reload');
    assert.equal(last.ok, false);
    assert.equal(last.reason, 'watch');
    assert.match(last.issues.map((i) => `${i.file}:${i.line}: ${i.message}`).join('\n'), /channels\.yaml:\d+: .*alpha-nope/);
    assert.equal(live.current(), first);
    assert.equal(await gauge(metrics.configLastReloadOk), 0);
  });

  test('only the config files and fragments count as changes', () => {
    assert.equal(concernsConfig(null, 'routes.yaml'), true);
    assert.equal(concernsConfig(null, 'channels.yaml'), true);
    assert.equal(concernsConfig(null, 'channels.d'), true);
    assert.equal(concernsConfig(null, null), true);
    assert.equal(concernsConfig(null, '..data'), true, 'a ConfigMap volume swaps its ..data link');
    assert.equal(concernsConfig(null, '..data_tmp'), false);
    assert.equal(concernsConfig(null, 'channels.yaml~'), false);
    assert.equal(concernsConfig(null, '.channels.yaml.swp'), false);
    assert.equal(concernsConfig(null, 'README.md'), false);
    assert.equal(concernsConfig(null, 'other.yaml'), false);
    assert.equal(concernsConfig('channels.d', 'vendor.yaml'), true);
    assert.equal(concernsConfig('routes.d', 'vendor.yml'), true);
    assert.equal(concernsConfig('channels.d', '.vendor.yaml.swp'), false);
    assert.equal(concernsConfig('channels.d', 'vendor.yaml.bak'), false);
  });
});
