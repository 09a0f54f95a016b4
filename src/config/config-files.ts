import { createHash, type Hash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ConfigIssue } from './issues.js';
import { applyRouteExtensions } from './route-extensions.js';
import { parseYaml, type YamlSource } from './yaml-source.js';

/**
 * The files one configuration is read from, merged. A config directory holds `routes.yaml` and
 * `channels.yaml`, and may hold `routes.d/*.yaml` and `channels.d/*.yaml`: fragments of the same
 * shape, read in name order, so one vendor (its profile and channels) can live in one file. Extra
 * directories (`GATEWAY_CONFIG_EXTRA`) add their own files the same way; their `routes.yaml` and
 * `channels.yaml` are optional. Every file is checked on its own, so an issue names its file and
 * line; the merged view routes an issue on `profiles.X` or `channels[i]` back to the file it came from.
 * A routes file may also add models to a route another file declares (`extend`, route-extensions.ts).
 */

/** The merged routes and channels, each a source whose issues point into the right file. */
export interface ConfigSources {
  readonly routes: YamlSource;
  readonly channels: YamlSource;
  /** Digest of every file read, its name and its text, in reading order (the config's version). */
  readonly version: string;
}

type Check = (src: YamlSource, issues: ConfigIssue[]) => boolean;

/** Reads, checks and merges the config files of `dirs` (the first is the main directory). */
export function readConfigSources(dirs: readonly string[], check: { routes: Check; channels: Check }, issues: ConfigIssue[]): ConfigSources | null {
  const routeFiles: YamlSource[] = [];
  const channelFiles: YamlSource[] = [];
  const digest = createHash('sha256');
  let ok = true;
  dirs.forEach((dir, i) => {
    const name = (f: string) => (i === 0 ? f : join(dir, f));
    for (const [main, list, kind] of [
      ['routes', routeFiles, 'routes'],
      ['channels', channelFiles, 'channels'],
    ] as const) {
      const files = [`${main}.yaml`, ...fragments(dir, `${main}.d`)];
      for (const f of files) {
        const required = i === 0 && f === `${main}.yaml`;
        const src = readSource(join(dir, f), name(f), required, issues, digest);
        if (src === undefined) continue;
        if (src === null || !check[kind](src, issues)) {
          ok = false;
          continue;
        }
        list.push(i === 0 ? src : withSchemasFrom(src, dir));
      }
    }
  });
  const [mainRoutes, ...moreRoutes] = routeFiles;
  const [mainChannels, ...moreChannels] = channelFiles;
  if (!ok || !mainRoutes || !mainChannels) return null;
  return {
    routes: mergeRoutes([mainRoutes, ...moreRoutes], issues),
    channels: mergeChannels([mainChannels, ...moreChannels], issues),
    version: digest.digest('hex').slice(0, 16),
  };
}

/** The `*.yaml` files of `dir/sub` in name order, as paths relative to `dir`; none when it is absent. */
function fragments(dir: string, sub: string): string[] {
  try {
    return readdirSync(join(dir, sub))
      .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
      .sort()
      .map((f) => join(sub, f));
  } catch {
    return [];
  }
}

/** A parsed file; undefined when an optional file is absent, null when it cannot be used. */
function readSource(path: string, file: string, required: boolean, issues: ConfigIssue[], digest: Hash): YamlSource | null | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    issues.push({ file, line: 1, column: 1, message: `cannot read ${file}: ${(err as Error).message}`, severity: 'error' });
    return null;
  }
  digest.update(`${file}\0${text}\0`);
  const parsed = parseYaml(file, text);
  issues.push(...parsed.issues);
  return parsed.source;
}

/** Routes of an extra directory name their body and answer schemas relative to that directory. */
function withSchemasFrom(src: YamlSource, dir: string): YamlSource {
  const value = src.value as { routes?: { body?: { schema?: string }; response?: { schema?: string } }[] };
  for (const r of value.routes ?? []) {
    if (r.body?.schema) r.body.schema = resolve(dir, r.body.schema);
    if (r.response?.schema) r.response.schema = resolve(dir, r.response.schema);
  }
  return src;
}

/** Where a path of the merged value lives: the file, and the path inside it. */
type Owner = (path: readonly (string | number)[]) => { src: YamlSource; path: readonly (string | number)[] };

function merged(first: YamlSource, value: unknown, owner: Owner): YamlSource {
  return {
    file: first.file,
    value,
    locate: (path) => {
      const o = owner(path);
      return o.src.locate(o.path);
    },
    issue: (path, message, severity) => {
      const o = owner(path);
      return o.src.issue(o.path, message, severity);
    },
  };
}

/** The files of one table, the main file first. */
type Files = readonly [YamlSource, ...YamlSource[]];

/** Indexes list items of several files: the merged index → (file, index in the file). */
function listOwner(files: readonly YamlSource[], key: string) {
  const items: { src: YamlSource; index: number; value: unknown }[] = [];
  for (const src of files) {
    ((src.value as Record<string, unknown[]>)[key] ?? []).forEach((value, index) => {
      items.push({ src, index, value });
    });
  }
  return items;
}

/**
 * Routes and families of every file, in reading order, with the files' `extend` entries applied
 * (route-extensions.ts): a model an extension added to a route is owned by the extension's line.
 */
function mergeRoutes(files: Files, issues: ConfigIssue[]): YamlSource {
  const routes = listOwner(files, 'routes');
  const families = listOwner(files, 'families');
  const own = routes.map((r) => ((r.value as { models?: unknown[] }).models ?? []).length);
  const added = applyRouteExtensions(routes, files, issues);
  const value = { version: 1, routes: routes.map((r) => r.value), families: families.map((f) => f.value) };
  return merged(files[0], value, (path) => {
    const [key, i, field, j] = path;
    const owned = key === 'routes' && typeof i === 'number' && field === 'models' ? own[i] : undefined;
    const extension = owned !== undefined && typeof i === 'number' && typeof j === 'number' && j >= owned ? added.get(i)?.[j - owned] : undefined;
    if (extension) return { src: extension.src, path: [...extension.path, ...path.slice(4)] };
    const listed = key === 'routes' || key === 'families' ? key : null;
    const list = listed === 'routes' ? routes : listed === 'families' ? families : null;
    const item = list && typeof i === 'number' ? list[i] : undefined;
    return item && listed ? { src: item.src, path: [listed, item.index, ...path.slice(2)] } : { src: files[0], path };
  });
}

/** Top-level sections of channels.yaml that one file declares whole (the first to declare one owns it). */
const WHOLE_SECTIONS = ['routing'] as const;

function mergeChannels(files: Files, issues: ConfigIssue[]): YamlSource {
  const named: Record<'groups' | 'profiles', Map<string, YamlSource>> = { groups: new Map(), profiles: new Map() };
  const value: Record<string, unknown> & { groups: Record<string, unknown>; profiles: Record<string, unknown>; channels: unknown[] } = {
    version: 1,
    groups: {},
    profiles: {},
    channels: [],
  };
  const wholeOwner = new Map<string, YamlSource>();
  for (const src of files) {
    const v = src.value as Record<string, Record<string, unknown> | undefined>;
    for (const key of WHOLE_SECTIONS) {
      if (v[key] === undefined) continue;
      const before = wholeOwner.get(key);
      if (before) issues.push(src.issue([key], `${key} is already declared in ${before.file}; declare it in one file`));
      else {
        wholeOwner.set(key, src);
        value[key] = v[key];
      }
    }
    for (const key of ['groups', 'profiles'] as const) {
      for (const [name, item] of Object.entries(v[key] ?? {})) {
        const before = named[key].get(name);
        if (before) {
          issues.push(src.issue([key, name], `${key === 'groups' ? 'group' : 'profile'} ${name} is already declared in ${before.file}`));
          continue;
        }
        named[key].set(name, src);
        value[key][name] = item;
      }
    }
  }
  const prices = mergePrices(files, issues);
  if (prices.value) value.prices = prices.value;
  const channels = listOwner(files, 'channels');
  value.channels = channels.map((c) => c.value);
  return merged(files[0], value, (path) => {
    if (path[0] === 'prices') return { src: prices.owner(path), path };
    const whole = typeof path[0] === 'string' ? wholeOwner.get(path[0]) : undefined;
    if (whole) return { src: whole, path };
    if ((path[0] === 'groups' || path[0] === 'profiles') && typeof path[1] === 'string') {
      const src = named[path[0]].get(path[1]);
      if (src) return { src, path };
    }
    const c = path[0] === 'channels' && typeof path[1] === 'number' ? channels[path[1]] : undefined;
    return c ? { src: c.src, path: ['channels', c.index, ...path.slice(2)] } : { src: files[0], path };
  });
}

/**
 * `prices` of several files: each file may price its own models (a model priced twice is an error
 * naming both files); `default` is declared in one file.
 */
function mergePrices(files: Files, issues: ConfigIssue[]) {
  type Prices = { default?: unknown; models?: Record<string, unknown> };
  const models: Record<string, unknown> = {};
  const modelOwner = new Map<string, YamlSource>();
  let value: Prices | null = null;
  let first: YamlSource | null = null;
  let defaultOwner: YamlSource | null = null;
  for (const src of files) {
    const p = (src.value as { prices?: Prices }).prices;
    if (p === undefined) continue;
    first ??= src;
    value ??= { models };
    if (p.default !== undefined) {
      if (defaultOwner) issues.push(src.issue(['prices', 'default'], `prices.default is already declared in ${defaultOwner.file}; declare it in one file`));
      else {
        defaultOwner = src;
        value.default = p.default;
      }
    }
    for (const [name, price] of Object.entries(p.models ?? {})) {
      const before = modelOwner.get(name);
      if (before) {
        issues.push(src.issue(['prices', 'models', name], `model ${name} is already priced in ${before.file}`));
        continue;
      }
      modelOwner.set(name, src);
      models[name] = price;
    }
  }
  const owner = (path: readonly (string | number)[]): YamlSource => {
    const byModel = path[1] === 'models' && typeof path[2] === 'string' ? modelOwner.get(path[2]) : undefined;
    return byModel ?? (path[1] === 'default' ? defaultOwner : null) ?? first ?? files[0];
  };
  return { value, owner };
}
