#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { settingsFromEnv, startApp, type App } from './app.js';
import { formatIssue } from './config/issues.js';
import { explainModel } from './config/explain.js';
import { CATALOGUE_END, CATALOGUE_START, renderCatalogue, withCatalogue } from './config/catalogue.js';
import { loadConfig } from './config/load.js';
import { PROJECT_ROOT } from './config/paths.js';
import { runGolden } from './golden/runner.js';
import { createLogger } from './log.js';
import type { Simulator } from './sim/http.js';
import { SIMULATORS } from './sim/registry.js';
import { simulatorEnv } from './sim/sim-env.js';
import { openStore } from './store/open-store.js';
import { generateKey, hashKey } from './tokens/keys.js';

const USAGE = `usage: gateway <command>
  start                         serve with the config of $GATEWAY_CONFIG_DIR (default: .)
  demo                          serve with simulated vendors behind every channel lacking credentials
  sims [--finish-ms N]          run every simulated vendor in this process until stopped; print the channel
                                variables (NAME=value) that point the configured channels at them
  check [dir]                   validate routes.yaml and channels.yaml; exit 1 on errors
  tokens create --group G [--quota N] [--models a,b] [--name NAME]
                                create an API key (printed once; only its hash is stored)
  tokens list                   list tokens (never their keys)
  explain <model> [--group G]   show the routes and channels that would serve a model
  golden [--update] [filter]    run the golden cases of test/golden
  catalogue [--write]           print the family catalogue from the config (--write: into README.md)
settings (environment): PORT (8080), HOST, GATEWAY_CONFIG_DIR (.), GATEWAY_CONFIG_EXTRA, GATEWAY_DB (data/gateway.db, or postgres://…), LOG_LEVEL (info),
  GATEWAY_REDIS (redis://…: replicas share limits, breakers, token changes, reloads), GATEWAY_REDIS_PREFIX (gateway:),
  GATEWAY_REPLICA_ID, GATEWAY_TASK_LEASE_MS (30000), GATEWAY_AUTH_CACHE_MS (5000; 1000 on PostgreSQL),
  GATEWAY_ADMIN_KEY (unset: /admin and /metrics closed; demo makes one), GATEWAY_WATCH (1; 0: no reload on file changes),
  GATEWAY_RELOAD_DEBOUNCE_MS (200), GATEWAY_BODY_BUDGET_MB (heap limit / 12), GATEWAY_HEADERS_TIMEOUT_MS (30000),
  GATEWAY_REQUEST_TIMEOUT_MS (300000)
signals: SIGHUP reloads the configuration; SIGINT and SIGTERM stop`;

/** Flags that take no value, so `--update filter` keeps `filter` positional. */
const BOOLEAN_FLAGS = new Set(['update']);

function flags(args: string[]): { positional: string[]; named: Record<string, string | true> } {
  const positional: string[] = [];
  const named: Record<string, string | true> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const next = args[i + 1];
    if (!BOOLEAN_FLAGS.has(a.slice(2)) && next !== undefined && !next.startsWith('--')) {
      named[a.slice(2)] = next;
      i++;
    } else named[a.slice(2)] = true;
  }
  return { positional, named };
}

function fail(message: string): never {
  process.stderr.write(`gateway: ${message}\n`);
  process.exit(2);
}

function stopOnSignals(app: App): void {
  const stop = () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // The reload logs its own outcome; a bad file keeps the running configuration.
  process.on('SIGHUP', () => void app.config.reload('SIGHUP'));
}

async function serve(simulate: boolean): Promise<void> {
  const log = createLogger();
  const fromEnv = settingsFromEnv(process.env, simulate ? { host: '127.0.0.1' } : {});
  // The demo opens the admin routes with a fresh key unless one is given; `start` keeps them closed without one.
  const settings = simulate && fromEnv.adminKey === null ? { ...fromEnv, adminKey: `gwadmin-${randomBytes(24).toString('base64url')}` } : fromEnv;
  let app: App;
  try {
    app = await startApp(settings, log, { simulate });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') fail(`port ${settings.port} on ${settings.host} is already in use; choose another with PORT=…`);
    fail((err as Error).message);
  }
  stopOnSignals(app);
  const base = `http://${settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host}:${app.port}`;
  if (!simulate) {
    log.info({ url: base, admin: settings.adminKey !== null, watching: app.config.status().watching }, 'gateway listening');
    return;
  }
  const key = process.env.GATEWAY_DEMO_KEY || generateKey();
  const hash = hashKey(key);
  if (!(await app.store.findTokenByHash(hash))) {
    await app.store.deleteTokensNamed('demo');
    await app.store.createToken({ name: 'demo', keyHash: hash, group: 'default', models: null, quota: null });
  }
  const examples = app.snapshot.routes.filter((r) => r.example)
    .map((r) => {
      const data = r.example!.body === undefined ? '' : ` \\\n    -H "Content-Type: application/json" -d '${JSON.stringify(r.example!.body).replace(/'/g, "'\\''")}'`;
      // Quoted: an example's query (`?Action=…&Version=…`) would otherwise end the command at `&`.
      return `  curl -s -X ${r.method} '${base}${r.example!.path}' \\\n    -H "Authorization: Bearer ${key}"${data}`;
    });
  process.stdout.write(
    [
      '',
      `Generation Gateway demo listening on ${base}`,
      `Simulated vendors: ${app.simulators.map((s) => `${s.profile} at ${s.url}`).join(', ') || 'none'}`,
      `API key: ${key}`,
      `Admin key: ${settings.adminKey}`,
      '',
      ...(examples.length > 0 ? ['Try:', ...examples] : []),
      ...(app.snapshot.routes.some((r) => r.kind === 'task-submit')
        ? [
            '',
            'A task answers its id at once; follow it and download the result when it is completed:',
            `  curl -s ${base}/v1/videos/<id> -H "Authorization: Bearer ${key}"`,
            `  curl -s ${base}/v1/videos/<id>/content -H "Authorization: Bearer ${key}" -o video.mp4`,
          ]
        : []),
      '',
      'Operators: channel state, the configuration, and a reload after editing channels.yaml (saving reloads too):',
      `  curl -s ${base}/admin/channels -H "Authorization: Bearer ${settings.adminKey}"`,
      `  curl -s ${base}/admin/config -H "Authorization: Bearer ${settings.adminKey}"`,
      `  curl -s -X POST ${base}/admin/reload -H "Authorization: Bearer ${settings.adminKey}"`,
      '',
    ].join('\n') + '\n',
  );
}

/**
 * Every simulator in one process, shared by several gateways (replicas, staging, a benchmark):
 * stdout gets the channel variables, one `NAME=value` per line, then stderr says it is ready.
 */
async function sims(named: Record<string, string | true>): Promise<void> {
  let finishMs: number | undefined;
  if (named['finish-ms'] !== undefined) {
    finishMs = Number(named['finish-ms']);
    if (!Number.isSafeInteger(finishMs) || finishMs < 0 || finishMs > 3_600_000) fail('--finish-ms takes whole milliseconds from 0 to 3600000');
  }
  const started = new Map<string, Simulator>();
  for (const [profile, start] of Object.entries(SIMULATORS)) started.set(profile, await start({ finishMs }));
  const settings = settingsFromEnv();
  const env = simulatorEnv([settings.configDir, ...settings.extraConfigDirs], started);
  process.stdout.write(Object.keys(env).sort().map((name) => `${name}=${env[name]}\n`).join(''));
  process.stderr.write(`gateway sims: ${[...started.values()].map((s) => `${s.profile} at ${s.url}`).join(', ')}; ready (SIGINT or SIGTERM stops them)\n`);
  const stop = () => {
    Promise.all([...started.values()].map((s) => s.close())).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function check(dir: string): Promise<void> {
  const { snapshot, issues } = loadConfig(resolve(dir), { extraDirs: settingsFromEnv().extraConfigDirs });
  for (const i of issues) process.stdout.write(formatIssue(i) + '\n');
  const errors = issues.filter((i) => i.severity === 'error').length;
  if (!snapshot || errors > 0) {
    process.stdout.write(`${errors} error(s)\n`);
    process.exit(1);
  }
  process.stdout.write(`ok: ${snapshot.routes.length} route(s), ${snapshot.profiles.size} profile(s), ${snapshot.channels.length} channel(s) serving, ${snapshot.leftOut.length} left out\n`);
}

async function tokens(sub: string | undefined, named: Record<string, string | true>): Promise<void> {
  const settings = settingsFromEnv();
  const store = await openStore(settings.storeUrl);
  try {
    if (sub === 'create') {
      const group = typeof named.group === 'string' ? named.group : 'default';
      const { snapshot } = loadConfig(settings.configDir, { extraDirs: settings.extraConfigDirs });
      if (snapshot && !snapshot.groups.has(group)) fail(`group "${group}" is not declared in channels.yaml (known: ${[...snapshot.groups].join(', ')})`);
      let quota: number | null = null;
      if (named.quota !== undefined) {
        quota = Number(named.quota);
        if (!Number.isSafeInteger(quota) || quota < 0) fail('--quota takes a whole number of units, 0 or more');
      }
      const models = typeof named.models === 'string' ? named.models.split(',').map((m) => m.trim()).filter(Boolean) : null;
      const key = generateKey();
      const token = await store.createToken({ name: typeof named.name === 'string' ? named.name : 'cli', keyHash: hashKey(key), group, models, quota });
      process.stderr.write(`created token ${token.id} (group ${group}, quota ${quota ?? 'unlimited'}); the key is shown once:\n`);
      process.stdout.write(`${key}\n`);
    } else if (sub === 'list') {
      for (const t of await store.listTokens()) {
        process.stdout.write(`${t.id}  ${t.name}  group=${t.group}  quota=${t.quota ?? 'unlimited'}  used=${t.used}${t.models ? `  models=${t.models.join(',')}` : ''}${t.disabled ? '  disabled' : ''}\n`);
      }
    } else fail(`unknown tokens command ${sub ?? ''}\n${USAGE}`);
  } finally {
    await store.close();
  }
}

async function explain(model: string | undefined, named: Record<string, string | true>): Promise<void> {
  if (!model) fail('usage: gateway explain <model> [--group G]');
  const settings = settingsFromEnv();
  const { snapshot, issues } = loadConfig(settings.configDir, { extraDirs: settings.extraConfigDirs });
  if (!snapshot) fail(`the configuration does not load; run gateway check\n${issues.map(formatIssue).join('\n')}`);
  const lines = explainModel(snapshot, model, typeof named.group === 'string' ? named.group : undefined);
  if (!lines) fail(`no route serves model ${model}`);
  process.stdout.write(lines.join('\n') + '\n');
  // Channels left out for unset variables are not in the snapshot; say so rather than hide them.
  for (const i of issues) process.stdout.write(formatIssue(i) + '\n');
}

async function golden(named: Record<string, string | true>, positional: string[]): Promise<void> {
  const results = await runGolden(PROJECT_ROOT, join(PROJECT_ROOT, 'test/golden'), { update: named.update === true, filter: positional[0] });
  for (const r of results) {
    process.stdout.write(`${r.ok ? (r.updated ? 'updated' : 'ok     ') : 'FAIL   '} ${r.name}\n`);
    if (r.diff) process.stdout.write(`${r.diff.replace(/^/gm, '        ')}\n`);
  }
  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  if (failed > 0) process.exit(1);
}

/** Prints the README's catalogue page from the config, or with --write puts it into README.md. */
async function catalogue(named: Record<string, string | true>): Promise<void> {
  const { snapshot, issues } = loadConfig(PROJECT_ROOT);
  if (!snapshot) fail(`the configuration does not load; run gateway check\n${issues.map(formatIssue).join('\n')}`);
  const page = renderCatalogue(snapshot);
  if (named.write !== true) return void process.stdout.write(page + '\n');
  const file = join(PROJECT_ROOT, 'README.md');
  const next = withCatalogue(readFileSync(file, 'utf8'), page);
  if (next === null) fail(`README.md has no catalogue markers (${CATALOGUE_START} … ${CATALOGUE_END})`);
  writeFileSync(file, next);
  process.stdout.write(`README.md: catalogue of ${snapshot.families.length} families written\n`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { positional, named } = flags(rest);
  switch (command) {
    case 'start':
      return serve(false);
    case 'demo':
      return serve(true);
    case 'sims':
      return sims(named);
    case 'check':
      return check(positional[0] ?? process.env.GATEWAY_CONFIG_DIR ?? '.');
    case 'tokens':
      return tokens(positional[0], named);
    case 'explain':
      return explain(positional[0], named);
    case 'golden':
      return golden(named, positional);
    case 'catalogue':
      return catalogue(named);
    default:
      process.stdout.write(USAGE + '\n');
      if (command !== undefined && command !== 'help' && command !== '--help') process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => fail((err as Error).stack ?? String(err)));
