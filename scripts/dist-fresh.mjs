#!/usr/bin/env node
// Whether dist/ is what the TypeScript says. A build that succeeds marks its time (`--mark src`
// after `npm run build`, `--mark test` after `npm run build:test`); a source changed
// after its folder's mark is stale. The scripts that run what was built without building
// (`npm run test:unit`, `npm run test:golden`) check it, so a quick run never tests yesterday's code.
// A mark rather than each file's own output time: tsc leaves an output alone when its source was
// touched without a change, which would look stale forever.
//
//   node scripts/dist-fresh.mjs --mark src   after a build of src/
//   node scripts/dist-fresh.mjs src test     exits 1 naming the stale files and the command to run
//   node scripts/dist-fresh.mjs --build      runs `npm run build` only when dist/ is not what src/
//                                            says (the console included), saying so first: npm pack
//                                            runs it, and npm start and npm run demo through
//                                            scripts/gateway.mjs, so a current dist/ starts at once
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Every file under `dir` whose name ends with `suffix`. */
export function find(dir, suffix) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? find(join(dir, d.name), suffix) : d.name.endsWith(suffix) ? [join(dir, d.name)] : [],
  );
}

const markOf = (dir) => join('dist', `.built-${dir}`);

function markTime(dir) {
  try {
    return statSync(markOf(dir)).mtimeMs;
  } catch {
    return -1;
  }
}

/** The TypeScript files under `dirs` changed since their folder was last built (the console has its own build). */
export function staleSources(dirs) {
  return dirs.flatMap((dir) => {
    const built = markTime(dir);
    return find(dir, '.ts').filter((ts) => !ts.startsWith(join('src', 'console')) && statSync(ts).mtimeMs > built);
  });
}

/** Exits 1 with the stale files and the command that rebuilds them, if any. */
export function requireFresh(dirs, command) {
  const stale = staleSources(dirs);
  if (stale.length === 0) return;
  const named = stale.slice(0, 5).join(', ') + (stale.length > 5 ? ` and ${stale.length - 5} more` : '');
  console.error(`changed since the last build: ${named}\nrun ${command} first`);
  process.exit(1);
}

/** Why `npm run build` must run before the built gateway can: null when dist/ is current. */
export function buildNeeded() {
  for (const out of ['dist/src/cli.js', 'dist/console/main.js']) if (!existsSync(out)) return `${out} is missing`;
  const built = markTime('src');
  const changed = find('src', '.ts').filter((ts) => statSync(ts).mtimeMs > built);
  return changed.length === 0 ? null : `${changed.length} file(s) of src/ changed since the last build (${changed.slice(0, 3).join(', ')})`;
}

/**
 * Runs `npm run build` when dist/ is not what src/ says, and returns its exit status (0 when nothing
 * was to be done). It says so before it starts: a first build takes about a minute, silent
 * otherwise, and looked like a gateway that would not start.
 */
export function buildIfNeeded() {
  const why = buildNeeded();
  if (why === null) return 0;
  console.error(`${why}: building first with npm run build (a minute or so the first time; later only what changed)...`);
  const started = Date.now();
  const r = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  if (r.status === 0) console.error(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return r.status ?? 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  if (args[0] === '--build') {
    process.exitCode = buildIfNeeded();
  } else if (args[0] === '--mark') {
    mkdirSync('dist', { recursive: true });
    writeFileSync(markOf(args[1]), `${new Date().toISOString()}\n`);
  } else {
    requireFresh(args, args.includes('test') ? 'npm run build:test' : 'npm run build');
  }
}
