/**
 * A profile's claim is checked (issue 38, DESIGN.md "The vendors are the reference"): every shipped
 * profile is proven by an artifact its vendor published (an official SDK, a machine-readable
 * specification, or its reference text) that is pinned in the repository, so its contract tests run
 * offline; and every pin resolves: `npm:<package>@<version>` is a dependency of exactly that
 * version, a file exists, and a pinned extract under test/contract/specs/ is listed in
 * sources.json with the repository, path, commit and SHA-256 it was taken from.
 *
 * The profiles not yet proven are listed below, each still resting on our own reading: the list may
 * only shrink (a listed profile that gains a proof fails here until it is taken off).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { proofOf } from '../../src/config/profile-proof.js';
import type { CompiledProfile } from '../../src/config/snapshot.js';

/** Shipped profiles still on our own reading (issue 38, item 3): no vendor artifact pinned yet. */
const NOT_YET_PROVEN = new Set(['beta-native', 'iota-native', 'lambda-native']);

const SPECS = 'test/contract/specs';

/** Where a pinned extract came from (test/contract/specs/sources.json). */
interface SpecOrigin {
  readonly repository: string;
  readonly path: string;
  readonly commit: string;
  readonly sha256: string;
}

/** What the repository holds that pins may name. */
interface Pins {
  readonly packages: Readonly<Record<string, string>>;
  readonly exists: (file: string) => boolean;
  readonly specs: Readonly<Record<string, SpecOrigin>>;
}

/** Every way the profiles' claims fail: a profile with no pinned vendor artifact, or a pin that does not resolve. */
export function proofProblems(profiles: readonly Pick<CompiledProfile, 'name' | 'sources'>[], pins: Pins, notYet: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const p of profiles) {
    const proof = proofOf(p);
    if (!proof && !notYet.has(p.name)) out.push(`${p.name}: no source is a pinned vendor artifact (kind sdk, specification or reference-text, with pinned)`);
    if (proof && notYet.has(p.name)) out.push(`${p.name}: proven by ${proof.pinned}; take it off the list of profiles not yet proven`);
    for (const s of p.sources) {
      if (s.pinned === null) continue;
      const npm = /^npm:((?:@[^/]+\/)?[^@]+)@(.+)$/.exec(s.pinned);
      if (npm) {
        const [, pkg, version] = npm;
        if (pins.packages[pkg ?? ''] !== version)
          out.push(`${p.name}: ${s.pinned} is not a dependency of exactly that version (package.json has ${pins.packages[pkg ?? ''] ?? 'none'})`);
        continue;
      }
      if (!pins.exists(s.pinned)) {
        out.push(`${p.name}: ${s.pinned} is not in the repository`);
        continue;
      }
      if (s.pinned.startsWith(`${SPECS}/`)) {
        const origin = pins.specs[s.pinned.slice(SPECS.length + 1)];
        const complete =
          origin &&
          /^[\w.-]+\/[\w.-]+$/.test(origin.repository) &&
          origin.path !== '' &&
          /^[0-9a-f]{40}$/.test(origin.commit) &&
          /^[0-9a-f]{64}$/.test(origin.sha256);
        if (!complete) out.push(`${p.name}: ${s.pinned} is not listed in ${SPECS}/sources.json with its repository, path, commit and SHA-256`);
      }
    }
  }
  return out;
}

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};
const manifest = join(PROJECT_ROOT, SPECS, 'sources.json');
const pins: Pins = {
  packages: { ...pkg.dependencies, ...pkg.devDependencies },
  exists: (file) => existsSync(join(PROJECT_ROOT, file)),
  specs: existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, SpecOrigin>) : {},
};

test('every shipped profile is proven by a pinned vendor artifact (or is on the shrinking list of those not yet), and every pin resolves', () => {
  const snapshot = loadConfigOrThrow(PROJECT_ROOT, { env: {} });
  assert.deepEqual(proofProblems([...snapshot.profiles.values()], pins, NOT_YET_PROVEN), []);
  for (const name of NOT_YET_PROVEN) assert.ok(snapshot.profiles.has(name), `${name} is a shipped profile`);
});

test('the check fails a profile on our own reading, a pin of another version, a missing file and an extract without its origin', () => {
  const source = (kind: 'sdk' | 'specification' | 'protocol-note', pinned: string | null) => ({ name: 'x', checked: '2026-12-07', note: null, kind, pinned });
  const profiles = [
    { name: 'ours', sources: [source('protocol-note', null)] },
    { name: 'old-sdk', sources: [source('sdk', 'npm:openai@1.0.0')] },
    { name: 'lost', sources: [source('specification', 'test/contract/specs/gone.json')] },
    { name: 'unlisted', sources: [source('specification', `${SPECS}/here.json`)] },
    { name: 'listed', sources: [source('specification', `${SPECS}/listed.json`)] },
  ];
  const planted: Pins = {
    packages: { openai: '6.49.0' },
    exists: (f) => f !== 'test/contract/specs/gone.json',
    specs: { 'listed.json': { repository: 'owner/repo', path: 'openapi.yaml', commit: 'a'.repeat(40), sha256: 'b'.repeat(64) } },
  };
  const problems = proofProblems(profiles, planted, new Set());
  assert.equal(problems.length, 4, problems.join('\n'));
  for (const [i, name] of ['ours', 'old-sdk', 'lost', 'unlisted'].entries()) assert.ok(problems[i]?.startsWith(`${name}:`), problems[i]);
  assert.match(proofProblems([{ name: 'listed', sources: [source('sdk', 'npm:openai@6.49.0')] }], planted, new Set(['listed']))[0] ?? '', /take it off/);
});
