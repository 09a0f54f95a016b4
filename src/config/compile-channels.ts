import type { ConfigIssue } from './issues.js';
import { compileMapping, type Mapping } from './mapping.js';
import { Secret } from './secret.js';
import type { AuthSpec, CompiledChannel, CompiledOperation, CompiledProfile, CompiledRoute } from './snapshot.js';
import { parseSize } from './sizes.js';
import type { YamlSource } from './yaml-source.js';
import { routeServesModel } from './compile-routes.js';

interface RawOperation {
  request: { method: string; path: string; query?: string; headers?: string; body?: string };
  response: { body: string; max_bytes?: number | string };
  error?: string;
}
interface RawProfile {
  auth: { type: 'header' | 'query'; name: string; value: string } | { type: 'none' };
  operations: Record<string, RawOperation>;
}
/** A channel as channels.schema.json admits it, after `${ENV}` interpolation. */
export interface RawChannel {
  name: string;
  profile: string;
  base_url: string;
  secrets?: Record<string, string>;
  groups: string[];
  models: (string | { name: string; upstream: string })[];
  priority?: number;
  weight?: number;
  timeouts?: { connect_ms?: number; headers_ms?: number; body_ms?: number };
  max_connections?: number;
  settings?: Record<string, unknown>;
}
interface RawChannels {
  groups: Record<string, unknown>;
  profiles: Record<string, RawProfile>;
  channels: RawChannel[];
}

const DEFAULT_TIMEOUTS = { connectMs: 10_000, headersMs: 120_000, bodyMs: 120_000 };
const DEFAULT_RESPONSE_BYTES = 64 * 1024 * 1024;
const PLACEHOLDER = /\{([a-z][a-z0-9_]*)\}/g;

/** Compiles profiles, groups and channels; problems are pushed onto `issues`. */
export function compileChannels(
  src: YamlSource,
  /** Interpolated channels, index-aligned with the file; null for one left out (unset env in check/demo). */
  channels: (RawChannel | null)[],
  routes: readonly CompiledRoute[],
  issues: ConfigIssue[],
): { profiles: Map<string, CompiledProfile>; groups: Set<string>; channels: CompiledChannel[] } {
  const raw = src.value as RawChannels;
  const groups = new Set(Object.keys(raw.groups));
  const profiles = new Map<string, CompiledProfile>();

  for (const [name, p] of Object.entries(raw.profiles)) {
    const operations = new Map<string, CompiledOperation>();
    for (const [opName, op] of Object.entries(p.operations)) {
      const at = ['profiles', name, 'operations', opName];
      const m = (expr: string | undefined, ...rest: string[]): Mapping | null =>
        expr === undefined ? null : mapping(src, expr, [...at, ...rest], issues);
      const path = m(op.request.path, 'request', 'path');
      const body = m(op.response.body, 'response', 'body');
      const compiled = {
        request: {
          method: op.request.method,
          path,
          query: m(op.request.query, 'request', 'query'),
          headers: m(op.request.headers, 'request', 'headers'),
          body: m(op.request.body, 'request', 'body'),
        },
        response: { body, maxBytes: op.response.max_bytes === undefined ? DEFAULT_RESPONSE_BYTES : parseSize(op.response.max_bytes) },
        error: m(op.error, 'error'),
      };
      if (path && body) operations.set(opName, compiled as CompiledOperation);
    }
    const auth: AuthSpec =
      p.auth.type === 'none'
        ? { type: 'none' }
        : { ...p.auth, secrets: [...p.auth.value.matchAll(PLACEHOLDER)].map((x) => x[1]!) };
    profiles.set(name, Object.freeze({ name, auth: Object.freeze(auth), operations }));
  }

  const out: CompiledChannel[] = [];
  const seen = new Map<string, number>();
  channels.forEach((c, i) => {
    if (!c) return;
    const at = (...rest: (string | number)[]) => ['channels', i, ...rest];
    const before = issues.length;
    if (seen.has(c.name)) issues.push(src.issue(at('name'), `channel name "${c.name}" is already used by channels[${seen.get(c.name)}]`));
    seen.set(c.name, i);
    const profile = profiles.get(c.profile);
    if (!profile) issues.push(src.issue(at('profile'), `unknown profile "${c.profile}" (known: ${[...profiles.keys()].join(', ')})`));
    c.groups.forEach((g, j) => {
      if (!groups.has(g)) issues.push(src.issue(at('groups', j), `unknown group "${g}" (declare it under groups:)`));
    });

    let url: URL | null = null;
    try {
      url = new URL(c.base_url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
      if (url.search || url.hash || url.username) throw new Error('extra');
    } catch {
      url = null;
      issues.push(src.issue(at('base_url'), `base_url must be an http(s) URL without query, fragment or credentials; got "${c.base_url}"`));
    }

    const secrets: Record<string, Secret> = {};
    for (const [k, v] of Object.entries(c.secrets ?? {})) secrets[k] = new Secret(v);
    if (profile && profile.auth.type !== 'none') {
      for (const s of profile.auth.secrets) {
        if (!(s in secrets)) issues.push(src.issue(at('secrets'), `profile ${profile.name} signs with secret "${s}", which this channel does not define`));
      }
    }

    // Declared operations count even when a mapping failed to compile: that failure is its own error.
    const declared = profile ? Object.keys(raw.profiles[profile.name]!.operations) : [];
    const models = new Map<string, string>();
    c.models.forEach((m, j) => {
      const name = typeof m === 'string' ? m : m.name;
      const upstream = typeof m === 'string' ? m : m.upstream;
      if (models.has(name)) issues.push(src.issue(at('models', j), `model "${name}" is listed twice`));
      models.set(name, upstream);
      const served = routes.filter((r) => routeServesModel(r, name));
      if (served.length === 0) {
        issues.push(src.issue(at('models', j), `model "${name}" is not served by any route of routes.yaml`));
      } else if (profile && !served.some((r) => declared.includes(r.operation))) {
        const ops = [...new Set(served.map((r) => r.operation))].join(', ');
        issues.push(src.issue(at('models', j), `model "${name}" is served by operation ${ops}, which profile ${profile.name} does not define`));
      }
    });

    if (issues.length > before || !profile || !url) return;
    out.push(
      Object.freeze({
        name: c.name,
        profile,
        origin: url.origin,
        basePath: url.pathname.replace(/\/+$/, ''),
        secrets: Object.freeze(secrets),
        groups: new Set(c.groups),
        models,
        priority: c.priority ?? 0,
        weight: c.weight ?? 1,
        timeouts: Object.freeze({
          connectMs: c.timeouts?.connect_ms ?? DEFAULT_TIMEOUTS.connectMs,
          headersMs: c.timeouts?.headers_ms ?? DEFAULT_TIMEOUTS.headersMs,
          bodyMs: c.timeouts?.body_ms ?? DEFAULT_TIMEOUTS.bodyMs,
        }),
        maxConnections: c.max_connections ?? 64,
        settings: Object.freeze({ ...(c.settings ?? {}) }),
      }),
    );
  });
  return { profiles, groups, channels: out };
}

function mapping(src: YamlSource, expr: string, path: (string | number)[], issues: ConfigIssue[]): Mapping | null {
  const pos = src.locate(path);
  try {
    return compileMapping(expr, `${src.file}:${pos.line}`);
  } catch (err) {
    const e = err as { message?: string; position?: number };
    issues.push(src.issue(path, `JSONata syntax error${e.position !== undefined ? ` at character ${e.position}` : ''}: ${e.message ?? String(err)}`));
    return null;
  }
}
