import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import { linkIdOf } from '../links/hand-out.js';
import { signFor } from '../pipeline/call-upstream.js';
import type { LinkRequest } from '../pipeline/context.js';
import type { LinkRecord, Store } from '../store/store.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';
import type { ArchivedFiles } from './deps.js';
import type { Pools } from '../upstream/pools.js';
import { addCallerHeaders } from '../upstream/trace-headers.js';
import { abortOnClose, fetchVendorFile, FILE_HEADERS, rangeOf, streamVendorFile, unlessServable } from './vendor-file.js';

/** A secret as links carry them (base64url); anything else is no link of ours, and never reaches the store. */
const SECRET = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * Serves a link a synchronous answer handed out (docs/client-api.md, "Links instead of vendor URLs"): a stored
 * file from the store, a vendor's URL fetched through the channel that answered and streamed as a
 * task download is (Range passes, redirects are followed here, the vendor's URL and key stay
 * behind). An unknown or expired link, and one whose token was deleted, is `not_found`.
 */
export async function runLinkContent(
  req: IncomingMessage,
  res: ServerResponse,
  link: LinkRequest,
  deps: { readonly store: Store; readonly pools: Pools; readonly archive?: ArchivedFiles | null },
): Promise<void> {
  const secret = Object.values(link.params)[0] ?? '';
  const found = SECRET.test(secret) ? await deps.store.getLink(linkIdOf(secret), link.now.getTime()) : null;
  if (!found) throw new GatewayError('not_found', 'this link is unknown or has expired');
  if (found.data) return sendStored(res, found, found.data, link);
  // Archived: served from the archive; one away leaves it to the vendor, whose refusal is then the archive's outage.
  const archived = deps.archive && found.url !== null ? await deps.archive.serveLink(req, res, found, link) : 'not_archived';
  if (archived === 'served') return;
  const channel = link.snapshot.channelsByName.get(found.channel);
  if (!channel) throw new GatewayError('upstream_unavailable', 'the channel that made this file is no longer configured');
  // A link stands for stored bytes or for a vendor's URL.
  if (found.url === null) throw new GatewayError('internal_error', 'the link stands for no file');
  const upstream: UpstreamRequest = { method: 'GET', path: found.url, query: {}, headers: {}, body: null };
  addCallerHeaders(upstream, link);
  // Presigned URLs carry their own credentials; the channel's go only to the channel's own origin.
  const signed = signFor(channel, upstream, link.now);
  const answer = await fetchVendorFile(deps.pools, channel, { req: upstream, signed }, link, rangeOf(req), abortOnClose(res));
  await streamVendorFile(archived === 'unavailable' ? unlessServable(answer) : answer, res, channel, link.requestId, link.log, { link: found.id.slice(0, 12) });
}

/** A file the gateway stored: its bytes at once, cacheable by the client until the link expires. */
function sendStored(res: ServerResponse, found: LinkRecord, data: Buffer, link: LinkRequest): void {
  const maxAge = Math.max(0, Math.floor((found.expiresAt - link.now.getTime()) / 1000));
  res.writeHead(200, {
    'x-request-id': link.requestId,
    ...FILE_HEADERS,
    'content-type': found.contentType ?? 'application/octet-stream',
    'content-length': data.length,
    'cache-control': `private, max-age=${maxAge}`,
  });
  res.end(data);
}
