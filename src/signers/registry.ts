import { headerSigner } from './header.js';
import { hmacV4Signer } from './hmac-v4.js';
import { jwtHs256Signer } from './jwt-hs256.js';
import { noneSigner } from './none.js';
import { querySigner } from './query.js';
import type { CompiledAuth, SignableRequest, SignContext, Signer } from './signer.js';

/**
 * A scheme as the registry holds it: its block and its spec are opaque here. Each scheme's own
 * `Signer<Raw, Spec>` is one (Signer declares `compile` and `sign` as methods, whose parameters
 * TypeScript compares both ways). That is safe because the registry gives `compile` only a
 * schema-valid block of the scheme's own `type`, and `sign` only the spec that scheme's `compile` made.
 */
type RegisteredSigner = Signer<{ type: string }, unknown>;

/** Every upstream auth scheme a profile may name (`auth.type`); a new scheme is one file and one line here. */
const SIGNERS: readonly RegisteredSigner[] = [headerSigner, querySigner, jwtHs256Signer, hmacV4Signer, noneSigner];

const byType = new Map(SIGNERS.map((s) => [s.type, s]));

/** The JSON Schema of a profile's `auth` block: one of the schemes' own schemas (channels.schema.json `$defs.auth`). */
export function authSchema(): Record<string, unknown> {
  return {
    description:
      'How requests to the vendor are signed: one of the upstream auth schemes (src/signers/). `{name}` in a template is replaced by the channel secret of that name.',
    oneOf: SIGNERS.map((s) => s.schema),
  };
}

/** Compiles a schema-valid `auth` block. */
export function compileAuth(raw: { type: string }): CompiledAuth {
  const signer = byType.get(raw.type);
  if (!signer) throw new Error(`unknown auth type ${raw.type}`);
  const { spec, secrets } = signer.compile(raw);
  return Object.freeze({ type: raw.type, secrets: Object.freeze([...new Set(secrets)]), spec: Object.freeze(spec) });
}

/** Signs a request the way a compiled `auth` block says; each scheme only adds headers or query parameters. */
export function signRequest(auth: CompiledAuth, req: SignableRequest, ctx: SignContext): void {
  const signer = byType.get(auth.type);
  if (!signer) throw new Error(`unknown auth type ${auth.type}`);
  signer.sign(auth.spec, req, ctx);
}
