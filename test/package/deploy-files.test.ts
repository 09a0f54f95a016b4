/**
 * The Dockerfile, compose.yaml and deploy/gateway.service say what the package test runs. No image
 * can be built here (no Docker daemon) and no unit started (no systemd), so these fail when a file
 * drifts from the one list of steps (test/helpers/install-steps.ts) that
 * test/package/package.test.ts runs for real, or from each other.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { DEFAULT_DRAIN_MS } from '../../src/http/drain.js';
import { composeFile, dockerfile, dockerHealthcheck, execForm, finalEnv, last, runCommands, systemdUnit } from '../helpers/deploy-files.js';
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
  // Exit 2 is a configuration or a setting that cannot work: restarted, it would fail every RestartSec for ever.
  assert.equal(one('RestartPreventExitStatus'), '2');
  // The store (key hashes, the ledger) and every other file the gateway makes are its user's alone.
  assert.equal(one('UMask'), '0077');
  assert.equal(one('StateDirectoryMode'), '0700');
  assert.equal(one('NoNewPrivileges'), 'yes');
  assert.equal(one('CapabilityBoundingSet'), '', 'no capability');
  assert.equal(one('SystemCallErrorNumber'), 'EPERM', 'a call outside the filter fails rather than killing the gateway');
  // The install it describes in its comment is the package's.
  const text = readFileSync(join(PROJECT_ROOT, 'deploy/gateway.service'), 'utf8');
  const tarball = `./${pkg.name}-<version>.tgz`;
  for (const step of STEPS.install) assert.ok(text.includes(fill(step, { tarball, config: LAYOUT.config })), `the unit's install comment lacks: ${step}`);
});

const analyze = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', join(PROJECT_ROOT, 'deploy/gateway.service')], {
  encoding: 'utf8',
  timeout: 30_000,
});
test('systemd-analyze security scores deploy/gateway.service as docs/deploying.md says', {
  skip:
    analyze.status !== 0 && `systemd-analyze security --offline=yes cannot run here: ${(analyze.stderr ?? analyze.error?.message ?? '').trim().slice(0, 120)}`,
}, () => {
  const [, score = '', level = ''] = /Overall exposure level for gateway\.service: (\d+\.\d) (\w+)/.exec(analyze.stdout) ?? [];
  assert.ok(score, analyze.stdout.slice(-500));
  const doc = readFileSync(join(PROJECT_ROOT, 'docs/deploying.md'), 'utf8');
  assert.ok(doc.includes(`\`systemd-analyze security\`: ${score} ${level}`), `docs/deploying.md gives the score ${score} ${level}`);
  assert.ok(Number(score) <= 2, `exposure ${score}`);
});

test('compose.yaml: two replicas of the image on PostgreSQL and Redis, started as the image starts them, with its healthcheck', () => {
  const { services, volumes } = composeFile();
  const gateways = Object.entries(services).filter(([, s]) => Array.isArray(s.command));
  assert.deepEqual(
    gateways.map(([name]) => name),
    ['gateway-1', 'gateway-2'],
    'two gateway replicas',
  );
  const image = gateways[0]?.[1].image;
  const [node, flag, script = ''] = dockerHealthcheck();
  const imageCheck = /--interval=(\S+) --timeout=(\S+) --start-period=(\S+) --retries=(\d+)/.exec(last(steps, 'HEALTHCHECK')?.args ?? '');
  assert.ok(imageCheck, "the Dockerfile's HEALTHCHECK names its interval, timeout, start period and retries");
  for (const [name, s] of gateways) {
    assert.equal(s.image, image, `${name}: one image`);
    assert.equal(s.build, '.', `${name}: built from this Dockerfile`);
    // No entrypoint of its own: the image's, in exec form, so the gateway is PID 1 and gets SIGTERM.
    assert.equal(s.entrypoint, undefined, `${name}: the image's entrypoint`);
    assert.deepEqual([...execForm(last(steps, 'ENTRYPOINT')?.args ?? 'null'), ...(s.command as string[])], START, `${name}: the image's start command`);
    const env = s.environment as Record<string, string>;
    assert.match(env.GATEWAY_DB ?? '', /^postgres:\/\/[^@]+@postgres:5432\//, `${name}: GATEWAY_DB is the postgres service`);
    assert.match(env.GATEWAY_REDIS ?? '', /^redis:\/\/redis:6379$/, `${name}: GATEWAY_REDIS is the redis service`);
    assert.ok(seconds(String(s.stop_grace_period)) > DEFAULT_DRAIN_MS / 1000, `${name}: compose waits longer than the drain`);
    assert.deepEqual(s.depends_on, { postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    // The Dockerfile's HEALTHCHECK said again: an OCI image (podman build's default) drops it. As a
    // shell command: podman-compose 1.0.3 mangles a CMD list whose words hold quotes.
    assert.equal(node, 'node');
    assert.equal(flag, '-e');
    assert.doesNotMatch(script, /["$\\]/, 'the check script holds nothing a shell would read inside double quotes');
    assert.deepEqual(
      s.healthcheck,
      {
        test: ['CMD-SHELL', `node -e "${script}"`],
        interval: imageCheck[1],
        timeout: imageCheck[2],
        start_period: imageCheck[3],
        retries: Number(imageCheck[4]),
      },
      `${name}: the healthcheck of the Dockerfile`,
    );
  }
  assert.ok(services.postgres && services.redis);
  // The simulators are compose.demo.yaml's alone: without it nothing points a replica at them.
  assert.doesNotMatch(JSON.stringify({ services, volumes }), /sims/);
});

test('compose.yaml and compose.demo.yaml use only what Docker Compose v2 and podman-compose 1.0.3 both read', () => {
  for (const file of ['compose.yaml', 'compose.demo.yaml']) {
    const { services } = composeFile(file);
    for (const [name, s] of Object.entries(services)) {
      const where = `${file}: ${name}`;
      // podman-compose 1.0.3 ignores profiles: a profiled service would start at every `up`.
      assert.equal(s.profiles, undefined, `${where}: profiles`);
      // The long form ({path, required}, Compose 2.24) crashes podman-compose 1.0.3.
      if (s.env_file !== undefined)
        assert.ok(
          [s.env_file].flat().every((e) => typeof e === 'string'),
          `${where}: env_file in the short form`,
        );
      // `required` and `restart` of depends_on are Compose 2.20 and later; a condition is read by both (podman-compose waits for none).
      for (const [dep, d] of Object.entries((s.depends_on ?? {}) as Record<string, object>))
        assert.deepEqual(Object.keys(d), ['condition'], `${where}: depends_on.${dep}`);
      // podman-compose 1.0.3 joins the words of a CMD list into one shell word: only plain words survive.
      const check = (s.healthcheck as { test?: string[] } | undefined)?.test ?? [];
      if (check[0] === 'CMD') for (const w of check.slice(1)) assert.match(w, /^[\w=/.:-]+$/, `${where}: healthcheck word ${w}`);
      else if (check.length > 0) assert.equal(check[0], 'CMD-SHELL', `${where}: healthcheck`);
    }
  }
});

test('compose.demo.yaml: the simulators, and each replica reading their variables before it execs the gateway', () => {
  const base = composeFile();
  const { services, volumes } = composeFile('compose.demo.yaml');
  const gateways = Object.keys(base.services).filter((n) => Array.isArray(base.services[n]?.command));
  const sims = services.sims;
  assert.ok(sims, 'a sims service');
  assert.equal(sims.image, base.services[gateways[0] ?? '']?.image, 'the simulators run from the replicas’ image');
  const [, host, envFile = ''] = /exec gateway sims --host (\S+) > (\S+)$/.exec((sims.entrypoint as string[]).join(' ')) ?? [];
  assert.equal(host, sims.hostname, 'the simulators listen on, and name, the host the replicas reach');
  assert.deepEqual((sims.healthcheck as { test: string[] }).test, ['CMD', 'grep', '-q', '_BASE_URL=', envFile]);
  assert.deepEqual(Object.keys(services).sort(), ['sims', ...gateways].sort(), 'the replicas of compose.yaml and the simulators, nothing else');
  const dir = envFile.slice(0, envFile.lastIndexOf('/'));
  for (const name of gateways) {
    const s = services[name];
    assert.ok(s, `${name} reads the simulators' variables`);
    // Only what it adds: the image, the command and the rest stay compose.yaml's.
    assert.deepEqual(Object.keys(s).sort(), ['depends_on', 'entrypoint', 'volumes']);
    const entry = s.entrypoint as string[];
    assert.deepEqual(entry.slice(0, 2), ['/bin/sh', '-c']);
    assert.equal(entry.at(-1), 'gateway', "$0 of the shell; compose.yaml's command is its $@");
    assert.match(entry[2] ?? '', new RegExp(`until grep -qs _BASE_URL= ${envFile};.*\\. ${envFile};.*exec gateway "\\$\\$@"$`), `${name}: waits, reads, execs`);
    assert.deepEqual(s.volumes, [`sims-env:${dir}:ro`]);
    assert.deepEqual(s.depends_on, { sims: { condition: 'service_healthy' } });
  }
  assert.deepEqual(sims.volumes, [`sims-env:${dir}`]);
  assert.ok(volumes && 'sims-env' in volumes);
});

test("the demo replicas' entrypoint, run by sh: it waits for the file, reads it, and the gateway replaces the shell", async () => {
  const { services } = composeFile('compose.demo.yaml');
  const [, , script = ''] = (services['gateway-1']?.entrypoint ?? []) as string[];
  const dir = mkdtempSync(join(tmpdir(), 'gateway-compose-'));
  try {
    const envFile = join(dir, 'sims.env');
    // As compose hands it over ($$ is a $), reading a file of this test's; `gateway` a stand-in that says who it is.
    const shell = script.replaceAll('$$', '$').replaceAll('/run/sims/sims.env', envFile);
    writeFileSync(join(dir, 'gateway'), '#!/bin/sh\necho "pid $$ args $* alpha $ALPHA_BASE_URL"\n', { mode: 0o755 });
    const child = spawn('/bin/sh', ['-c', shell, 'gateway', ...START.slice(1)], { env: { PATH: `${dir}:/usr/bin:/bin` } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(child.exitCode, null, `it did not wait for the file:\n${out}`);
    writeFileSync(envFile, 'ALPHA_BASE_URL=http://sims:4001\n');
    assert.equal(await exited, 0, out);
    assert.equal(
      out,
      `pid ${child.pid} args ${START.slice(1).join(' ')} alpha http://sims:4001\n`,
      'the gateway is the shell’s process, with the command and the variables',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const podmanCompose = spawnSync('podman-compose', ['version'], { encoding: 'utf8' });
test('podman-compose reads both files (a dry run: every podman command printed, none run)', {
  skip: podmanCompose.status !== 0 && 'podman-compose is not installed (Debian: apt-get install podman-compose)',
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-podman-compose-'));
  try {
    for (const f of ['compose.yaml', 'compose.demo.yaml']) copyFileSync(join(PROJECT_ROOT, f), join(dir, f));
    writeFileSync(join(dir, '.env'), 'POSTGRES_PASSWORD=letters0and0digits\n');
    const up = (...files: string[]) => {
      const r = spawnSync('podman-compose', ['--dry-run', '--podman-path', '/bin/true', ...files.flatMap((f) => ['-f', f]), 'up', '--no-build', '-d'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 0, `podman-compose ${files.join(' ')}:\n${r.stdout}\n${r.stderr}`);
      return r.stdout.split('\n').filter((l) => / run --name=/.test(l));
    };
    const plain = up('compose.yaml');
    assert.equal(plain.length, 4, plain.join('\n'));
    assert.ok(!plain.some((l) => l.includes('sims')), 'no simulators without compose.demo.yaml');
    for (const l of plain.filter((x) => /--name=\S+_gateway-\d/.test(x))) {
      assert.ok(l.includes(`--env-file ${join(dir, '.env')}`), l);
      assert.ok(l.includes('--healthcheck-command') && l.includes('/healthz'), l);
      assert.ok(l.endsWith(`generation-gateway:local ${START.slice(1).join(' ')}`), l);
    }
    const demo = up('compose.yaml', 'compose.demo.yaml');
    assert.equal(demo.length, 5, demo.join('\n'));
    const simsAt = demo.findIndex((l) => /--name=\S+_sims_/.test(l));
    assert.ok(simsAt !== -1, 'the simulators start');
    for (const [n, l] of demo.entries())
      if (/--name=\S+_gateway-\d/.test(l)) {
        assert.ok(n > simsAt, 'after the simulators');
        assert.match(l, /--entrypoint \["\/bin\/sh", "-c", "n=0; until grep/);
        assert.match(l, /-v \S+_sims-env:\/run\/sims:ro/);
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
