#!/usr/bin/env node
import { existsSync } from 'node:fs';
import type { App } from './app.js';
import { CliExit, HelpAsked, parseCommand, usageError, usageOf, usageTable, wholeNumber, type UsageEntry } from './cli/args.js';
import { requireCheckout } from './cli/checkout-only.js';
import { GROUPS_USAGE, groupsCommand } from './cli/groups-command.js';
import { INIT_USAGE, initCommand } from './cli/init-command.js';
import { packageVersion } from './cli/package-info.js';
import { tokensCommand, TOKENS_USAGE } from './cli/tokens-commands.js';
import { webhooksCommand, WEBHOOKS_USAGE } from './cli/webhooks-commands.js';
import { REPORT_FLAGS, reportLines, reportMode } from './cli/check-command.js';
import { CONFIG_FLAG, configPlace, configWords, PLACE_FLAGS, placedEnv, PLACES_HELP, requireConfig, storePlace } from './cli/locate.js';
import { settingsHelp } from './cli/settings-help.js';
import { formatIssue } from './config/issues.js';
import { PROJECT_ROOT } from './config/paths.js';
import type { Simulator } from './sim/http.js';
import { trimHeapWhenIdle } from './heap-trim.js';

// Each command imports what it runs on only once its arguments parsed: a usage error or --help
// answers at once, without loading the engine (about a second of start-up).

/** The forms of every command but tokens' (./cli/tokens-commands.ts), for the usage texts. */
const USAGE = {
  start: { synopsis: 'start [--config DIR] [--db FILE|URL]', about: 'serve the config of DIR on the store (made at the first start)' },
  demo: {
    synopsis: 'demo [--config DIR] [--db FILE|URL]',
    about: 'serve with simulated vendors behind every channel lacking credentials',
  },
  sims: {
    synopsis: 'sims [--config DIR] [--finish-ms N] [--host NAME]',
    about:
      'run every simulated vendor in this process until stopped; print the channel\nvariables (NAME=value) that point the configured channels at them\n(--host: listen on NAME and name it in the URLs; default 127.0.0.1)',
  },
  check: {
    synopsis: 'check [--config DIR | dir] [--verbose|--quiet]',
    about:
      'validate routes.yaml and channels.yaml of the config start would serve (or of dir);\nprint every error, then the warnings (unset variables in one line;\n--verbose: each; --quiet: none); exit 1 on errors',
  },
  explain: { synopsis: 'explain <model> [--config DIR] [--group G] [--verbose|--quiet]', about: 'show the routes and channels that would serve a model' },
  golden: { synopsis: 'golden [--update] [filter]', about: 'run the golden cases of test/golden and test/golden-made-up (those whose name contains filter)' },
  catalogue: { synopsis: 'catalogue [--write]', about: 'print the family catalogue of the shipped config (--write: into docs/generated/catalogue.md)' },
  openapi: { synopsis: 'openapi [--write]', about: 'print the OpenAPI document of the public routes (--write: into docs/generated/openapi.json)' },
  docs: {
    synopsis: 'docs [--write]',
    about: 'check that the generated documents of docs/generated/ are what the config makes;\n--write (npm run docs) rewrites them all',
  },
} as const satisfies Record<string, UsageEntry>;

const HELP = `usage: gateway <command>   (gateway <command> --help: that command alone; gateway --version)
${usageTable([INIT_USAGE, USAGE.start, USAGE.demo, USAGE.sims, USAGE.check, ...Object.values(TOKENS_USAGE), ...Object.values(WEBHOOKS_USAGE), GROUPS_USAGE, USAGE.explain, USAGE.golden, USAGE.catalogue, USAGE.openapi, USAGE.docs])}
Flags take their value as --flag value or --flag=value; an unknown flag or a missing value is an error (exit 2).
${PLACES_HELP}
${settingsHelp()}
signals: SIGHUP reloads the configuration (and the TLS certificate); SIGINT and SIGTERM stop`;

/** The command could not do its job (not a usage error): exit 2, as these commands always have. */
function fail(message: string): never {
  throw new CliExit(message, 2);
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
  // The reload logs its own outcome and is recorded in the audit log; a bad file keeps the running configuration.
  process.on('SIGHUP', () => {
    void app.reloadOnSignal();
    app.gateway.reloadTls();
  });
}

/** start and demo: the config and the store as every command finds them (./cli/locate.ts). */
async function serve(simulate: boolean, args: string[]): Promise<void> {
  const { values } = parseCommand(args, usageOf(simulate ? USAGE.demo : USAGE.start), PLACE_FLAGS);
  const config = configPlace(values.config);
  requireConfig(config);
  const store = storePlace(values.db);
  // The one command family that makes a store: the first start makes it, and says where.
  const making = store.file !== null && !existsSync(store.file);
  const [{ settingsFromEnv, startApp }, { createLogger }, { demoKeys, keepDemoToken }] = await Promise.all([
    import('./app.js'),
    import('./log.js'),
    import('./cli/demo-keys.js'),
  ]);
  const log = createLogger();
  const fromEnv = settingsFromEnv(placedEnv(config, store), simulate ? { host: '127.0.0.1' } : {});
  // The demo's keys are the same at every start on the same store (./cli/demo-keys.ts).
  const demo = simulate ? demoKeys(fromEnv.storeUrl) : null;
  // The demo opens the admin routes with its admin key unless one is given; `start` keeps them closed without one.
  const settings = demo && fromEnv.adminKey === null ? { ...fromEnv, adminKey: demo.adminKey } : fromEnv;
  let app: App;
  try {
    app = await startApp(settings, log, { simulate });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') fail(`port ${settings.port} on ${settings.host} is already in use; choose another with PORT=…`);
    fail((err as Error).message);
  }
  if (making) log.info({ store: store.file, config: config.dir }, 'no store was there: made a new one');
  stopOnSignals(app);
  trimHeapWhenIdle();
  // The address really bound (0.0.0.0: every interface), and a URL that reaches it from here.
  const { listenAddress } = await import('./http/listen-address.js');
  const bound = listenAddress(app.gateway.server, settings.tlsCertFile !== null);
  const base = bound.url;
  if (!demo) {
    log.info(
      { url: base, address: bound.address, port: bound.port, admin: settings.adminKey !== null, watching: app.config.status().watching },
      'gateway listening',
    );
    return;
  }
  const key = process.env.GATEWAY_DEMO_KEY || demo.apiKey;
  await keepDemoToken(app.store, key);
  const { demoBanner } = await import('./cli/demo-hints.js');
  process.stdout.write(
    demoBanner({
      snapshot: app.snapshot,
      base,
      bound: `${bound.address}:${bound.port}`,
      apiKey: key,
      adminKey: settings.adminKey,
      simulators: app.simulators.map((s) => `${s.profile} at ${s.url}`),
      secretFile: demo.secretFile,
    }),
  );
}

/**
 * Every simulator in one process, shared by several gateways (replicas, staging, a benchmark):
 * stdout gets the channel variables, one `NAME=value` per line, then stderr says it is ready.
 */
async function sims(args: string[]): Promise<void> {
  const u = usageOf(USAGE.sims);
  const { values } = parseCommand(args, u, { ...CONFIG_FLAG, 'finish-ms': { type: 'string' }, host: { type: 'string' } });
  const raw = values['finish-ms'];
  const finishMs = raw === undefined ? undefined : wholeNumber(raw, '--finish-ms', 0, 3_600_000, u);
  const [{ settingsFromEnv }, { SIMULATORS }, { simulatorEnv }] = await Promise.all([
    import('./app.js'),
    import('./sim/registry.js'),
    import('./sim/sim-env.js'),
  ]);
  const started = new Map<string, Simulator>();
  // A name other containers reach it by (compose's `sims`): a wildcard address would be no URL.
  const host = values.host;
  if (host !== undefined && /^(0\.0\.0\.0|::|\[::\])?$/.test(host))
    throw usageError(`--host takes the name or address gateways reach the simulators at, not '${host}'`, u);
  // Without a config there are no channels to point at the simulators: say so rather than print nothing.
  const config = configPlace(values.config);
  requireConfig(config);
  for (const [profile, start] of Object.entries(SIMULATORS)) started.set(profile, await start({ finishMs, host }));
  const settings = settingsFromEnv(placedEnv(config, null));
  const env = simulatorEnv([settings.configDir, ...settings.extraConfigDirs], started);
  process.stdout.write(
    Object.keys(env)
      .sort()
      .map((name) => `${name}=${env[name]}\n`)
      .join(''),
  );
  process.stderr.write(
    `gateway sims: ${[...started.values()].map((s) => `${s.profile} at ${s.url}`).join(', ')}; the variables above are for the channels of ${configWords(config)}\n`,
  );
  const stop = () => {
    Promise.all([...started.values()].map((s) => s.close())).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Before saying ready, as `start` does: whoever acts on the word may signal at once.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  process.stderr.write(`gateway sims: ready (SIGINT or SIGTERM stops them)\n`);
}

/** The problems are what check is asked for, so they are its output (stdout), like a compiler's. */
async function check(args: string[]): Promise<void> {
  const u = usageOf(USAGE.check);
  const { values, positionals } = parseCommand(args, u, { ...CONFIG_FLAG, ...REPORT_FLAGS }, { optional: ['dir'] });
  const mode = reportMode(values, u);
  if (positionals[0] !== undefined && values.config !== undefined) throw usageError('name the directory once: --config DIR or dir', u);
  // Without a directory, the config start would serve (./cli/locate.ts), and which one that is.
  const config = positionals[0] === undefined ? configPlace(values.config) : { ...configPlace(positionals[0]), from: 'the argument' };
  requireConfig(config);
  if (mode !== 'quiet') process.stdout.write(`config: ${configWords(config)}\n`);
  const [{ settingsFromEnv }, { loadConfig }] = await Promise.all([import('./app.js'), import('./config/load.js')]);
  const { snapshot, issues } = loadConfig(config.dir, { extraDirs: settingsFromEnv().extraConfigDirs });
  for (const line of reportLines(issues, mode)) process.stdout.write(line + '\n');
  const errors = issues.filter((i) => i.severity === 'error').length;
  if (!snapshot || errors > 0) {
    process.stdout.write(`${errors} error(s)\n`);
    process.exitCode = 1;
    return;
  }
  if (mode === 'quiet') return;
  process.stdout.write(
    `ok: ${snapshot.routes.length} route(s), ${snapshot.profiles.size} profile(s), ${snapshot.channels.length} channel(s) serving, ${snapshot.leftOut.length} left out\n`,
  );
}

async function explain(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(
    args,
    usageOf(USAGE.explain),
    { ...CONFIG_FLAG, group: { type: 'string' }, ...REPORT_FLAGS },
    { required: ['model'] },
  );
  const mode = reportMode(values, usageOf(USAGE.explain));
  // parseCommand refuses a command without it.
  const [model = ''] = positionals;
  const config = configPlace(values.config);
  requireConfig(config);
  const [{ settingsFromEnv }, { loadConfig }, { explainModel }] = await Promise.all([
    import('./app.js'),
    import('./config/load.js'),
    import('./config/explain.js'),
  ]);
  const settings = settingsFromEnv(placedEnv(config, null));
  const { snapshot, issues } = loadConfig(settings.configDir, { extraDirs: settings.extraConfigDirs });
  if (!snapshot) fail(`the configuration of ${configWords(config)} does not load; run gateway check\n${reportLines(issues, 'quiet').join('\n')}`);
  const lines = explainModel(snapshot, model, values.group);
  if (!lines) fail(`no route serves model ${model}`);
  process.stdout.write(lines.join('\n') + '\n');
  // Channels left out for unset variables are not in the snapshot; say so rather than hide them
  // (on stderr: the explanation itself stays alone on stdout).
  for (const line of reportLines(issues, mode)) process.stderr.write(line + '\n');
}

async function golden(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(args, usageOf(USAGE.golden), { update: { type: 'boolean' } }, { optional: ['filter'] });
  const filter = positionals[0];
  requireCheckout('golden', ['test/golden', 'test/golden-made-up'], 'runs the golden cases of test/golden/ and test/golden-made-up/', 'npm run golden');
  const [{ runGolden }, { GOLDEN_SUITES }] = await Promise.all([import('./golden/runner.js'), import('./golden/suites.js')]);
  const results = [];
  for (const suite of GOLDEN_SUITES) results.push(...(await runGolden(suite.configDir, suite.casesDir, { update: values.update === true, filter })));
  // Nothing run is not a pass: a mistyped filter in CI would otherwise check nothing, silently.
  if (results.length === 0) {
    const where = GOLDEN_SUITES.map((s) => s.cases).join(', ');
    throw new CliExit(
      filter === undefined
        ? `no golden cases found in ${where}`
        : `no golden case name contains "${filter}" (names are <profile>/<case>, as listed by gateway golden)`,
      1,
    );
  }
  for (const r of results) {
    process.stdout.write(`${r.ok ? (r.updated ? 'updated' : 'ok     ') : 'FAIL   '} ${r.name}\n`);
    if (r.diff) process.stdout.write(`${r.diff.replace(/^/gm, '        ')}\n`);
  }
  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  if (failed > 0) process.exitCode = 1;
}

/** The shipped config for a generated document; a config that does not load is the command's failure. */
async function shippedSnapshot() {
  const { loadConfig } = await import('./config/load.js');
  const { snapshot, issues } = loadConfig(PROJECT_ROOT);
  if (!snapshot) fail(`the configuration does not load; run gateway check\n${issues.map(formatIssue).join('\n')}`);
  return snapshot;
}

/** Prints the family catalogue from the config, or with --write rewrites docs/generated/catalogue.md. */
async function catalogue(args: string[]): Promise<void> {
  const { values } = parseCommand(args, usageOf(USAGE.catalogue), { write: { type: 'boolean' } });
  const [{ renderCatalogue }, { generatedDoc, writeGeneratedDoc }] = await Promise.all([import('./config/catalogue.js'), import('./docs/generated-docs.js')]);
  const snapshot = await shippedSnapshot();
  if (values.write !== true) return void process.stdout.write(renderCatalogue(snapshot) + '\n');
  const doc = generatedDoc('docs/generated/catalogue.md');
  const changed = writeGeneratedDoc(doc, snapshot);
  process.stdout.write(`${doc.path}: catalogue of ${snapshot.families.length} families ${changed ? 'written' : 'already current'}\n`);
}

/** Prints the OpenAPI document of the shipped routes, or with --write rewrites docs/generated/openapi.json. */
async function openapi(args: string[]): Promise<void> {
  const { values } = parseCommand(args, usageOf(USAGE.openapi), { write: { type: 'boolean' } });
  const [{ renderOpenApi }, { generatedDoc, writeGeneratedDoc }] = await Promise.all([
    import('./openapi/openapi-document.js'),
    import('./docs/generated-docs.js'),
  ]);
  const snapshot = await shippedSnapshot();
  if (values.write !== true) return void process.stdout.write(renderOpenApi(snapshot));
  const doc = generatedDoc('docs/generated/openapi.json');
  const changed = writeGeneratedDoc(doc, snapshot);
  process.stdout.write(`${doc.path}: OpenAPI document of ${snapshot.routes.length} routes ${changed ? 'written' : 'already current'}\n`);
}

/** Checks every generated document against what the config makes (exit 1 when one is stale), or with --write rewrites them. */
async function docs(args: string[]): Promise<void> {
  const { values } = parseCommand(args, usageOf(USAGE.docs), { write: { type: 'boolean' } });
  requireCheckout('docs', ['src/cli.ts', 'docs/generated'], 'checks docs/generated/ against the TypeScript of src/', 'npm run docs');
  const { committedDoc, DOCS_COMMAND, GENERATED_DOCS, writeGeneratedDoc } = await import('./docs/generated-docs.js');
  const snapshot = await shippedSnapshot();
  let stale = 0;
  for (const doc of GENERATED_DOCS) {
    if (values.write === true) {
      process.stdout.write(`${writeGeneratedDoc(doc, snapshot) ? 'written' : 'current'} ${doc.path}\n`);
    } else if (committedDoc(doc.path) === doc.render(snapshot)) {
      process.stdout.write(`current ${doc.path}\n`);
    } else {
      stale++;
      process.stdout.write(`stale   ${doc.path}\n`);
    }
  }
  if (stale > 0) {
    process.stderr.write(`gateway: ${stale} generated document(s) differ from what the config makes: run ${DOCS_COMMAND}\n`);
    process.exitCode = 1;
  }
}

/** Every command: each parses its own arguments strictly (./cli/args.ts). */
const COMMANDS = new Map<string, (args: string[]) => Promise<void>>([
  ['init', initCommand],
  ['start', (args) => serve(false, args)],
  ['demo', (args) => serve(true, args)],
  ['sims', sims],
  ['check', check],
  ['tokens', tokensCommand],
  ['groups', groupsCommand],
  ['webhooks', webhooksCommand],
  ['explain', explain],
  ['golden', golden],
  ['catalogue', catalogue],
  ['openapi', openapi],
  ['docs', docs],
]);

// A reader that stops early (`gateway openapi | head`) is not a fault of the command.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') throw new HelpAsked(HELP);
  if (command === '--version' || command === '-v' || command === 'version') return void process.stdout.write(`${packageVersion()}\n`);
  const run = COMMANDS.get(command);
  if (!run) throw usageError(`unknown command '${command}'`, HELP);
  await run(rest);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof HelpAsked) {
    process.stdout.write(err.usage + '\n');
    process.exit(0);
  }
  // A usage error or a command that could not do its job says so in words; anything else is a fault, with its stack.
  const [message, status] =
    err instanceof CliExit ? [err.usage ? `${err.message}\n${err.usage}` : err.message, err.status] : [(err as Error).stack ?? String(err), 1];
  process.stderr.write(`gateway: ${message}\n`);
  process.exit(status);
});
