/**
 * Route extensions as the merged routes source sees them (src/config/route-extensions.ts): the
 * added models follow the route's own, a list two routes share through a YAML anchor is extended
 * for the named route only, and an issue on an added model names the extension's file and line.
 * The refusals are config fixtures (test/fixtures/config/extend-*).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readConfigSources } from '../../src/config/config-files.js';
import type { ConfigIssue } from '../../src/config/issues.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-extend-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, 'routes.yaml'),
  `version: 1
routes:
  - id: one
    method: POST
    path: /one
    kind: sync
    operation: generate
    model: { body: /model }
    models: &shared [m1, m2]
  - id: two
    method: POST
    path: /two
    kind: sync
    operation: generate
    model: { body: /model }
    models: *shared
`,
);
mkdirSync(join(dir, 'routes.d'));
writeFileSync(
  join(dir, 'routes.d', 'vendor.yaml'),
  `version: 1
extend:
  - route: two
    models:
      - v1
      - v-*
`,
);
writeFileSync(join(dir, 'channels.yaml'), 'version: 1\n');

const issues: ConfigIssue[] = [];
const sources = readConfigSources([dir], { routes: () => true, channels: () => true }, issues);

test('the named route serves its own models, then the added ones; the route sharing its list does not', () => {
  assert.deepEqual(issues, []);
  const routes = (sources!.routes.value as { routes: { id: string; models: string[] }[] }).routes;
  assert.deepEqual(routes.find((r) => r.id === 'two')!.models, ['m1', 'm2', 'v1', 'v-*']);
  assert.deepEqual(routes.find((r) => r.id === 'one')!.models, ['m1', 'm2'], 'the anchored list itself is not changed');
});

test("an issue on an added model names the extension's file and line; one on an own model, the route's", () => {
  const added = sources!.routes.issue(['routes', 1, 'models', 3], 'x');
  assert.deepEqual([added.file, added.line], [join('routes.d', 'vendor.yaml'), 6]);
  const own = sources!.routes.issue(['routes', 0, 'models', 1], 'x');
  assert.deepEqual([own.file, own.line], ['routes.yaml', 9]);
});
