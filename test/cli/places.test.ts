/**
 * One rule for where every command finds the configuration and the store (src/cli/locate.ts):
 * `--config DIR`, else GATEWAY_CONFIG_DIR, else the current directory; `--db`, else GATEWAY_DB, else
 * data/gateway.db of the current directory. Real processes of the built CLI, run from directories
 * of their own with a clean environment, as an operator runs them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { CLI, startProcess } from '../helpers/process.js';

const root = mkdtempSync(join(tmpdir(), 'gw-places-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A new empty directory under the test's own. */
function emptyDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The environment of the test runner without any setting that names a place, and no channel variable. */
function cleanEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['GATEWAY_CONFIG_DIR', 'GATEWAY_CONFIG_EXTRA', 'GATEWAY_DB', 'GATEWAY_REDIS', 'GATEWAY_ADMIN_KEY']) delete out[name];
  for (const name of channelEnvNames(PROJECT_ROOT)) out[name] = '';
  return { ...out, ...env };
}

/** Runs the built CLI in `cwd` to completion. */
function run(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A config directory as `gateway init` writes it, with one more group, `team`, that the shipped config lacks. */
const teamConfig = (() => {
  const dir = join(root, 'team-config');
  const r = run(['init', dir], root);
  assert.equal(r.status, 0, r.stderr);
  const file = join(dir, 'channels.yaml');
  const text = readFileSync(file, 'utf8');
  assert.match(text, /^groups:\n/m);
  writeFileSync(file, text.replace(/^groups:\n/m, 'groups:\n  team:\n    description: only this config has it\n'));
  return dir;
})();

test('every command that needs a config, run where there is none, says which directory it looked in and exits 2, making nothing', () => {
  const cwd = emptyDir('no-config');
  const commands = [['start'], ['demo'], ['sims'], ['check'], ['explain', 'gpt-image-1'], ['groups'], ['tokens', 'create', '--group', 'default']];
  for (const args of commands) {
    const r = run(args, cwd, { PORT: '0', HOST: '127.0.0.1' });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.ok(r.stderr.includes(`no configuration in ${cwd} (the current directory`), `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /--config DIR or GATEWAY_CONFIG_DIR/);
    assert.doesNotMatch(r.stdout, /_BASE_URL=/, `${args.join(' ')} printed variables`);
  }
  // Neither a store nor the demo's secret was made where the commands ran.
  assert.deepEqual(readdirSync(cwd), []);
  // Named by the flag or the variable, the message names that directory and what named it.
  const named = run(['sims', '--config', 'nowhere'], cwd, { GATEWAY_CONFIG_DIR: teamConfig });
  assert.equal(named.status, 2);
  assert.ok(named.stderr.includes(`no configuration in ${join(cwd, 'nowhere')} (from --config): there is no such directory`), named.stderr);
  const fromEnv = run(['explain', 'gpt-image-1'], root, { GATEWAY_CONFIG_DIR: cwd });
  assert.equal(fromEnv.status, 2);
  assert.ok(fromEnv.stderr.includes(`no configuration in ${cwd} (from GATEWAY_CONFIG_DIR)`), fromEnv.stderr);
});

test('tokens, groups and webhooks never make the default store where they run: they name the file they looked for and exit 2', () => {
  const cwd = emptyDir('no-store');
  const commands = [
    ['tokens', 'create', '--group', 'default', '--config', teamConfig],
    ['tokens', 'list'],
    ['tokens', 'disable', 'x'],
    ['groups', '--config', teamConfig],
    ['webhooks', 'list'],
  ];
  for (const args of commands) {
    const r = run(args, cwd);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.ok(r.stderr.includes(`no store at ${join(cwd, 'data/gateway.db')}`), `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /--db FILE\|URL or GATEWAY_DB/);
    assert.equal(r.stdout, '', `${args.join(' ')}: no key, no list`);
  }
  assert.deepEqual(readdirSync(cwd), []);
});

test('tokens create checks the group against the config it found: --config over GATEWAY_CONFIG_DIR over the current directory', () => {
  const cwd = emptyDir('groups');
  const db = join(cwd, 'tokens.db');
  // GATEWAY_CONFIG_DIR names the shipped config, which has no group team: refused, naming the config read.
  const refused = run(['tokens', 'create', '--group', 'team', '--db', db], cwd, { GATEWAY_CONFIG_DIR: PROJECT_ROOT });
  assert.equal(refused.status, 2, refused.stderr);
  assert.match(refused.stderr, /group "team" is not declared/);
  assert.ok(refused.stderr.includes(`${PROJECT_ROOT} (from GATEWAY_CONFIG_DIR)`), refused.stderr);
  assert.equal(refused.stdout, '');
  assert.equal(existsSync(db), false, 'a refused command makes no store');
  // --config wins over the variable; the flags go before or after the subcommand.
  const made = run(['tokens', '--config', teamConfig, 'create', '--group', 'team', '--name', 'a', `--db=${db}`], cwd, { GATEWAY_CONFIG_DIR: PROJECT_ROOT });
  assert.equal(made.status, 0, made.stderr);
  assert.match(made.stdout, /^gw-/);
  // A store the operator named is made, and the command says so.
  assert.ok(made.stderr.includes(`no store at ${db} (from --db) yet: making a new one there`), made.stderr);
  // Without either, the current directory is the config.
  const here = run(['tokens', 'create', '--group', 'team', '--name', 'b'], teamConfig, { GATEWAY_DB: db });
  assert.equal(here.status, 0, here.stderr);
  // --db wins over GATEWAY_DB.
  const listed = run(['tokens', 'list', '--db', db], cwd, { GATEWAY_DB: join(cwd, 'other.db') });
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(
    listed.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('  ').slice(1, 3).join(' '))
      .sort(),
    ['a group=team', 'b group=team'],
  );
  assert.equal(existsSync(join(cwd, 'other.db')), false);
  // groups reads the same two places.
  const groups = run(['groups', '--db', db], teamConfig);
  assert.equal(groups.status, 0, groups.stderr);
  assert.match(groups.stdout, /^team {2}.*tokens=2 \(2 active\)$/m);
});

test('check with no directory checks the config start would serve, and says which directory it read', () => {
  const broken = join(PROJECT_ROOT, 'test/fixtures/config/unknown-profile');
  // The current directory.
  const here = run(['check'], broken);
  assert.equal(here.status, 1, here.stdout);
  assert.ok(here.stdout.startsWith(`config: ${broken} (the current directory`), here.stdout);
  assert.match(here.stdout, /^channels\.yaml:\d+:\d+: unknown profile/m);
  // GATEWAY_CONFIG_DIR over the current directory.
  const fromEnv = run(['check'], broken, { GATEWAY_CONFIG_DIR: teamConfig });
  assert.equal(fromEnv.status, 0, fromEnv.stdout);
  assert.ok(fromEnv.stdout.startsWith(`config: ${teamConfig} (from GATEWAY_CONFIG_DIR)\n`), fromEnv.stdout);
  assert.match(fromEnv.stdout, /^ok: \d+ route\(s\)/m);
  // --config over GATEWAY_CONFIG_DIR; the directory as an argument is the same.
  for (const args of [
    ['check', '--config', broken],
    ['check', broken],
  ]) {
    const r = run(args, root, { GATEWAY_CONFIG_DIR: teamConfig });
    assert.equal(r.status, 1, r.stdout);
    assert.ok(r.stdout.startsWith(`config: ${broken} (from `), r.stdout);
  }
  const both = run(['check', '--config', broken, broken], root);
  assert.equal(both.status, 2);
  assert.match(both.stderr, /name the directory once/);
});

test('sims --config prints the variables of that config, from any directory', async () => {
  const sims = startProcess(process.execPath, [CLI, 'sims', '--config', teamConfig], { cwd: emptyDir('sims'), env: cleanEnv() });
  try {
    await sims.waitFor(/ready \(SIGINT or SIGTERM stops them\)/);
    assert.match(sims.output(), /^ALPHA_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/m);
    assert.ok(sims.output().includes(`the variables above are for the channels of ${teamConfig} (from --config)`), sims.output());
  } finally {
    assert.equal(await sims.stop(), 0);
  }
});

test('start makes the store at its first start and logs where; the next start finds it', async () => {
  const cwd = emptyDir('start-store');
  const gw = startProcess(process.execPath, [CLI, 'start', '--config', teamConfig], {
    cwd,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', GATEWAY_WATCH: '0' }),
  });
  try {
    await gw.waitFor(/"msg":"gateway listening"/);
    assert.match(gw.output(), /"msg":"no store was there: made a new one"/);
    assert.ok(gw.output().includes(`"store":"${join(cwd, 'data/gateway.db')}"`), gw.output());
  } finally {
    assert.equal(await gw.stop(), 0);
  }
  const again = startProcess(process.execPath, [CLI, 'start', '--db', 'data/gateway.db'], {
    cwd,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', GATEWAY_WATCH: '0', GATEWAY_CONFIG_DIR: teamConfig }),
  });
  try {
    await again.waitFor(/"msg":"gateway listening"/);
    assert.doesNotMatch(again.output(), /no store was there/);
  } finally {
    assert.equal(await again.stop(), 0);
  }
});

test('--help says the rule', () => {
  const r = run(['--help'], root);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /--config DIR \(else \$GATEWAY_CONFIG_DIR, else the current\s+directory\)/);
  assert.match(r.stdout, /--db FILE\|URL \(else \$GATEWAY_DB, else data\/gateway\.db of the current\s+directory\)/);
});
