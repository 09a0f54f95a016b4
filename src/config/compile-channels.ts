import { type ConfigIssue, errorsSince } from './issues.js';
import { compileMappingAt as mapping } from './compile-mapping.js';
import { compileOperation, type RawOperation } from './compile-operation.js';
import { nearestName } from './did-you-mean.js';
import { Secret } from './secret.js';
import { compileAuth } from '../signers/registry.js';
import type {
  BreakerPolicy,
  CompiledChannel,
  GroupLimits,
  QueuePolicy,
  RetryPolicy,
  CompiledOperation,
  CompiledProfile,
  CompiledTaskProtocol,
  LeftOutChannel,
  SourceKind,
} from './snapshot.js';
import type { MissingEnv } from './env.js';
import { placeOf, type YamlSource } from './yaml-source.js';
import { routeMayServePrefix, type RouteDraft } from './compile-route-draft.js';
import { DEFAULT_POLLING, routeServesModel } from './lookups.js';
import { channelConcurrency, keepAliveMs, queuePolicy, type RawQueue } from './compile-limits.js';

interface RawProfile {
  sources?: { name: string; checked: string; note?: string; kind?: SourceKind; pinned?: string }[];
  /** Checked by its scheme's schema (src/signers/). */
  auth: { type: string };
  operations: Record<string, RawOperation>;
  tasks?: {
    query: RawOperation;
    batch_query?: RawOperation & { max_ids?: number };
    result?: RawOperation;
    adopt?: RawOperation[];
    content?: { request: { method: string; path: string; query?: string; headers?: string } };
  };
}
/** A channel as channels.schema.json admits it, after `${ENV}` interpolation. */
export interface RawChannel {
  name: string;
  profile: string;
  base_url: string;
  secrets?: Record<string, string>;
  /** False keeps the channel declared and checked but out of routing. */
  enabled?: boolean;
  groups: string[];
  models: (string | { name: string; upstream: string })[];
  priority?: number;
  weight?: number;
  timeouts?: { connect_ms?: number; headers_ms?: number; body_ms?: number };
  /** Before 0.3: the pool's size. Now the pool follows max_concurrency (compileLimit). */
  max_connections?: number;
  max_concurrency?: number;
  queue?: RawQueue;
  keep_alive_ms?: number;
  breaker?: {
    enabled?: boolean;
    consecutive_failures?: number;
    failure_rate?: { threshold: number; window_ms?: number; min_requests?: number };
    cooldown_ms?: number;
  };
  settings?: Record<string, unknown>;
  polling?: { interval_ms?: number; concurrency?: number; deadline_ms?: number; stale_ms?: number; lost_after_ms?: number };
}
interface RawChannels {
  groups: Record<string, { max_concurrency?: number; queue?: RawQueue; limits?: { rpm?: number; max_parallel?: number } }>;
  routing?: { max_attempts?: number; backoff_ms?: number; backoff_max_ms?: number; deadline_ms?: number; retry_after_s?: number };
  profiles: Record<string, RawProfile>;
  channels: RawChannel[];
}

const DEFAULT_TIMEOUTS = { connectMs: 10_000, headersMs: 120_000, bodyMs: 120_000 };
const DEFAULT_BATCH_IDS = 50;
const DEFAULT_BREAKER = { consecutiveFailures: 5, windowMs: 60_000, minRequests: 20, cooldownMs: 30_000 };
const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, backoffMs: 100, backoffMaxMs: 2_000, deadlineMs: 60_000, retryAfterS: 1 };

/** A channel of the file after `${ENV}` interpolation, with the references that had no value. */
export interface InterpolatedChannel {
  readonly raw: RawChannel;
  readonly unset: readonly MissingEnv[];
}

/**
 * Compiles profiles, groups and channels; problems are pushed onto `issues`. Every channel is
 * checked whatever the environment (a typo in a channel without credentials is still an error);
 * one that compiles but is disabled or lacks a variable is left out of routing and reported.
 */
export function compileChannels(
  src: YamlSource,
  /** Interpolated channels, index-aligned with the file. */
  channels: readonly InterpolatedChannel[],
  routes: readonly RouteDraft[],
  issues: ConfigIssue[],
): {
  profiles: Map<string, CompiledProfile>;
  groups: Set<string>;
  groupConcurrency: Map<string, number>;
  groupQueue: Map<string, QueuePolicy>;
  groupLimits: Map<string, GroupLimits>;
  retry: RetryPolicy;
  channels: CompiledChannel[];
  leftOut: LeftOutChannel[];
} {
  const raw = src.value as RawChannels;
  const groups = new Set(Object.keys(raw.groups));
  const groupConcurrency = new Map<string, number>();
  const groupQueue = new Map<string, QueuePolicy>();
  const groupLimits = new Map<string, GroupLimits>();
  for (const [name, g] of Object.entries(raw.groups)) {
    if (g?.max_concurrency !== undefined) {
      groupConcurrency.set(name, g.max_concurrency);
      groupQueue.set(name, queuePolicy(g.queue, g.max_concurrency));
    } else if (g?.queue) issues.push(src.issue(['groups', name, 'queue'], `a queue waits for a max_concurrency slot; group ${name} has no max_concurrency`));
    if (g?.limits) groupLimits.set(name, Object.freeze({ rpm: g.limits.rpm ?? null, maxParallel: g.limits.max_parallel ?? null }));
  }
  const profiles = compileProfiles(src, raw.profiles, routes, issues);
  const out: CompiledChannel[] = [];
  const leftOut: LeftOutChannel[] = [];
  const seen = new Map<string, number>();
  channels.forEach(({ raw: c, unset }, i) => {
    const at = (...rest: (string | number)[]) => ['channels', i, ...rest];
    const before = issues.length;
    const first = seen.get(c.name);
    if (first !== undefined) {
      issues.push(src.issue(at('name'), `channel name "${c.name}" is already used by the channel at ${placeOf(src, ['channels', first, 'name'])}`));
    } else seen.set(c.name, i);
    // A value made of an unset variable cannot be judged (an empty base_url is not a typo).
    const unjudged = new Set(unset.map((m) => m.path[2]));
    const compiled = compileChannel(src, c, at, { raw, profiles, groups, routes, unjudged }, issues);
    if (!compiled || errorsSince(issues, before)) return;
    if (c.enabled === false || unset.length > 0) {
      leftOut.push(
        Object.freeze({
          name: c.name,
          profile: c.profile,
          reason: c.enabled === false ? 'disabled' : 'unset_env',
          unset: Object.freeze([...new Set(unset.map((m) => m.name))]),
          at: placeOf(src, at()),
        }),
      );
    } else out.push(compiled);
  });
  unusedProfiles(src, profiles, channels, issues);
  unknownStreamOperations(src, profiles, routes, issues);
  return { profiles, groups, groupConcurrency, groupQueue, groupLimits, retry: retryPolicy(raw.routing), channels: out, leftOut };
}

/** A profile no channel names is dead text, or a channel's typo of it: worth a warning. */
function unusedProfiles(
  src: YamlSource,
  profiles: ReadonlyMap<string, CompiledProfile>,
  channels: readonly InterpolatedChannel[],
  issues: ConfigIssue[],
): void {
  const used = new Set(channels.map((c) => c.raw.profile));
  for (const name of profiles.keys()) {
    if (!used.has(name)) issues.push(src.issue(['profiles', name], `profile ${name} is not used by any channel`, 'warning'));
  }
}

/**
 * A route that streams through an operation no profile defines could never stream: every request
 * asking for it would be refused. An error, as an unknown operation of a channel's model is.
 */
function unknownStreamOperations(src: YamlSource, profiles: ReadonlyMap<string, CompiledProfile>, routes: readonly RouteDraft[], issues: ConfigIssue[]): void {
  for (const r of routes) {
    const op = r.stream?.operation;
    if (op && ![...profiles.values()].some((p) => p.operations.has(op))) {
      const near = nearestName(
        op,
        [...profiles.values()].flatMap((p) => [...p.operations.keys()]),
      );
      issues.push(src.issue(['profiles'], `route ${r.id} streams through operation ${op}, which no profile defines${near ? ` (did you mean ${near}?)` : ''}`));
    }
  }
}

/** The fallback loop's settings (`routing:`) with the defaults filled in. */
function retryPolicy(r: RawChannels['routing'] = {}): RetryPolicy {
  return Object.freeze({
    maxAttempts: r.max_attempts ?? DEFAULT_RETRY.maxAttempts,
    backoffMs: r.backoff_ms ?? DEFAULT_RETRY.backoffMs,
    backoffMaxMs: r.backoff_max_ms ?? Math.max(DEFAULT_RETRY.backoffMaxMs, r.backoff_ms ?? 0),
    deadlineMs: r.deadline_ms ?? DEFAULT_RETRY.deadlineMs,
    retryAfterS: r.retry_after_s ?? DEFAULT_RETRY.retryAfterS,
  });
}

function compileProfiles(src: YamlSource, raw: Record<string, RawProfile>, routes: readonly RouteDraft[], issues: ConfigIssue[]): Map<string, CompiledProfile> {
  const profiles = new Map<string, CompiledProfile>();
  for (const [name, p] of Object.entries(raw)) {
    const operations = new Map<string, CompiledOperation>();
    for (const [opName, op] of Object.entries(p.operations)) {
      const compiled = compileOperation(src, op, ['profiles', name, 'operations', opName], issues);
      if (compiled) operations.set(opName, compiled);
    }
    const tasks = p.tasks ? compileTaskProtocol(src, p.tasks, ['profiles', name, 'tasks'], issues) : null;
    // A profile that takes task submissions must say how to follow them.
    const submitOps = [...new Set(routes.filter((r) => r.kind === 'task-submit' && r.operation in p.operations).map((r) => r.operation))];
    if (submitOps.length > 0 && !p.tasks) {
      issues.push(
        src.issue(['profiles', name], `profile ${name} serves task operation ${submitOps.join(', ')} but has no tasks: block saying how to query its tasks`),
      );
    }
    const sources = Object.freeze(
      (p.sources ?? []).map((x) => Object.freeze({ name: x.name, checked: x.checked, note: x.note ?? null, kind: x.kind ?? null, pinned: x.pinned ?? null })),
    );
    profiles.set(name, Object.freeze({ name, sources, auth: compileAuth(p.auth), operations, tasks }));
  }
  return profiles;
}

/** What a channel is checked against. */
interface ChannelContext {
  raw: RawChannels;
  profiles: Map<string, CompiledProfile>;
  groups: Set<string>;
  routes: readonly RouteDraft[];
  /** Top-level keys of the channel whose value came from an unset variable. */
  unjudged: ReadonlySet<string | number | undefined>;
}
type At = (...rest: (string | number)[]) => (string | number)[];

/** One channel; null when it has a problem (pushed onto `issues`). */
function compileChannel(src: YamlSource, c: RawChannel, at: At, ctx: ChannelContext, issues: ConfigIssue[]): CompiledChannel | null {
  const before = issues.length;
  const profile = ctx.profiles.get(c.profile);
  if (!profile) issues.push(src.issue(at('profile'), `unknown profile "${c.profile}" (known: ${[...ctx.profiles.keys()].join(', ')})`));
  c.groups.forEach((g, j) => {
    if (!ctx.groups.has(g)) issues.push(src.issue(at('groups', j), `unknown group "${g}" (declare it under groups:)`));
  });
  const url = baseUrl(c.base_url) ?? (ctx.unjudged.has('base_url') ? new URL('http://unset.invalid') : null);
  if (!url) issues.push(src.issue(at('base_url'), `base_url must be an http(s) URL without query, fragment or credentials; got "${c.base_url}"`));

  const secrets: Record<string, Secret> = {};
  for (const [k, v] of Object.entries(c.secrets ?? {})) secrets[k] = new Secret(v);
  for (const s of profile?.auth.secrets ?? []) {
    if (!(s in secrets)) issues.push(src.issue(at('secrets'), `profile ${c.profile} signs with secret "${s}", which this channel does not define`));
  }
  // Declared operations count even when a mapping failed to compile: that failure is its own error.
  const declared = Object.keys((profile && ctx.raw.profiles[profile.name]?.operations) ?? {});
  const { models, prefixes } = channelModels(src, c, at, profile, declared, ctx.routes, issues);

  const maxConcurrency = channelConcurrency(src, c, at, issues);
  if (c.queue && maxConcurrency === null) issues.push(src.issue(at('queue'), 'a queue waits for a max_concurrency slot; this channel has no max_concurrency'));

  if (errorsSince(issues, before) || !profile || !url) return null;
  return Object.freeze({
    name: c.name,
    profile,
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ''),
    secrets: Object.freeze(secrets),
    groups: new Set(c.groups),
    models,
    modelPrefixes: Object.freeze(prefixes),
    priority: c.priority ?? 0,
    weight: c.weight ?? 1,
    timeouts: Object.freeze({
      connectMs: c.timeouts?.connect_ms ?? DEFAULT_TIMEOUTS.connectMs,
      headersMs: c.timeouts?.headers_ms ?? DEFAULT_TIMEOUTS.headersMs,
      bodyMs: c.timeouts?.body_ms ?? DEFAULT_TIMEOUTS.bodyMs,
    }),
    keepAliveMs: keepAliveMs(c.keep_alive_ms),
    maxConcurrency,
    queue: queuePolicy(c.queue, maxConcurrency),
    breaker: breakerPolicy(c.breaker),
    settings: Object.freeze({ ...(c.settings ?? {}) }),
    polling: Object.freeze({
      intervalMs: c.polling?.interval_ms ?? DEFAULT_POLLING.intervalMs,
      concurrency: c.polling?.concurrency ?? DEFAULT_POLLING.concurrency,
      deadlineMs: c.polling?.deadline_ms ?? DEFAULT_POLLING.deadlineMs,
      staleMs: c.polling?.stale_ms ?? DEFAULT_POLLING.staleMs,
      lostAfterMs: c.polling?.lost_after_ms ?? DEFAULT_POLLING.lostAfterMs,
    }),
  });
}

/** An http(s) URL without query, fragment or credentials; null for anything else. */
function baseUrl(text: string): URL | null {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.search || url.hash || url.username) return null;
    return url;
  } catch {
    return null;
  }
}

/** A channel's models (public name → upstream name) and model patterns, each served by a route its profile can answer. */
function channelModels(
  src: YamlSource,
  c: RawChannel,
  at: At,
  profile: CompiledProfile | undefined,
  declared: readonly string[],
  routes: readonly RouteDraft[],
  issues: ConfigIssue[],
): { models: Map<string, string>; prefixes: string[] } {
  const models = new Map<string, string>();
  const prefixes: string[] = [];
  c.models.forEach((m, j) => {
    const name = typeof m === 'string' ? m : m.name;
    const upstream = typeof m === 'string' ? m : m.upstream;
    if (models.has(name) || prefixes.includes(name.slice(0, -1))) issues.push(src.issue(at('models', j), `model "${name}" is listed twice`));
    if (name.endsWith('*')) {
      if (typeof m !== 'string')
        issues.push(src.issue(at('models', j, 'upstream'), `a model pattern keeps the client's model name; "${name}" cannot be renamed`));
      prefixes.push(name.slice(0, -1));
    } else {
      models.set(name, upstream);
    }
    const served = routes.filter((r) => r.model !== null && (name.endsWith('*') ? routeMayServePrefix(r, name.slice(0, -1)) : routeServesModel(r, name)));
    if (served.length === 0) {
      issues.push(src.issue(at('models', j), `model "${name}" is not served by any route of routes.yaml`));
    } else if (profile && !served.some((r) => declared.includes(r.operation))) {
      const ops = [...new Set(served.map((r) => r.operation))].join(', ');
      issues.push(src.issue(at('models', j), `model "${name}" is served by operation ${ops}, which profile ${profile.name} does not define`));
    }
  });
  return { models, prefixes };
}

/** A channel's breaker settings with the defaults filled in. */
function breakerPolicy(b: RawChannel['breaker']): BreakerPolicy {
  return Object.freeze({
    enabled: b?.enabled ?? true,
    consecutiveFailures: b?.consecutive_failures ?? DEFAULT_BREAKER.consecutiveFailures,
    failureRate: b?.failure_rate
      ? Object.freeze({
          threshold: b.failure_rate.threshold,
          windowMs: b.failure_rate.window_ms ?? DEFAULT_BREAKER.windowMs,
          minRequests: b.failure_rate.min_requests ?? DEFAULT_BREAKER.minRequests,
        })
      : null,
    cooldownMs: b?.cooldown_ms ?? DEFAULT_BREAKER.cooldownMs,
  });
}

/** Compiles a profile's task protocol: query, optional batch query, result, adoption lookups and content download. */
function compileTaskProtocol(
  src: YamlSource,
  t: NonNullable<RawProfile['tasks']>,
  at: (string | number)[],
  issues: ConfigIssue[],
): CompiledTaskProtocol | null {
  const query = compileOperation(src, t.query, [...at, 'query'], issues);
  const batch = t.batch_query ? compileOperation(src, t.batch_query, [...at, 'batch_query'], issues) : null;
  const result = t.result ? compileOperation(src, t.result, [...at, 'result'], issues) : null;
  const adopt = (t.adopt ?? []).map((op, i) => compileOperation(src, op, [...at, 'adopt', i], issues));
  let content: CompiledTaskProtocol['content'] = null;
  if (t.content) {
    const r = t.content.request;
    const m = (expr: string | undefined, key: string) => (expr === undefined ? null : mapping(src, expr, [...at, 'content', 'request', key], issues));
    const path = m(r.path, 'path');
    if (path) content = Object.freeze({ method: r.method, path, query: m(r.query, 'query'), headers: m(r.headers, 'headers') });
  }
  if (!query || adopt.some((op) => op === null)) return null;
  return Object.freeze({
    adopt: Object.freeze(adopt as CompiledOperation[]),
    query,
    batchQuery: batch && t.batch_query ? Object.freeze({ ...batch, maxIds: t.batch_query.max_ids ?? DEFAULT_BATCH_IDS }) : null,
    result,
    content,
  });
}
