/**
 * A submission's own webhook (docs/webhooks.md, "A submission's callback_url"): the URL a task
 * submission names, in its JSON body's top-level `callback_url` (the routes whose vendor format has
 * one) or, on any task submission, in the `Gateway-Callback-Url` header. It is taken only from a
 * token with a callback endpoint (an endpoint registered with `callback_origins` and no url), and
 * only within those origins: another origin, or a URL no webhook may reach, is a 400
 * `invalid_request` naming `callback_url`. A token without one has its `callback_url` ignored, as
 * before webhooks (the vendor formats that carry one keep working). Deliveries to it are signed
 * with the callback endpoint's secret and follow its events.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { Store } from '../store/store.js';
import { resolvedProblem, urlProblem } from './outbound-url.js';

/** The header that names a submission's callback URL on routes whose body has no such field. */
export const CALLBACK_HEADER = 'gateway-callback-url';

/** The callback URL a submission names, if any: the body's `callback_url`, else the header. */
export function namedCallback(body: unknown, header: string | string[] | undefined): unknown {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && 'callback_url' in body) {
    const v = (body as { callback_url?: unknown }).callback_url;
    if (v !== undefined && v !== null && v !== '') return v;
  }
  return Array.isArray(header) ? header[0] : header;
}

const refuse = (message: string) => new GatewayError('invalid_request', message, { param: 'callback_url' });

/**
 * The callback endpoint and URL a submission's task is delivered to, or null when it names none
 * (or its token has no callback endpoint); invalid_request naming callback_url when it may not.
 */
export async function checkedCallback(
  store: Store,
  tokenId: string,
  named: unknown,
  allowPrivate: boolean,
): Promise<{ endpointId: string; url: string } | null> {
  if (named === undefined || named === null || named === '') return null;
  const endpoint = await store.callbackEndpointOf(tokenId);
  if (!endpoint) return null;
  if (typeof named !== 'string') throw refuse('callback_url must be a URL');
  const problem = urlProblem(named, allowPrivate);
  if (problem) throw refuse(`callback_url: ${problem}`);
  const origin = new URL(named).origin;
  if (!(endpoint.callbackOrigins ?? []).includes(origin)) {
    throw refuse(`callback_url: ${origin} is not an origin this API key may send webhooks to; ask the operator to allow it`);
  }
  const resolved = await resolvedProblem(named, allowPrivate);
  if (resolved) throw refuse(`callback_url: ${resolved}`);
  return { endpointId: endpoint.id, url: named };
}
