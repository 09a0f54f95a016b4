#!/usr/bin/env node
/**
 * Rebuilds test/contract/specs/openai-openapi.json, the pinned extract of OpenAI's published OpenAPI
 * document (repository openai/openai-openapi, file openapi.yaml) that test/contract/openai-spec.test.ts
 * holds the gateway's OpenAI-compatible routes, the zeta-openai profile and its simulator to
 * (docs/testing.md, "Vendor specifications").
 *
 *   node scripts/spec-extracts/openai.mjs <path to openapi.yaml> [<commit>]
 *
 * Keeps the operations the gateway and the zeta profile use (images generations and edits, with
 * their `text/event-stream` answers: ImageGenStreamEvent and ImageEditStreamEvent, which the
 * simulator's image streams are held to; videos create, list, retrieve, delete, content and remix)
 * and every component schema they reach through `$ref`, plus the error object (`ErrorResponse`);
 * drops the documentation-only `x-oaiMeta`. Schemas are otherwise copied as the vendor wrote them:
 * the test converts them for ajv. Prints the source's SHA-256; given the
 * commit the file was read at, also writes the extract's entry in test/contract/specs/sources.json.
 * Both files are then formatted by biome (the repository's JSON style).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const NAME = 'openai-openapi.json';
const SPECS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'contract', 'specs');

/** The operations kept, by path and method (the vendor's paths, without the /v1 server prefix). */
const OPERATIONS = {
  '/images/generations': ['post'],
  '/images/edits': ['post'],
  '/videos': ['post', 'get'],
  '/videos/{video_id}': ['get', 'delete'],
  '/videos/{video_id}/content': ['get'],
  '/videos/{video_id}/remix': ['post'],
};
/** Components kept whether or not an operation names them: the error answer of every route. */
const ALSO = ['ErrorResponse'];

const [source, commit] = process.argv.slice(2);
if (!source || (commit !== undefined && !/^[0-9a-f]{40}$/.test(commit))) {
  console.error('usage: node scripts/spec-extracts/openai.mjs <path to openapi.yaml> [<40-hex commit>]');
  process.exit(2);
}
const text = readFileSync(source);
const sha256 = createHash('sha256').update(text).digest('hex');
const doc = parse(text.toString('utf8'), { maxAliasCount: -1 });

/** A copy without documentation-only keys. */
function clean(node) {
  if (Array.isArray(node)) return node.map(clean);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'x-oaiMeta') out[k] = clean(v);
  return out;
}

const schemas = doc.components.schemas;
const kept = new Set();
/** Every component schema `node` reaches, recorded in `kept`. */
function reach(node) {
  if (Array.isArray(node)) return node.forEach(reach);
  if (node === null || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string') {
      const m = /^#\/components\/schemas\/(.+)$/.exec(v);
      if (!m) throw new Error(`unexpected $ref ${v}`);
      const name = m[1];
      if (!(name in schemas)) throw new Error(`$ref to a missing schema ${name}`);
      if (!kept.has(name)) {
        kept.add(name);
        reach(schemas[name]);
      }
    } else reach(v);
  }
}

const paths = {};
for (const [path, methods] of Object.entries(OPERATIONS)) {
  const item = doc.paths[path];
  if (!item) throw new Error(`the document has no path ${path}`);
  paths[path] = {};
  for (const method of methods) {
    const op = clean(item[method]);
    if (!op) throw new Error(`the document has no ${method.toUpperCase()} ${path}`);
    reach(op);
    paths[path][method] = op;
  }
}
for (const name of ALSO) {
  kept.add(name);
  reach(schemas[name]);
}

const extract = {
  openapi: doc.openapi,
  info: { title: doc.info.title, version: doc.info.version },
  servers: doc.servers,
  'x-extract': {
    from: 'openai/openai-openapi openapi.yaml (see sources.json)',
    by: 'scripts/spec-extracts/openai.mjs',
    kept: 'the operations below (with their text/event-stream answers) and the component schemas they reach, plus ErrorResponse; x-oaiMeta dropped',
  },
  paths,
  components: { schemas: Object.fromEntries([...kept].sort().map((n) => [n, clean(schemas[n])])) },
};
writeFileSync(join(SPECS, NAME), `${JSON.stringify(extract, null, 2)}\n`);
console.log(`${NAME}: ${Object.keys(paths).length} paths, ${kept.size} schemas; source sha256 ${sha256}`);

if (commit) {
  const manifest = join(SPECS, 'sources.json');
  let entries = {};
  try {
    entries = JSON.parse(readFileSync(manifest, 'utf8'));
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  entries[NAME] = { repository: 'openai/openai-openapi', path: 'openapi.yaml', commit, sha256 };
  const sorted = Object.fromEntries(
    Object.keys(entries)
      .sort()
      .map((k) => [k, entries[k]]),
  );
  writeFileSync(manifest, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`sources.json: ${NAME} from ${commit}`);
}
// In the repository's own JSON style, so a rebuild from the same source changes nothing.
execFileSync('npx', ['biome', 'format', '--write', SPECS], { stdio: 'inherit' });
