/**
 * Every configuration reload is recorded in the audit log (docs/admin-and-metrics.md, "The audit
 * log"), by whoever asked: `POST /admin/reload` as the admin key's actor, a watched file change as
 * `file-watch` (a gateway started as `gateway start` starts it, in process), SIGHUP as `signal` (a
 * real `gateway start` process). Before and after say which version, generation and counts served;
 * a refused reload is recorded with `ok: false` and its problems as `file:line:column: message`.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { type App, settingsFromEnv, startApp } from '../../src/app.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { silentLogger } from '../../src/log.js';
import { adminActor } from '../../src/records/audit.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { until } from '../helpers/until.js';

const ADMIN_KEY = `reload-audit-${'k'.repeat(20)}`;
const FIXTURE = join(PROJECT_ROOT, 'test/fixtures/reload');

interface Summary {
  replica: string;
  generation: number;
  version: string;
  routes: number;
  channels: number;
  left_out: number;
  groups: number;
}
interface ReloadRecord {
  actor: string;
  action: string;
  target: string | null;
  before: Summary;
  after:
    | (Summary & { ok: true; ms: number; warnings: number })
    | { ok: false; replica: string; generation: number; version: string; errors: number; problems: string[] };
}

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** The reload fixture (one alpha channel) in a scratch directory, with a place for the store. */
function scratch(): { dir: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-reload-audit-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'config');
  cpSync(FIXTURE, config, { recursive: true });
  cpSync(join(PROJECT_ROOT, 'schemas/public'), join(config, 'schemas/public'), { recursive: true });
  return { dir: config, db: join(dir, 'gateway.db') };
}

/** A second channel appended to the fixture's channels.yaml (a change the reload picks up). */
const withSecondChannel = (text: string) =>
  `${text}\n  - name: alpha-b\n    profile: alpha-native\n    base_url: http://127.0.0.1:9\n    secrets: { key: k }\n    groups: [default]\n    models: [alpha-3-pro-image-preview]\n`;
/** A channel naming a profile that does not exist: the reload is refused. */
const broken = (text: string) =>
  `${text}\n  - name: broken\n    profile: no-such-profile\n    base_url: http://127.0.0.1:9\n    groups: [default]\n    models: [x]\n`;

async function reloads(base: string): Promise<ReloadRecord[]> {
  const res = await fetch(`${base}/admin/audit?action=config.reload`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { audit: ReloadRecord[] }).audit;
}

describe('reloads in the audit log', () => {
  test('POST /admin/reload is recorded as the admin key; a refused one with ok: false and its problems', async () => {
    const { dir, db } = scratch();
    const app: App = await startApp(
      settingsFromEnv({
        GATEWAY_CONFIG_DIR: dir,
        GATEWAY_DB: db,
        PORT: '0',
        HOST: '127.0.0.1',
        GATEWAY_ADMIN_KEY: ADMIN_KEY,
        GATEWAY_WATCH: '0',
        GATEWAY_REPLICA_ID: 'r-admin',
      }),
      silentLogger(),
      { simulate: false },
    );
    cleanups.push(() => app.close());
    const base = `http://127.0.0.1:${app.port}`;
    const first = app.config.status().version;
    const file = join(dir, 'channels.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, withSecondChannel(text));
    const ok = await fetch(`${base}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(ok.status, 200);
    const [good] = await reloads(base);
    assert.ok(good);
    assert.equal(good.actor, adminActor(ADMIN_KEY));
    assert.equal(good.target, null);
    assert.deepEqual(good.before, { replica: 'r-admin', generation: 1, version: first, routes: 2, channels: 1, left_out: 0, groups: 1 });
    assert.equal(good.after.ok, true);
    assert.deepEqual(
      { ...good.after, ms: 0, warnings: 0 },
      {
        ok: true,
        replica: 'r-admin',
        generation: 2,
        version: app.config.status().version,
        routes: 2,
        channels: 2,
        left_out: 0,
        groups: 1,
        ms: 0,
        warnings: 0,
      },
    );
    assert.notEqual(app.config.status().version, first);

    writeFileSync(file, broken(withSecondChannel(text)));
    const refused = await fetch(`${base}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(refused.status, 422);
    const [bad] = await reloads(base);
    assert.ok(bad && !bad.after.ok, JSON.stringify(bad));
    if (bad.after.ok) return;
    assert.equal(bad.before.generation, 2);
    assert.deepEqual([bad.after.generation, bad.after.version, bad.after.errors], [2, good.after.ok ? good.after.version : '', bad.after.problems.length]);
    assert.ok(
      bad.after.problems.some((p) => /^channels\.yaml:\d+:\d+: .*no-such-profile/.test(p)),
      bad.after.problems.join('\n'),
    );
  });

  test('a watched file change is recorded as file-watch, with or without an admin key', async () => {
    const { dir, db } = scratch();
    // No admin key: the routes are closed, the record is written all the same; read from the store.
    const app = await startApp(
      settingsFromEnv({
        GATEWAY_CONFIG_DIR: dir,
        GATEWAY_DB: db,
        PORT: '0',
        HOST: '127.0.0.1',
        GATEWAY_WATCH: '1',
        GATEWAY_RELOAD_DEBOUNCE_MS: '50',
        GATEWAY_REPLICA_ID: 'r-watch',
      }),
      silentLogger(),
      { simulate: false },
    );
    cleanups.push(() => app.close());
    const file = join(dir, 'channels.yaml');
    writeFileSync(file, withSecondChannel(readFileSync(file, 'utf8')));
    const [record] = await until('the watched reload to be recorded', async () => {
      const found = await app.store.findAudit({ action: 'config.reload', before: null, limit: 10 });
      return found.length > 0 && found;
    });
    const r = record as unknown as ReloadRecord;
    assert.equal(r.actor, 'file-watch');
    assert.equal(r.before.replica, 'r-watch');
    assert.equal(r.after.ok, true);
    assert.equal(r.after.ok && r.after.channels, 2);
    assert.equal(app.config.status().lastReload?.reason, 'watch');
  });

  test('SIGHUP to a real gateway process is recorded as signal', async () => {
    const { dir, db } = scratch();
    const gw = await startGatewayProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_CONFIG_DIR: dir,
      GATEWAY_CONFIG_EXTRA: '',
      GATEWAY_DB: db,
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      GATEWAY_WATCH: '0',
      GATEWAY_REPLICA_ID: 'r-signal',
    });
    cleanups.push(async () => void (await gw.proc.stop('SIGKILL')));
    assert.deepEqual(await reloads(gw.base), [], 'nothing before the signal');
    gw.proc.child.kill('SIGHUP');
    const [record] = await until('the SIGHUP reload to be recorded', async () => {
      const found = await reloads(gw.base);
      return found.length > 0 && found;
    });
    assert.equal(record?.actor, 'signal');
    assert.deepEqual([record?.before.replica, record?.before.generation, record?.after.generation, record?.after.ok], ['r-signal', 1, 2, true]);
    assert.equal(await gw.proc.stop('SIGTERM'), 0);
  });
});
