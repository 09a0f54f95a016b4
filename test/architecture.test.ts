/**
 * The house rules of src/ (README, "Where things are"), read off the source itself: no folder
 * imports one that imports it back, no file cycle, config/ never imports a runtime room, the
 * running engine reads the snapshot through its read side (never a compiler), and no file outside
 * src/sim names a vendor or a vendor's header: those live in YAML.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';

const SRC = 'src';

/** Every .ts file under src/, as paths relative to src/ with forward slashes. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [relative(SRC, join(dir, d.name)).split(sep).join('/')] : [],
  );
}

/** The files each file imports (relative imports, type-only ones included: a type is an arrow too). */
export function importGraph(files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = read(file);
    const targets = new Set<string>();
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)) {
      targets.add(
        normalize(join(dirname(file), m[1]!.replace(/\.js$/, '.ts')))
          .split(sep)
          .join('/'),
      );
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** The room of a file: its top folder under src/, or the file itself at the top. */
export const roomOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

/** Strongly connected components of more than one node, or of one node that imports itself (Tarjan). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The folder graph: room → rooms it imports (itself left out). */
export function roomGraph(files: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const rooms = new Map<string, Set<string>>();
  for (const [file, targets] of files) {
    const from = roomOf(file);
    const set = rooms.get(from) ?? new Set<string>();
    for (const t of targets) if (roomOf(t) !== from) set.add(roomOf(t));
    rooms.set(from, set);
  }
  return new Map([...rooms].map(([k, v]) => [k, [...v]]));
}

/** Rooms that run requests or hold live state: config/ compiles, it must never reach into them. */
const RUNTIME_ROOMS = [
  'http',
  'operations',
  'pipeline',
  'routing',
  'quota',
  'links',
  'upstream',
  'tasks',
  'store',
  'live',
  'tokens',
  'admin',
  'sim',
  'golden',
  'gateway.ts',
  'app.ts',
  'cli.ts',
];
/** The rooms of the running engine, which read the snapshot and never compile it. */
const ENGINE_ROOMS = ['http', 'operations', 'pipeline', 'routing', 'quota', 'links', 'upstream', 'tasks', 'store', 'live'];

/** Vendor names and the headers that belong to a vendor or a route, read from the YAML that declares them. */
function vendorWords(): string[] {
  const words = new Set(['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu']);
  const yamlFiles = [
    'channels.yaml',
    'routes.yaml',
    ...readdirSync('channels.d').map((f) => `channels.d/${f}`),
    ...readdirSync('routes.d').map((f) => `routes.d/${f}`),
  ];
  for (const f of yamlFiles) {
    const text = readFileSync(f, 'utf8');
    const doc = parse(text) as { profiles?: Record<string, unknown>; channels?: { name: string }[] };
    for (const name of Object.keys(doc.profiles ?? {})) words.add(name);
    for (const c of doc.channels ?? []) words.add(c.name);
    // Non-standard headers: a vendor's (x-date, x-dashscope-async) or a route's key header (x-goog-api-key).
    for (const m of text.matchAll(/\bx-[a-z0-9]+(?:-[a-z0-9]+)+/gi)) words.add(m[0].toLowerCase());
  }
  return [...words];
}

describe('architecture of src/', () => {
  const files = sourceFiles();
  const graph = importGraph(files, (f) => readFileSync(join(SRC, f), 'utf8'));

  test('the guard sees the source: files, rooms and arrows', () => {
    assert.ok(files.length > 80, `${files.length} files`);
    assert.ok(roomGraph(graph).get('operations')?.includes('pipeline'), 'operations call the stages');
  });

  test('the checks can fail: a planted folder loop and file loop are found', () => {
    const planted = new Map(graph);
    planted.set('config/planted.ts', ['http/planted.ts']);
    planted.set('http/planted.ts', ['config/planted.ts']);
    assert.ok(cycles(planted).some((c) => c.includes('config/planted.ts')));
    assert.ok(cycles(roomGraph(planted)).some((c) => c.includes('config') && c.includes('http')));
  });

  test('no file cycle', () => {
    assert.deepEqual(cycles(graph), []);
  });

  test('no folder imports a folder that imports it back', () => {
    assert.deepEqual(cycles(roomGraph(graph)), []);
  });

  test('config/ (and mapping/, schema/, errors/, metrics/, signers/ below it) never imports a runtime room', () => {
    const low = ['config', 'mapping', 'schema', 'errors', 'metrics', 'signers'];
    const bad = [...graph].flatMap(([f, ts]) => (low.includes(roomOf(f)) ? ts.filter((t) => RUNTIME_ROOMS.includes(roomOf(t))).map((t) => `${f} → ${t}`) : []));
    assert.deepEqual(bad, []);
    const upward = [...graph].flatMap(([f, ts]) => (roomOf(f) === 'mapping' ? ts.filter((t) => roomOf(t) === 'config').map((t) => `${f} → ${t}`) : []));
    assert.deepEqual(upward, [], 'the evaluator does not know the config that uses it');
  });

  test('the running engine reads the snapshot through its read side, never a compiler', () => {
    const bad = [...graph].flatMap(([f, ts]) =>
      ENGINE_ROOMS.includes(roomOf(f))
        ? ts.filter((t) => /^config\/(compile-|load|watch|live-config|config-files|yaml-source)/.test(t)).map((t) => `${f} → ${t}`)
        : [],
    );
    assert.deepEqual(bad, []);
  });

  test('no vendor name or vendor header is written in src/ outside src/sim', () => {
    const words = vendorWords();
    assert.ok(words.includes('x-date') || words.some((w) => w.startsWith('x-')), 'the YAML names headers to look for');
    const pattern = new RegExp(`(?<![A-Za-z0-9_-])(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![A-Za-z0-9_-])`, 'gi');
    // JSONata's own word for a function literal (its AST type `lambda`) is also a vendor's name:
    // the evaluator may say it, nothing else may.
    const jsonataTerms = (f: string, word: string) => roomOf(f) === 'mapping' && word.toLowerCase() === 'lambda';
    const found: string[] = [];
    for (const f of files) {
      if (roomOf(f) === 'sim') continue;
      readFileSync(join(SRC, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const m of line.matchAll(pattern)) {
            if (!jsonataTerms(f, m[1]!)) found.push(`src/${f}:${i + 1}: ${m[1]}`);
          }
        });
    }
    assert.deepEqual(found, []);
  });
});
