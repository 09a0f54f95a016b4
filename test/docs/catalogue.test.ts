/**
 * The catalogue (src/config/catalogue.ts) and its page docs/generated/catalogue.md, which must be what
 * the config says: a stale page fails with the lines that differ and `run npm run docs`.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { renderCatalogue } from '../../src/config/catalogue.js';
import { loadConfig, loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { CompiledFamily, CompiledProfile, CompiledRoute } from '../../src/config/snapshot.js';
import { renderCatalogueDoc } from '../../src/docs/generated-docs.js';
import { assertDocCurrent, docDrift } from '../helpers/doc-drift.js';

const PAGE = 'docs/generated/catalogue.md';

test('docs/generated/catalogue.md is the catalogue of the families, routes, modes and limits of the config', () => {
  const snapshot = loadConfigOrThrow(PROJECT_ROOT, { env: {} });
  const page = renderCatalogueDoc(snapshot);
  assert.ok(snapshot.families.length > 0, 'the config declares families');
  for (const f of snapshot.families) assert.ok(page.includes(`| ${f.name} |`), `family ${f.name} has a row`);
  assertDocCurrent(PAGE, page);
});

test('a model added to a YAML file makes the page stale, and the failure is a short diff naming it and the command', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-catalogue-'));
  try {
    for (const f of ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas']) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
    writeFileSync(
      join(dir, 'routes.d/zz-kitchen.yaml'),
      'version: 1\nextend:\n  - { route: video-generations, models: [kitchen-video-1] }\nfamilies:\n  - { name: kitchen video, models: [kitchen-video-1] }\n',
    );
    const { snapshot, issues } = loadConfig(dir, { env: {} });
    assert.ok(snapshot, JSON.stringify(issues));
    // The page as the shipped config makes it stands for the committed one (which the test above checks).
    const page = renderCatalogueDoc(loadConfigOrThrow(PROJECT_ROOT, { env: {} }));
    const drift = docDrift(PAGE, renderCatalogueDoc(snapshot), page) ?? '';
    assert.match(drift, /^\+\| kitchen video \| `kitchen-video-1` \|/m, 'the new row, as an added line');
    const changed = drift.split('\n').filter((l) => /^[-+](?![-+]{2} )/.test(l));
    assert.equal(changed.length, 1, `one added line, nothing removed:\n${drift}`);
    assert.match(drift, /\nrun npm run docs$/);
    assert.ok(drift.split('\n').length < 15, `a few lines, not the page:\n${drift}`);
    assert.ok(!drift.includes('# Catalogue'), 'not the page');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The catalogue of one family `toy` (model `toy-1`, no routes), with what a test sets. */
function toyCatalogue(family: Partial<Pick<CompiledFamily, 'modes' | 'rawLimits' | 'rawModelLimits' | 'vendorRefuses'>>, routes: CompiledRoute[] = []): string {
  return renderCatalogue({
    routes,
    families: [
      {
        name: 'toy',
        description: '',
        models: { exact: new Set(['toy-1']), prefixes: [] },
        modelNames: ['toy-1'],
        mode: null,
        modes: new Map(),
        limits: null,
        rawLimits: null,
        modelLimits: new Map(),
        rawModelLimits: {},
        vendorRefuses: [],
        ...family,
      },
    ],
  });
}

test('the catalogue names refused and discouraged modes and the limits of a family', () => {
  const page = toyCatalogue({
    modes: new Map([
      ['text', 'supported'],
      ['reference', 'discouraged'],
      ['first_last', 'unsupported'],
    ]),
    rawLimits: { properties: { duration: { type: 'integer', minimum: 4, maximum: 15, default: 5 }, images: { maxItems: 9 } } },
    rawModelLimits: { 'toy-1': { properties: { seconds: { enum: ['10'] } } } },
  });
  assert.match(
    page,
    /\| toy \| `toy-1` \| {2}\| text; not recommended: reference; refused: first_last \| duration 4–15, default 5<br>images at most 9 item\(s\)<br>`toy-1`: seconds in "10" \|/,
  );
});

test('the catalogue says an image rule in words, under the path of the items it bounds', () => {
  const rule = { min_width: 128, min_height: 128, min_aspect: '1:4', max_aspect: '4:1', max_bytes: '50mb', formats: ['png', 'jpeg', 'webp'] };
  const page = toyCatalogue({
    rawLimits: {
      properties: {
        image: { image: { max_width: 4096, max_height: 4096, formats: ['jpg'] } },
        subjects: { type: 'array', items: { type: 'object', properties: { images: { type: 'array', maxItems: 3, items: { image: rule } } } } },
      },
    },
  });
  assert.match(
    page,
    /\| image at most 4096x4096; JPEG<br>subjects\[\]\.images at most 3 item\(s\)<br>subjects\[\]\.images\[\] 128x128 or more, aspect 1:4 to 4:1, at most 50 MB; PNG, JPEG, WebP \|/,
  );
});

test('the catalogue lists every profile with what proves it and the sources it was checked against, or says it names none', () => {
  const profile = (name: string, sources: CompiledProfile['sources']) => ({ name, sources }) as unknown as CompiledProfile;
  const page = renderCatalogue({
    routes: [],
    families: [],
    profiles: new Map([
      ['zz-vendor', profile('zz-vendor', [])],
      [
        'aa-vendor',
        profile('aa-vendor', [
          { name: 'aa-sdk 1.2.3 (npm)', checked: '2026-11-28', note: 'every call | its errors', kind: 'sdk', pinned: 'npm:aa-sdk@1.2.3' },
          { name: 'https://aa.example/docs', checked: '2026-11-01', note: null, kind: null, pinned: null },
        ]),
      ],
    ]),
  });
  assert.match(
    page,
    /\| Profile \| Proven by \| Checked against \|\n\|---\|---\|---\|\n\| `aa-vendor` \| sdk: `npm:aa-sdk@1\.2\.3` \| aa-sdk 1\.2\.3 \(npm\) \(sdk, pinned: `npm:aa-sdk@1\.2\.3`\), 2026-11-28: every call \\\| its errors<br>https:\/\/aa\.example\/docs, 2026-11-01 \|\n\| `zz-vendor` \| none: our own reading \| \(no source named/,
  );
});

test('a profile source must say when it was checked, as a date', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-sources-'));
  try {
    writeFileSync(join(dir, 'routes.yaml'), 'version: 1\nroutes: []\n');
    writeFileSync(
      join(dir, 'channels.yaml'),
      'version: 1\ngroups: { default: {} }\nprofiles:\n  p:\n    sources: [{ name: "p-sdk 1.0", checked: "last week" }]\n    auth: { type: none }\n    operations: { op: { request: { method: GET, path: \'"/x"\' }, response: { body: body } } }\nchannels: []\n',
    );
    const { issues } = loadConfig(dir);
    assert.ok(
      issues.some((i) => i.file === 'channels.yaml' && /checked/.test(i.message)),
      JSON.stringify(issues),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the catalogue says which listed model the vendor refuses on which route (vendor_refuses)', () => {
  const route = (id: string, path: string) =>
    ({ id, method: 'POST', path, kind: 'sync', models: { exact: new Set(['toy-1']), prefixes: [] }, matchQuery: {} }) as unknown as CompiledRoute;
  const page = toyCatalogue({ vendorRefuses: [{ model: 'toy-1', route: 'edits', why: 'edits are not served for it | at all' }] }, [
    route('gen', '/toy/gen'),
    route('edits', '/toy/edits'),
  ]);
  assert.match(page, /\| `POST \/toy\/gen`<br>`POST \/toy\/edits` \(the vendor refuses `toy-1` here: edits are not served for it \\\| at all\) \|/);
});
