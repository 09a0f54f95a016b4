/**
 * Dependencies cannot outrun the runtime (issue 45): every package the gateway needs at run time
 * (its `dependencies`, and theirs, as installed) runs on every Node.js major our own `engines`
 * admits. For each such major the lowest version our range admits is taken, and each installed
 * package's own `engines.node` must admit it too: a caret range that pulls a release needing a
 * newer Node (the AWS SDK's from January 2027 need Node 22) fails here before an operator's install.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import semver from 'semver';
import { PROJECT_ROOT } from '../../src/config/paths.js';

interface Manifest {
  name: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const read = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Where Node would find `name` from a package at `from`: its own node_modules, then each parent's. */
function resolveFrom(from: string, name: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === dirname(dir) || dir === dirname(PROJECT_ROOT)) return null;
  }
}

/** Every installed package the runtime needs, by directory. */
function runtimeTree(): Map<string, Manifest> {
  const seen = new Map<string, Manifest>();
  const queue = [PROJECT_ROOT];
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    const m = read(dir);
    for (const name of Object.keys({ ...m.dependencies, ...m.optionalDependencies })) {
      const at = resolveFrom(dir, name);
      // An optional dependency for another platform is not installed: nothing of it runs here.
      if (at === null || seen.has(at)) continue;
      seen.set(at, read(at));
      queue.push(at);
    }
  }
  return seen;
}

/** The lowest version of each Node.js major from 18 to 30 that `range` admits. */
function lowestPerMajor(range: string): string[] {
  const out: string[] = [];
  for (let major = 18; major <= 30; major++) {
    // Each `||` alternative of the range, held inside the major; the lowest version any of them admits.
    const lows = new semver.Range(range).set
      .map((set) => semver.minVersion(`${set.map((c) => c.value).join(' ')} >=${major}.0.0 <${major + 1}.0.0-0`.trim()))
      .filter((v): v is semver.SemVer => v !== null && v.major === major && semver.satisfies(v, range))
      .sort(semver.compare);
    if (lows[0]) out.push(lows[0].version);
  }
  return out;
}

test('our engines admit only the LTS majors, from the lowest each needs', () => {
  const ours = read(PROJECT_ROOT).engines?.node ?? '';
  assert.deepEqual(
    lowestPerMajor(ours).filter((v) => semver.major(v) <= 26),
    ['20.18.1', '22.0.0', '24.0.0', '25.0.0', '26.0.0'],
    ours,
  );
});

test('every package the gateway needs at run time admits every Node.js major our engines admit', () => {
  const ours = read(PROJECT_ROOT).engines?.node ?? '';
  const majors = lowestPerMajor(ours);
  const tree = runtimeTree();
  assert.ok(tree.size > 20, `${tree.size} runtime packages found`);
  const excluded: string[] = [];
  for (const m of tree.values()) {
    const theirs = m.engines?.node;
    if (theirs === undefined) continue;
    for (const v of majors) if (!semver.satisfies(v, theirs)) excluded.push(`${m.name}@${m.version} wants node ${theirs}: excludes ${v}`);
  }
  assert.deepEqual(excluded, []);
});

test("the image's Node.js is the LTS major CI runs beside Node 20, and one our engines admit", () => {
  const image = /^ARG NODE_IMAGE=node:(\d+)-bookworm-slim$/m.exec(readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8'))?.[1];
  const ci = /npm install [^\n]* node@(\d+)/.exec(readFileSync(join(PROJECT_ROOT, '.ci/run'), 'utf8'))?.[1];
  assert.ok(image && ci, `Dockerfile NODE_IMAGE ${image}, .ci/run node@${ci}`);
  assert.equal(image, ci, 'the image runs the Node.js major CI tests on besides 20');
  assert.equal(Number(image) % 2, 0, 'an even major: an LTS line');
  assert.ok(semver.satisfies(`${image}.0.0`, read(PROJECT_ROOT).engines?.node ?? ''), `node ${image} is admitted by our engines`);
});
