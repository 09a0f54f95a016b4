/**
 * What operators do to webhook endpoints, the same from the admin routes and the CLI
 * (docs/webhooks.md, "Endpoints"): register one for a token or a group (its secret answered this
 * once), change it, rotate its secret with a grace, delete it. Every input is checked here, and a
 * bad one is `invalid_request` naming the field; every change is in the audit log.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors/gateway-error.js';
import { recordAudit, type Operator } from '../records/audit.js';
import { WEBHOOK_EVENTS, type WebhookEndpoint, type WebhookEndpointChange, type WebhookEvent } from '../store/store.js';
import { findToken, unknownToken } from '../tokens/token-ref.js';
import { resolvedProblem, urlProblem } from './outbound-url.js';
import { newSecret } from './signature.js';

/** Endpoints one token or one group may have. */
export const MAX_ENDPOINTS_PER_OWNER = 20;
/** Origins a callback endpoint may allow. */
export const MAX_CALLBACK_ORIGINS = 20;
/** The default and bounds of `progress_interval_seconds`. */
export const DEFAULT_PROGRESS_SECONDS = 30;
export const MAX_PROGRESS_SECONDS = 86_400;
/** The default and longest grace of a rotated secret. */
export const DEFAULT_GRACE_SECONDS = 86_400;
export const MAX_GRACE_SECONDS = 7 * 86_400;

/** What an operator sends to register an endpoint (the admin body; the CLI's flags say the same). */
export interface EndpointInput {
  readonly token?: string;
  readonly group?: string;
  readonly url?: string | null;
  readonly callback_origins?: readonly string[];
  readonly events?: readonly string[];
  readonly progress_interval_seconds?: number;
  readonly enabled?: boolean;
  readonly description?: string | null;
}

/** The JSON schema of an endpoint's fields (the admin bodies); the rules a schema cannot say are checked below. */
export const ENDPOINT_FIELDS = {
  token: { type: 'string', minLength: 1, maxLength: 200 },
  group: { type: 'string', minLength: 1, maxLength: 200 },
  url: { type: ['string', 'null'], maxLength: 2000 },
  callback_origins: { type: 'array', minItems: 1, maxItems: MAX_CALLBACK_ORIGINS, items: { type: 'string', maxLength: 300 } },
  events: { type: 'array', minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true, items: { type: 'string', enum: [...WEBHOOK_EVENTS] } },
  progress_interval_seconds: { type: 'integer', minimum: 1, maximum: MAX_PROGRESS_SECONDS },
  enabled: { type: 'boolean' },
  description: { type: ['string', 'null'], maxLength: 500 },
} as const;

/** An endpoint as operators see it: never its secrets (only when the secret became another). */
export function endpointView(e: WebhookEndpoint) {
  return {
    id: e.id,
    token_id: e.tokenId,
    group: e.group,
    url: e.url,
    callback_origins: e.callbackOrigins,
    events: e.events,
    progress_interval_seconds: e.progressEverySeconds,
    enabled: e.enabled,
    description: e.description,
    previous_secret_expires_at: e.previousSecret !== null && e.previousSecretUntil !== null ? new Date(e.previousSecretUntil).toISOString() : null,
    created_at: new Date(e.createdAt).toISOString(),
    updated_at: new Date(e.updatedAt).toISOString(),
  };
}

const bad = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

/** Checks a receiver's URL: its form, and where its name resolves now. */
async function checkedUrl(raw: string, allowPrivate: boolean, param = 'url'): Promise<string> {
  const problem = urlProblem(raw, allowPrivate) ?? (await resolvedProblem(raw, allowPrivate));
  if (problem) throw bad(param, `${param}: ${problem}`);
  return raw;
}

/** Checks the origins a callback endpoint allows: each an origin (scheme, host, port) a URL may go to. */
export async function checkedOrigins(raw: readonly string[], allowPrivate: boolean): Promise<string[]> {
  const out: string[] = [];
  for (const o of raw) {
    const url = await checkedUrl(o, allowPrivate, 'callback_origins');
    const origin = new URL(url).origin;
    if (origin !== o.replace(/\/$/, ''))
      throw bad('callback_origins', `callback_origins: ${JSON.stringify(o.slice(0, 100))} is not an origin (scheme, host and port only: ${origin})`);
    if (!out.includes(origin)) out.push(origin);
  }
  return out;
}

/** Registers an endpoint; answers it and its secret (shown this once). */
export async function registerEndpoint(op: Operator, input: EndpointInput, allowPrivate: boolean): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  if ((input.token === undefined) === (input.group === undefined))
    throw bad('token', 'an endpoint belongs to a token or to a group: name exactly one of token and group');
  let tokenId: string | null = null;
  if (input.token !== undefined) {
    const token = await findToken(op.store, input.token);
    if (!token) throw bad('token', unknownToken(input.token));
    tokenId = token.id;
  }
  const callback = input.callback_origins !== undefined;
  if (callback && tokenId === null) throw bad('callback_origins', "callback origins belong to a token's callback endpoint, not a group's");
  if (callback && input.url !== undefined && input.url !== null) throw bad('url', 'a callback endpoint has no url: each submission names its own callback_url');
  if (!callback && (input.url === undefined || input.url === null)) throw bad('url', 'an endpoint needs a url (or, for a token, callback_origins)');
  if (input.events === undefined) throw bad('events', `events must list some of ${WEBHOOK_EVENTS.join(', ')}`);
  const secret = newSecret();
  const now = op.now?.() ?? Date.now();
  const endpoint = await op.store
    .createWebhookEndpoint(
      {
        id: `we_${randomBytes(12).toString('hex')}`,
        tokenId,
        group: input.group ?? null,
        url: callback ? null : await checkedUrl(input.url as string, allowPrivate),
        callbackOrigins: callback ? await checkedOrigins(input.callback_origins ?? [], allowPrivate) : null,
        events: input.events as WebhookEvent[],
        progressEverySeconds: input.progress_interval_seconds ?? DEFAULT_PROGRESS_SECONDS,
        enabled: input.enabled ?? true,
        description: input.description ?? null,
        secret,
        createdAt: now,
      },
      MAX_ENDPOINTS_PER_OWNER,
    )
    .catch((err: unknown) => {
      // The one unique rule beside the id: one callback endpoint per token.
      if (callback && /unique|duplicate/i.test(String((err as Error).message)))
        throw bad('callback_origins', 'this token has a callback endpoint already: change it instead');
      throw err;
    });
  if (!endpoint) throw bad(tokenId ? 'token' : 'group', `a ${tokenId ? 'token' : 'group'} has at most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints`);
  await recordAudit(op, 'webhook.create', endpoint.id, null, endpointView(endpoint));
  return { endpoint, secret };
}

/** The endpoint of that id; not_found when none. */
export async function endpointOf(op: Pick<Operator, 'store'>, id: string): Promise<WebhookEndpoint> {
  const e = await op.store.getWebhookEndpoint(id);
  if (!e) throw new GatewayError('not_found', `no webhook endpoint ${JSON.stringify(id.slice(0, 100))}`);
  return e;
}

/** Changes some fields of an endpoint (the owner stays). */
export async function changeEndpoint(op: Operator, id: string, input: EndpointInput, allowPrivate: boolean): Promise<WebhookEndpoint> {
  const before = await endpointOf(op, id);
  if (input.token !== undefined || input.group !== undefined)
    throw bad(input.token !== undefined ? 'token' : 'group', 'the owner of an endpoint does not change: register another');
  const callback = before.url === null;
  if (callback && input.url !== undefined) throw bad('url', 'a callback endpoint has no url');
  if (!callback && input.callback_origins !== undefined) throw bad('callback_origins', 'only a callback endpoint (no url) has callback_origins');
  if (!callback && input.url === null) throw bad('url', 'an endpoint needs a url');
  const change: WebhookEndpointChange = {
    updatedAt: op.now?.() ?? Date.now(),
    ...(input.url ? { url: await checkedUrl(input.url, allowPrivate) } : {}),
    ...(input.callback_origins ? { callbackOrigins: await checkedOrigins(input.callback_origins, allowPrivate) } : {}),
    ...(input.events ? { events: input.events as WebhookEvent[] } : {}),
    ...(input.progress_interval_seconds !== undefined ? { progressEverySeconds: input.progress_interval_seconds } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
  };
  const after = await op.store.updateWebhookEndpoint(id, change);
  if (!after) throw new GatewayError('not_found', `no webhook endpoint ${JSON.stringify(id.slice(0, 100))}`);
  await recordAudit(op, 'webhook.update', id, endpointView(before), endpointView(after));
  return after;
}

/** A new secret for an endpoint; the current one keeps signing beside it for `graceSeconds`. Answers the new secret this once. */
export async function rotateEndpointSecret(
  op: Operator,
  id: string,
  graceSeconds = DEFAULT_GRACE_SECONDS,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  await endpointOf(op, id);
  const now = op.now?.() ?? Date.now();
  const secret = newSecret();
  const endpoint = await op.store.rotateWebhookSecret(id, secret, now + graceSeconds * 1000, now);
  if (!endpoint) throw new GatewayError('not_found', `no webhook endpoint ${JSON.stringify(id.slice(0, 100))}`);
  await recordAudit(op, 'webhook.rotate', id, null, {
    grace_seconds: graceSeconds,
    previous_secret_expires_at: endpointView(endpoint).previous_secret_expires_at,
  });
  return { endpoint, secret };
}

/** Deletes an endpoint; its deliveries still pending are given up. */
export async function deleteEndpoint(op: Operator, id: string): Promise<void> {
  const before = await endpointOf(op, id);
  await op.store.deleteWebhookEndpoint(id);
  await recordAudit(op, 'webhook.delete', id, endpointView(before), null);
}
