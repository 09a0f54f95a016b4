/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, docs/webhooks.md "Verifying a
 * delivery"): `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed with the
 * bytes of the secret after `whsec_`. While a rotated secret is still valid both sign, the
 * signatures separated by a space, so a receiver holding either verifies. node:crypto's HMAC is the
 * whole of it; the test receivers verify with the `standardwebhooks` package and the `openai` SDK.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: 32 random bytes, base64, after `whsec_`. */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key of a secret (its base64 after `whsec_`). */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** The `webhook-signature` header of a message: one `v1,…` per secret, separated by spaces. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => `v1,${createHmac('sha256', keyOf(s)).update(`${id}.${timestamp}.${body}`).digest('base64')}`).join(' ');
}

/** The secrets that sign at `now`: the current one, and the one a rotation replaced while its grace runs. */
export function signingSecrets(
  e: { readonly secret: string; readonly previousSecret: string | null; readonly previousSecretUntil: number | null },
  now: number,
): string[] {
  return e.previousSecret !== null && e.previousSecretUntil !== null && e.previousSecretUntil > now ? [e.secret, e.previousSecret] : [e.secret];
}
