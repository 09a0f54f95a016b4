/**
 * The shape of an upstream auth scheme (a profile's `auth` block in channels.yaml). One file per
 * scheme owns everything about it: the JSON Schema of its block, the compile step that turns a
 * valid block into what signing needs, and the signing itself. registry.ts lists them; adding a
 * scheme is one new file and one line there (docs/channels-yaml.md, "Upstream auth schemes").
 */

/** What a signer may touch of a request: it only adds headers or query parameters. */
export interface SignableRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string>;
  readonly body: string | Buffer | null;
}

/** What signing is given besides the request. */
export interface SignContext {
  /** A channel secret by name ('' when the channel has none of that name: the config load reports that). */
  secret(name: string): string;
  /** Stable for one channel of one loaded config: a signer may cache per channel under it (a reload makes a new one). */
  readonly cacheKey: object;
  readonly nowMs: number;
}

/** A scheme's block compiled: what signing needs, and the channel secrets it names (checked at load). */
export interface CompiledAuth {
  readonly type: string;
  readonly secrets: readonly string[];
  readonly spec: unknown;
}

export interface Signer<Raw extends { type: string }, Spec> {
  readonly type: Raw['type'];
  /** JSON Schema of the `auth` block, `type` included (a `const`). */
  readonly schema: Readonly<Record<string, unknown>>;
  /** A schema-valid block → its spec and the secrets its `{name}` templates name. */
  compile(raw: Raw): { spec: Spec; secrets: readonly string[] };
  sign(spec: Spec, req: SignableRequest, ctx: SignContext): void;
}

const PLACEHOLDER = /\{([a-z][a-z0-9_]*)\}/g;

/** The secret names a `{name}` template uses. */
export function secretsIn(...templates: string[]): string[] {
  return templates.flatMap((t) => [...t.matchAll(PLACEHOLDER)].flatMap(([, name]) => (name === undefined ? [] : [name])));
}

/** Fills a template's `{name}` placeholders with the channel's secrets. */
export function fill(template: string, ctx: SignContext): string {
  return template.replace(PLACEHOLDER, (_m, name: string) => ctx.secret(name));
}

/** A `{name}` template of a secret (or text around one), as every scheme's schema writes it. */
export const TEMPLATE = { type: 'string', minLength: 1 } as const;
