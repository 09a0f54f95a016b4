/**
 * The compiled, frozen configuration. Built once per load by src/config/compile.ts; the request
 * path only reads it. Every stage of the pipeline imports its types from here.
 */
import type { ValidateFunction } from 'ajv';
import type { Mapping } from './mapping.js';
import type { Secret } from './secret.js';
import type { PathMatcher } from '../http/path-template.js';

/** Where a route reads the client's API key. */
export type KeySource = 'bearer' | 'x-goog-api-key' | 'query-key';

/** One public route of routes.yaml, compiled. */
export interface CompiledRoute {
  readonly id: string;
  readonly method: string;
  readonly path: string;
  readonly matcher: PathMatcher;
  readonly kind: 'sync';
  readonly operation: string;
  readonly keySources: readonly KeySource[];
  readonly model: { readonly from: 'path' | 'body'; readonly name: string; readonly pointer: readonly string[] };
  /** Exact model names and prefix patterns (the part before a trailing `*`). */
  readonly models: { readonly exact: ReadonlySet<string>; readonly prefixes: readonly string[] };
  readonly body: CompiledBody | null;
  /** A request known to pass this route (routes.yaml `example`), for the demo's banner. */
  readonly example: { readonly path: string; readonly body: unknown } | null;
}

/** Body rules of a route. */
export interface CompiledBody {
  readonly maxBytes: number;
  readonly maxDepth: number;
  readonly contentTypes: readonly string[];
  readonly validate: ValidateFunction;
}

/** How a profile signs upstream requests; `{name}` placeholders name channel secrets. */
export type AuthSpec =
  | { readonly type: 'header' | 'query'; readonly name: string; readonly value: string; readonly secrets: readonly string[] }
  | { readonly type: 'none' };

/** One operation of a protocol profile: its mappings, compiled. */
export interface CompiledOperation {
  readonly request: {
    readonly method: string;
    readonly path: Mapping;
    readonly query: Mapping | null;
    readonly headers: Mapping | null;
    readonly body: Mapping | null;
  };
  readonly response: { readonly body: Mapping; readonly maxBytes: number };
  readonly error: Mapping | null;
}

/** A vendor protocol: how to sign, and how each operation maps. */
export interface CompiledProfile {
  readonly name: string;
  readonly auth: AuthSpec;
  readonly operations: ReadonlyMap<string, CompiledOperation>;
}

/** Upstream timeouts of a channel, in milliseconds. */
export interface Timeouts {
  readonly connectMs: number;
  readonly headersMs: number;
  readonly bodyMs: number;
}

/** One upstream channel of channels.yaml, compiled. */
export interface CompiledChannel {
  readonly name: string;
  readonly profile: CompiledProfile;
  /** Origin (scheme, host, port) of base_url; the unit of connection pooling. */
  readonly origin: string;
  /** Path prefix of base_url without a trailing slash ('' for none). */
  readonly basePath: string;
  readonly secrets: Readonly<Record<string, Secret>>;
  readonly groups: ReadonlySet<string>;
  /** Public model name → upstream model name. */
  readonly models: ReadonlyMap<string, string>;
  readonly priority: number;
  readonly weight: number;
  readonly timeouts: Timeouts;
  readonly maxConnections: number;
  readonly settings: Readonly<Record<string, unknown>>;
}

/** Everything the request path needs, frozen. */
export interface Snapshot {
  readonly loadedAt: Date;
  readonly routes: readonly CompiledRoute[];
  readonly profiles: ReadonlyMap<string, CompiledProfile>;
  readonly groups: ReadonlySet<string>;
  readonly channels: readonly CompiledChannel[];
  /** Public model name → channels that serve it. */
  readonly channelsByModel: ReadonlyMap<string, readonly CompiledChannel[]>;
}
