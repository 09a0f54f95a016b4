/**
 * Channels left out (docs/operating.md, "Channels left out"): a channel whose variables are unset, or that says
 * `enabled: false`, is checked like any other but not routed to, and reported; GATEWAY_STRICT makes
 * an unset variable fatal instead. The checks themselves never depend on the environment: a typo in
 * a channel without credentials fails `check`, `start` and every reload alike (issue #12).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { formatIssue } from '../../src/config/issues.js';
import { loadConfig } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli } from '../helpers/process.js';

const scratch = mkdtempSync(join(tmpdir(), 'gw-left-out-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Every channel variable of the shipped config unset ('' counts as unset), as on a fresh machine. */
const NOTHING_SET = Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, '']));

/** An extra config directory (GATEWAY_CONFIG_EXTRA) holding one channels.d fragment. */
function extraDir(name: string, fragment: string): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'channels.d'), { recursive: true });
  writeFileSync(join(dir, 'channels.d', 'extra.yaml'), fragment);
  return dir;
}

/** The operator's fragment of issue #12: a misspelled profile, an undeclared group, a name already taken. */
const TYPOS = `version: 1
channels:
  - name: extra-typo
    profile: zeta-opneai
    base_url: \${EXTRA_BASE_URL}
    secrets: { key: "\${EXTRA_API_KEY}" }
    groups: [premium]
    models: [epsilon-video-3]
  - name: alpha-primary
    profile: alpha-native
    base_url: \${EXTRA_BASE_URL}
    secrets: { key: "\${EXTRA_API_KEY}" }
    groups: [default]
    models: [alpha-3-pro-image-preview]
`;

const DISABLED = `version: 1
channels:
  - name: alpha-spare
    profile: alpha-native
    enabled: false
    base_url: \${SPARE_BASE_URL}
    secrets: { key: "\${SPARE_API_KEY}" }
    groups: [default]
    models: [alpha-3-pro-image-preview]
`;

describe('loading', () => {
  test('a typo in a channel without credentials is an error whether or not its variables are set, each at its file and line', () => {
    const dir = extraDir('typos', TYPOS);
    const expected = [
      /^channels\.d\/extra\.yaml:4:14: unknown profile "zeta-opneai"/,
      /^channels\.d\/extra\.yaml:7:14: unknown group "premium"/,
      /^channels\.d\/extra\.yaml:9:11: channel name "alpha-primary" is already used by the channel at channels\.yaml:\d+$/,
    ];
    for (const env of [{}, { EXTRA_BASE_URL: 'http://127.0.0.1:9', EXTRA_API_KEY: 'k' }]) {
      const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env, extraDirs: [dir] });
      assert.equal(snapshot, null, 'the load fails');
      const errors = issues.filter((i) => i.severity === 'error').map((i) => formatIssue(i).replace(`${dir}/`, ''));
      assert.equal(errors.length, expected.length, errors.join('\n'));
      expected.forEach((re, i) => {
        assert.match(errors[i]!, re);
      });
    }
    // `gateway check` says the same, and fails, on a machine without the credentials.
    const check = runCli(['check'], { ...NOTHING_SET, GATEWAY_CONFIG_EXTRA: dir });
    assert.equal(check.status, 1, check.stdout + check.stderr);
    assert.match(check.stdout, /unknown profile "zeta-opneai"/);
    assert.match(check.stdout, /3 error\(s\)/);
  });

  test('a channel whose variables are unset is left out with a warning naming them; GATEWAY_STRICT makes it an error', () => {
    const env = { ALPHA_BASE_URL: 'http://127.0.0.1:9', ALPHA_API_KEY: 'k' };
    const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env });
    assert.ok(snapshot, issues.map(formatIssue).join('\n'));
    assert.deepEqual(
      snapshot.channels.map((c) => c.name),
      ['alpha-primary'],
    );
    const epsilon = snapshot.leftOut.find((c) => c.name === 'epsilon-video');
    assert.deepEqual(epsilon && { reason: epsilon.reason, unset: epsilon.unset }, { reason: 'unset_env', unset: ['EPSILON_BASE_URL', 'EPSILON_API_KEY'] });
    assert.match(epsilon!.at, /^channels\.yaml:\d+$/);
    assert.ok(issues.some((i) => i.severity === 'warning' && /EPSILON_API_KEY is not set \(channel epsilon-video\); the channel is left out/.test(i.message)));

    const strict = loadConfig(PROJECT_ROOT, { env, strict: true });
    assert.equal(strict.snapshot, null);
    assert.ok(strict.issues.some((i) => i.severity === 'error' && /EPSILON_API_KEY is not set \(channel epsilon-video\) \(GATEWAY_STRICT\)/.test(i.message)));
  });

  test('enabled: false leaves a channel out without a word about its unset variables, and strict does not mind', () => {
    const dir = extraDir('disabled', DISABLED);
    for (const strict of [false, true]) {
      const env = { ...Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, n.endsWith('_BASE_URL') ? 'http://127.0.0.1:9' : 'k'])) };
      const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env, extraDirs: [dir], strict });
      assert.ok(snapshot, issues.map(formatIssue).join('\n'));
      assert.deepEqual(issues.map(formatIssue), []);
      assert.ok(!snapshot.channelsByName.has('alpha-spare'));
      assert.deepEqual(
        snapshot.leftOut.map((c) => ({ name: c.name, reason: c.reason })),
        [{ name: 'alpha-spare', reason: 'disabled' }],
      );
    }
  });

  test('a profile no channel uses is a warning at its line', () => {
    const spare = `version: 1
profiles:
  spare:
    auth: { type: none }
    operations:
      generate: { request: { method: POST, path: '"/g"' }, response: { body: body } }
`;
    const dir = extraDir('unused-profile', spare);
    const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env: {}, extraDirs: [dir] });
    assert.ok(snapshot);
    const warning = issues.find((i) => /profile spare is not used by any channel/.test(i.message));
    assert.ok(warning, 'warned');
    assert.equal(warning.severity, 'warning');
    assert.equal(`${warning.file.replace(`${dir}/`, '')}:${warning.line}`, 'channels.d/extra.yaml:3');
  });
});

describe('a real gateway with one vendor key', () => {
  let alpha: Simulator;
  before(async () => {
    alpha = await SIMULATORS['alpha-native']!();
  });
  after(async () => {
    await alpha.close();
  });

  const oneKey = () => ({
    ...NOTHING_SET,
    ALPHA_BASE_URL: alpha.url,
    ALPHA_API_KEY: alpha.secrets.key!,
    PORT: '0',
    GATEWAY_WATCH: '0',
    GATEWAY_ADMIN_KEY: 'admin-left-out',
  });

  test('start serves the channel it has credentials for and reports the others (log, /admin/channels, metric)', async () => {
    const { proc, base } = await startGatewayProcess({ ...oneKey(), GATEWAY_DB: join(scratch, 'one-key.db') });
    try {
      const admin = { authorization: 'Bearer admin-left-out' };
      const channels = (await (await fetch(`${base}/admin/channels`, { headers: admin })).json()) as {
        channels: { name: string }[];
        left_out: { name: string; reason: string; unset: string[]; at: string }[];
      };
      assert.deepEqual(
        channels.channels.map((c) => c.name),
        ['alpha-primary'],
      );
      const epsilon = channels.left_out.find((c) => c.name === 'epsilon-video');
      assert.deepEqual(epsilon && { reason: epsilon.reason, unset: epsilon.unset }, { reason: 'unset_env', unset: ['EPSILON_BASE_URL', 'EPSILON_API_KEY'] });
      assert.match(epsilon!.at, /^channels\.yaml:\d+$/);

      const metrics = await (await fetch(`${base}/metrics`, { headers: admin })).text();
      assert.match(metrics, /^gateway_channels_left_out\{channel="epsilon-video",reason="unset_env"\} 1$/m);
      assert.doesNotMatch(metrics, /gateway_channels_left_out\{channel="alpha-primary"/);

      // Each left-out channel is logged once at start, naming what is missing.
      assert.match(proc.output(), /"channel":"epsilon-video"[^\n]*"unset":\["EPSILON_BASE_URL","EPSILON_API_KEY"\][^\n]*channel left out/);
    } finally {
      await proc.stop();
    }
  });

  test('a reload that brings in a typo (credentials unset) is refused; the running configuration keeps serving', async () => {
    const extra = extraDir('reload-typos', 'version: 1\n');
    const { proc, base } = await startGatewayProcess({ ...oneKey(), GATEWAY_DB: join(scratch, 'reload.db'), GATEWAY_CONFIG_EXTRA: extra });
    try {
      const admin = { authorization: 'Bearer admin-left-out' };
      writeFileSync(join(extra, 'channels.d', 'extra.yaml'), TYPOS);
      const res = await fetch(`${base}/admin/reload`, { method: 'POST', headers: admin });
      const reload = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(reload.error.code, 'config_invalid', JSON.stringify(reload));
      assert.match(reload.error.message, /channels\.d\/extra\.yaml:4:14: unknown profile "zeta-opneai"/);
      assert.ok(res.status >= 400 && res.status < 500, `a 4xx, not ${res.status}`);
      const config = (await (await fetch(`${base}/admin/config`, { headers: admin })).json()) as { generation: number };
      assert.equal(config.generation, 1, 'the old snapshot serves');
    } finally {
      await proc.stop();
    }
  });

  test('GATEWAY_STRICT=1 refuses to start and names each unset variable at its line', () => {
    const r = runCli(['start'], { ...oneKey(), GATEWAY_STRICT: '1', GATEWAY_DB: join(scratch, 'strict.db') });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /channels\.yaml:\d+:\d+: environment variable EPSILON_API_KEY is not set \(channel epsilon-video\) \(GATEWAY_STRICT\)/);
    assert.doesNotMatch(r.stderr, /ALPHA_API_KEY/);
  });
});
