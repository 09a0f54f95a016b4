/**
 * The house rules of src/ (docs/architecture.md), read off the source itself: no folder imports
 * one that imports it back, no file cycle, config/ never imports a runtime room, the running engine
 * reads the snapshot through its read side (never a compiler), no file outside src/sim names a
 * vendor or a vendor's header (those live in YAML), no file is over 400 lines, and the stage list
 * (src/operations/stages.ts) is the one place a request's stages are named and run.
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

/** The names a file imports from each file it imports (relative imports; `x as y` counts as `x`). */
export function importedNames(files: readonly string[], read: (file: string) => string): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  for (const file of files) {
    const byTarget = new Map<string, string[]>();
    for (const m of read(file).matchAll(/\bimport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = normalize(join(dirname(file), m[2]!.replace(/\.js$/, '.ts')))
        .split(sep)
        .join('/');
      const names = m[1]!
        .split(',')
        .map(
          (n) =>
            n
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0]!,
        )
        .filter((n) => n !== '');
      byTarget.set(target, [...(byTarget.get(target) ?? []), ...names]);
    }
    out.set(file, byTarget);
  }
  return out;
}

/** A stage: an exported function that takes `next` (pipeline/compose.ts), by file and name. */
export function stagesIn(files: readonly string[], read: (file: string) => string): { file: string; name: string }[] {
  return files.flatMap((file) =>
    [...read(file).matchAll(/^export (?:async )?function (\w+)(?:<[^(]*>)?\([^)]*\bnext: Next</gm)].map((m) => ({ file, name: m[1]! })),
  );
}

/** The stage list: the one file that names and composes the stages. */
const STAGE_LIST = 'operations/stages.ts';

/**
 * Where the stage rule is broken: a stage imported by a file other than the stage list, or called
 * by its own module; a stage the list does not import; `compose` called anywhere but the list.
 */
export function stageRuleBreaks(files: readonly string[], read: (file: string) => string): string[] {
  const imports = importedNames(files, read);
  const out: string[] = [];
  for (const { file, name } of stagesIn(files, read)) {
    const importers = [...imports].filter(([, byTarget]) => byTarget.get(file)?.includes(name)).map(([f]) => f);
    for (const f of importers) if (f !== STAGE_LIST) out.push(`${f} imports the stage ${name} of ${file}: only ${STAGE_LIST} runs stages`);
    if (!importers.includes(STAGE_LIST)) out.push(`the stage ${name} of ${file} is in no list of ${STAGE_LIST}`);
    // A call, not a definition (the stage's own, or a method of that name).
    const definition = new RegExp(`^\\s*(?:export\\s+)?(?:async\\s+)?(?:function\\s+)?${name}\\b`);
    const call = new RegExp(`(?<![.\\w$])${name}\\(`);
    if (
      read(file)
        .split('\n')
        .some((line) => call.test(line) && !definition.test(line))
    )
      out.push(`${file} calls its own stage ${name}: only the runner does`);
  }
  for (const file of files) {
    if (file === STAGE_LIST || file === 'pipeline/compose.ts') continue;
    if (/(?<![.\w$])compose\(/.test(read(file))) out.push(`${file} composes stages: only ${STAGE_LIST} does`);
  }
  return out;
}

/** Files over `max` lines, with their length. */
export function oversized(files: readonly string[], read: (file: string) => string, max: number): string[] {
  return files.flatMap((f) => {
    const lines = read(f).split('\n').length - 1;
    return lines > max ? [`src/${f}: ${lines} lines`] : [];
  });
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
  'dependencies',
  'tokens',
  'webhooks',
  'admin',
  'sim',
  'golden',
  'gateway.ts',
  'app.ts',
  'cli.ts',
];
/** The rooms of the running engine, which read the snapshot and never compile it. */
const ENGINE_ROOMS = ['http', 'operations', 'pipeline', 'routing', 'quota', 'links', 'upstream', 'tasks', 'store', 'live', 'dependencies', 'webhooks'];

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

  test('no file of src/ is over 400 lines (a sign to split it by job); the check finds a planted one', () => {
    const read = (f: string) => readFileSync(join(SRC, f), 'utf8');
    assert.deepEqual(
      oversized(['planted.ts'], () => 'x\n'.repeat(401), 400),
      ['src/planted.ts: 401 lines'],
    );
    assert.deepEqual(oversized(files, read, 400), []);
  });

  test('the stage list is the one place stages are run: each stage is imported by it alone, and only it composes them', () => {
    const read = (f: string) => readFileSync(join(SRC, f), 'utf8');
    const stages = stagesIn(files, read);
    // The guard sees the stages: those of the pipeline and of the operations.
    assert.ok(
      stages.some((s) => s.file === 'pipeline/authenticate.ts' && s.name === 'authenticate'),
      stages.map((s) => s.name).join(', '),
    );
    assert.ok(stages.some((s) => s.file === 'operations/sync.ts' && s.name === 'holdQuota'));
    assert.ok(stages.length >= 15, `${stages.length} stages`);
    assert.deepEqual(stageRuleBreaks(files, read), []);
    // It can fail: an operation that runs a stage itself, and a second list composed elsewhere.
    const planted = new Map([
      ['operations/planted.ts', "import { checkBody } from '../pipeline/body-stages.js';\nexport const run = (ctx, next) => checkBody(ctx, next);\n"],
      ['http/planted.ts', "import { compose } from '../pipeline/compose.js';\nexport const all = compose([], {});\n"],
    ]);
    const readPlanted = (f: string) => planted.get(f) ?? read(f);
    assert.deepEqual(stageRuleBreaks([...files, ...planted.keys()], readPlanted), [
      'operations/planted.ts imports the stage checkBody of pipeline/body-stages.ts: only operations/stages.ts runs stages',
      'http/planted.ts composes stages: only operations/stages.ts does',
    ]);
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
