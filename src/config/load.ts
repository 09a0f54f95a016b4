import { authSchema } from '../signers/registry.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { createAjv } from '../schema/ajv.js';
import { compileChannels, type InterpolatedChannel, type RawChannel } from './compile-channels.js';
import { checkModelsHaveFamilies, compileFamilies } from './compile-families.js';
import { compilePrices } from './compile-prices.js';
import { compileRoutes } from './compile-routes.js';
import { interpolateEnv } from './env.js';
import { ConfigLoadError, type ConfigIssue } from './issues.js';
import { PROJECT_ROOT } from './paths.js';
import { indexChannels } from './lookups.js';
import type { Snapshot } from './snapshot.js';
import { readConfigSources } from './config-files.js';
import { cachedSchemaCompiler } from './schema-compiler.js';
import { checkAgainstSchema } from './schema-issues.js';

/** Replaces where a channel points and what it signs with (demo simulators, golden recorders). */
export type ChannelOverride = (
  channel: Readonly<RawChannel>,
  missingEnv: readonly string[],
) => ({ base_url: string; secrets: Record<string, string> } & Partial<Pick<RawChannel, 'timeouts' | 'polling' | 'breaker'>>) | null;

/** How to load a config directory. */
export interface LoadOptions {
  readonly env?: NodeJS.ProcessEnv;
  /**
   * GATEWAY_STRICT: an unset `${VAR}` is an error and the load fails. Otherwise it is a warning and
   * its channel is left out (`snapshot.leftOut`), so one vendor key is enough to serve.
   */
  readonly strict?: boolean;
  readonly overrideChannel?: ChannelOverride;
  /** More directories whose routes, channels and `*.d` fragments are merged in (GATEWAY_CONFIG_EXTRA). */
  readonly extraDirs?: readonly string[];
}

interface ConfigValidators {
  readonly routes: ValidateFunction;
  readonly channels: ValidateFunction;
}

/**
 * The validators of the config files themselves, held weakly: they are about 2 MB of heap that only
 * a load uses, and take about 100 ms to compile. Reloads close together share them; a quiet
 * gateway's full collection (heap-trim.ts) lets them go, and the next reload compiles them again.
 */
let configValidators: WeakRef<ConfigValidators> | null = null;

function validators(): ConfigValidators {
  let v = configValidators?.deref();
  if (!v) {
    // verbose: an unknown field's error carries the schema that lists the fields allowed (schema-issues.ts).
    const ajv = createAjv({ allErrors: true, verbose: true });
    const read = (f: string) => JSON.parse(readFileSync(join(PROJECT_ROOT, 'schemas/config', f), 'utf8')) as object;
    // A profile's auth block is checked by its scheme's own schema (src/signers/), not the file's copy.
    const channels = read('channels.schema.json') as { $defs: Record<string, unknown> };
    channels.$defs.auth = authSchema();
    v = { routes: ajv.compile(read('routes.schema.json')), channels: ajv.compile(channels) };
    configValidators = new WeakRef(v);
  }
  return v;
}

/**
 * Reads routes.yaml and channels.yaml of `dir` (with their `*.d` fragments and `extraDirs`; see config-files.ts), validates them against the project's config
 * schemas, resolves `${ENV}` references and cross-references, and compiles a frozen snapshot.
 * Returns every issue found; the snapshot is null when any of them is an error.
 */
export function loadConfig(dir: string, options: LoadOptions = {}): { snapshot: Snapshot | null; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const v = validators();
  const sources = readConfigSources(
    [dir, ...(options.extraDirs ?? [])],
    { routes: (src, out) => checkAgainstSchema(src, v.routes, out), channels: (src, out) => checkAgainstSchema(src, v.channels, out) },
    issues,
  );
  if (!sources) return { snapshot: null, issues };
  const { routes: routesSrc, channels: channelsSrc } = sources;

  // Validators and mappings whose text an earlier load compiled are reused (compile-cache.ts), so a
  // reload that changes one line recompiles only what that line is part of.
  const { routes, drafts } = compileRoutes(routesSrc, dir, cachedSchemaCompiler({ allErrors: false }), issues);
  const families = compileFamilies(routesSrc, drafts, cachedSchemaCompiler({ allErrors: false, verbose: true }), issues);

  const rawChannels = (channelsSrc.value as { channels: RawChannel[] }).channels;
  const channels = rawChannels.map((c, i): InterpolatedChannel => {
    const { value, missing } = interpolateEnv(c, options.env ?? process.env, ['channels', i]);
    const resolved = value as RawChannel;
    const override = options.overrideChannel?.(
      resolved,
      missing.map((m) => m.name),
    );
    if (override) return { raw: { ...resolved, ...override }, unset: [] };
    // A disabled channel needs no credentials: its unset variables are not news.
    if (c.enabled !== false) {
      for (const m of missing) {
        const tail = options.strict ? ' (GATEWAY_STRICT)' : '; the channel is left out until it is';
        const issue = channelsSrc.issue(m.path, `environment variable ${m.name} is not set (channel ${c.name})${tail}`, options.strict ? 'error' : 'warning');
        issues.push({ ...issue, unset: { variable: m.name, channel: c.name } });
      }
    }
    return { raw: resolved, unset: missing };
  });

  const compiled = compileChannels(channelsSrc, channels, drafts, issues);
  checkModelsHaveFamilies(channelsSrc, rawChannels, drafts, families, issues);
  const prices = compilePrices(channelsSrc, drafts, issues);
  if (issues.some((i) => i.severity === 'error')) return { snapshot: null, issues };

  const snapshot: Snapshot = Object.freeze({
    loadedAt: new Date(),
    version: sources.version,
    routes: Object.freeze(routes),
    keyQueryParams: Object.freeze([...new Set(routes.flatMap((r) => r.keySources.flatMap((k) => (k.from === 'query' ? [k.name] : []))))]),
    families: Object.freeze(families),
    profiles: compiled.profiles,
    groups: compiled.groups,
    groupConcurrency: compiled.groupConcurrency,
    groupQueue: compiled.groupQueue,
    groupLimits: compiled.groupLimits,
    retry: compiled.retry,
    channels: Object.freeze(compiled.channels),
    leftOut: Object.freeze(compiled.leftOut),
    ...indexChannels(compiled.channels),
    prices,
  });
  return { snapshot, issues };
}

/** loadConfig that throws a ConfigLoadError carrying every issue when the load fails. */
export function loadConfigOrThrow(dir: string, options: LoadOptions = {}): Snapshot {
  const { snapshot, issues } = loadConfig(dir, options);
  if (!snapshot) throw new ConfigLoadError(issues.filter((i) => i.severity === 'error'));
  return snapshot;
}
