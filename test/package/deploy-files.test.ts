/**
 * The Dockerfile, compose.yaml and deploy/gateway.service say what the package test runs. No image
 * can be built here (no Docker daemon) and no unit started (no systemd), so these fail when a file
 * drifts from the one list of steps (test/helpers/install-steps.ts) that
 * test/package/package.test.ts runs for real, or from each other.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { DEFAULT_DRAIN_MS } from '../../src/http/drain.js';
import { composeFile, dockerfile, execForm, finalEnv, last, runCommands, systemdUnit } from '../helpers/deploy-files.js';
import { fill, LAYOUT, STEPS, words } from '../helpers/install-steps.js';

const steps = dockerfile();
const finalStage = Math.max(...steps.map((i) => i.stage));
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string };
/** What the Dockerfile fills the steps' placeholders with. */
const IMAGE = { pack: '/pack', tarball: `/pack/${pkg.name}-*.tgz`, config: LAYOUT.config };
const START = words(fill(STEPS.start, IMAGE));

/** Seconds of a systemd or compose duration ("30", "30s", "1m30s"). */
function seconds(d: string): number {
  const parts = [...d.matchAll(/(\d+)\s*(ms|s|m|h)?/g)];
  assert.ok(parts.length > 0, `not a duration: ${d}`);
  return parts.reduce((n, [, v = '0', unit = 's']) => n + Number(v) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit as 'ms' | 's' | 'm' | 'h'], 0);
}

test('the Dockerfile runs the package steps, in order: build and pack in the first stage, install and init in the last', () => {
  const ours = (stage: (s: number) => boolean) =>
    runCommands(steps.filter((i) => stage(i.stage))).filter((c) => c.startsWith('npm ') || c.startsWith('gateway '));
  // The first stage runs these and nothing else.
  assert.deepEqual(
    runCommands(steps.filter((i) => i.stage === 0)),
    STEPS.build.map((s) => fill(s, IMAGE)),
  );
  assert.deepEqual(
    ours((s) => s === finalStage),
    STEPS.install.map((s) => fill(s, IMAGE)),
  );
  assert.equal(ours((s) => s !== 0 && s !== finalStage).length, 0, 'npm or gateway commands in a stage between');
});

test('the image starts the package step: ENTRYPOINT and CMD in exec form, so the gateway is PID 1 and gets SIGTERM itself', () => {
  const entry = execForm(last(steps, 'ENTRYPOINT')?.args ?? 'null');
  const cmd = execForm(last(steps, 'CMD')?.args ?? 'null');
  assert.deepEqual([...entry, ...cmd], START);
  assert.equal(last(steps, 'STOPSIGNAL')?.args, 'SIGTERM');
  assert.match(last(steps, 'HEALTHCHECK')?.args ?? '', /\bCMD \["node", "-e", .*\/healthz/, 'a HEALTHCHECK of /healthz with node (the slim image has no curl)');
});

test('the image has the layout of the service unit: install dir, non-root user, config and data directories', () => {
  const final = steps.filter((i) => i.stage === finalStage);
  const installAt = final.findIndex((i) => i.keyword === 'RUN' && i.args.startsWith('npm install'));
  assert.equal(final.filter((i, n) => i.keyword === 'WORKDIR' && n < installAt).at(-1)?.args, LAYOUT.install, 'the package is installed in LAYOUT.install');
  const env = finalEnv(final);
  assert.ok(env.PATH?.startsWith(`${LAYOUT.install}/node_modules/.bin:`), 'the installed bin is on PATH');
  assert.equal(env.GATEWAY_CONFIG_DIR, LAYOUT.config);
  assert.equal(env.GATEWAY_DB, LAYOUT.store);
  assert.equal(last(final, 'USER')?.args, LAYOUT.user);
  assert.ok(
    runCommands(final).some((c) => c.startsWith('useradd ') && c.endsWith(` ${LAYOUT.user}`) && c.includes(`--home-dir ${LAYOUT.data}`)),
    'the user is made, at home in the data directory',
  );
  assert.ok(runCommands(final).includes(`chown ${LAYOUT.user}:${LAYOUT.user} ${LAYOUT.data}`), 'the data directory is the user’s');
  assert.equal(last(final, 'VOLUME')?.args, LAYOUT.data);
  const ignored = readFileSync(join(PROJECT_ROOT, '.dockerignore'), 'utf8').split('\n');
  for (const p of ['node_modules', 'dist', 'data', '.env']) assert.ok(ignored.includes(p), `.dockerignore leaves ${p} in the build context`);
});

test('deploy/gateway.service has the settings of the image', () => {
  const unit = systemdUnit();
  const service = unit.get('Service');
  assert.ok(service, 'a [Service] section');
  const one = (k: string) => {
    const v = service.get(k);
    assert.equal(v?.length, 1, `${k}= once`);
    return v?.[0] ?? '';
  };
  assert.equal(one('User'), last(steps, 'USER')?.args);
  assert.deepEqual(one('ExecStart').split(' '), [`${LAYOUT.install}/node_modules/.bin/${START[0]}`, ...START.slice(1)]);
  const env = Object.fromEntries((service.get('Environment') ?? []).map((e) => e.split('=', 2) as [string, string]));
  const image = finalEnv(steps.filter((i) => i.stage === finalStage));
  assert.equal(env.GATEWAY_CONFIG_DIR, image.GATEWAY_CONFIG_DIR);
  assert.equal(env.GATEWAY_DB, image.GATEWAY_DB);
  assert.equal(`/var/lib/${one('StateDirectory')}`, LAYOUT.data);
  assert.equal(one('WorkingDirectory'), LAYOUT.data);
  assert.equal(one('EnvironmentFile'), `-${LAYOUT.config}/.env`);
  assert.equal(one('KillSignal'), last(steps, 'STOPSIGNAL')?.args);
  assert.ok(seconds(one('TimeoutStopSec')) > DEFAULT_DRAIN_MS / 1000, 'systemd waits longer than the drain before SIGKILL');
  assert.equal(one('Restart'), 'on-failure');
  // The install it describes in its comment is the package's.
  const text = readFileSync(join(PROJECT_ROOT, 'deploy/gateway.service'), 'utf8');
  const tarball = `./${pkg.name}-<version>.tgz`;
  for (const step of STEPS.install) assert.ok(text.includes(fill(step, { tarball, config: LAYOUT.config })), `the unit's install comment lacks: ${step}`);
});

test('compose.yaml: two replicas of the image on PostgreSQL and Redis, the simulators under the demo profile', () => {
  const { services, volumes } = composeFile();
  const gateways = Object.entries(services).filter(([, s]) => Array.isArray(s.command) && s.profiles === undefined);
  assert.equal(gateways.length, 2, 'two gateway replicas');
  const image = gateways[0]?.[1].image;
  for (const [name, s] of gateways) {
    assert.equal(s.image, image, `${name}: one image`);
    // The entrypoint reads the simulators' variables when present, then execs the image's own command.
    const entry = s.entrypoint as string[];
    assert.match(entry.at(-2) ?? '', /exec gateway "\$\$@"$/, `${name}: the shell execs the gateway (SIGTERM reaches it)`);
    assert.deepEqual(['gateway', ...(s.command as string[])], START, `${name}: the image's start command`);
    const env = s.environment as Record<string, string>;
    assert.match(env.GATEWAY_DB ?? '', /^postgres:\/\/[^@]+@postgres:5432\//, `${name}: GATEWAY_DB is the postgres service`);
    assert.match(env.GATEWAY_REDIS ?? '', /^redis:\/\/redis:6379$/, `${name}: GATEWAY_REDIS is the redis service`);
    assert.ok(seconds(String(s.stop_grace_period)) > DEFAULT_DRAIN_MS / 1000, `${name}: compose waits longer than the drain`);
    const deps = s.depends_on as Record<string, { condition: string; required?: boolean }>;
    assert.equal(deps.postgres?.condition, 'service_healthy');
    assert.equal(deps.redis?.condition, 'service_healthy');
    assert.deepEqual(deps.sims, { condition: 'service_healthy', required: false }, `${name}: waits for the simulators only when the demo runs them`);
  }
  const sims = services.sims;
  assert.ok(sims, 'a sims service');
  assert.deepEqual(sims.profiles, ['demo']);
  assert.equal(sims.image, image);
  const simsCommand = (sims.entrypoint as string[]).join(' ');
  const [, host, envFile] = /gateway sims --host (\S+) > (\S+)'?$/.exec(simsCommand) ?? [];
  assert.equal(host, sims.hostname, 'the simulators listen on, and name, the host the replicas reach');
  for (const [name, s] of gateways)
    assert.ok(envFile && (s.entrypoint as string[]).join(' ').includes(`. ${envFile};`), `${name} reads the file the simulators write`);
  assert.ok(services.postgres && services.redis);
  assert.ok(volumes && 'sims-env' in volumes);
});

test('docs/deploying.md shows the steps, the layout and the unit the files use', () => {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs/deploying.md'), 'utf8');
  const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  const install = fill(STEPS.install[0], { tarball: `./${pkg.name}-${version}.tgz` });
  assert.equal(doc.split(install).length - 1, 2, `the Package and systemd sections install with: ${install}`);
  assert.ok(doc.includes(`npx ${fill(STEPS.install[1], { config: 'mydir' })}`) && doc.includes(`npx ${fill(STEPS.start, { config: 'mydir' })}`));
  const exec = systemdUnit().get('Service')?.get('ExecStart')?.[0] ?? '';
  assert.ok(doc.includes(`\`${exec}\``), `the systemd table shows ExecStart=${exec}`);
  assert.ok(doc.includes(`node_modules/.bin/${fill(STEPS.install[1], { config: LAYOUT.config })}`));
  for (const path of [LAYOUT.install, LAYOUT.config, LAYOUT.store])
    assert.ok(doc.includes(`\`${path}\``) || doc.includes(`=${path}\``), `the image table names ${path}`);
  const cmd = [...execForm(last(steps, 'ENTRYPOINT')?.args ?? 'null'), ...execForm(last(steps, 'CMD')?.args ?? 'null')];
  assert.ok(doc.includes(`\`ENTRYPOINT ${JSON.stringify(cmd.slice(0, 1))}\`, \`CMD ${JSON.stringify(cmd.slice(1)).replace(/","/g, '", "')}\``));
});
