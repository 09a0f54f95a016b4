import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * Which proxies in front of the gateway are believed (GATEWAY_TRUST_PROXY), modelled on Express's
 * `trust proxy`: `false` (the default: nobody; the peer is the client), `true` (every hop), a number
 * of hops counted from the gateway, or a comma list of addresses, CIDR blocks and the names
 * `loopback`, `linklocal`, `uniquelocal`. A peer that is not believed may send any X-Forwarded-*
 * it likes: it changes neither the logged client address nor the origin of link URLs.
 */
export type TrustProxy =
  | { readonly kind: 'none' }
  | { readonly kind: 'all' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'list'; readonly list: BlockList; readonly text: string };

/** Believes nobody: the default. */
export const TRUST_NOBODY: TrustProxy = Object.freeze({ kind: 'none' });

/** The setting's name, for its errors. */
const SETTING = 'GATEWAY_TRUST_PROXY';
const MAX_HOPS = 32;
const MAX_ENTRIES = 64;
/** Express's names for the private ranges a proxy usually sits in. */
const NAMED: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};
/** A Host or X-Forwarded-Host value the gateway will write into a URL: a name or address and a port, nothing else. */
const HOST = /^[A-Za-z0-9.:[\]-]{1,300}$/;

/** Reads GATEWAY_TRUST_PROXY; unset or empty believes nobody. Throws a message naming the setting. */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const text = (raw ?? '').trim();
  if (text === '' || /^(false|0)$/i.test(text)) return TRUST_NOBODY;
  if (/^true$/i.test(text)) return { kind: 'all' };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > MAX_HOPS) throw new Error(`${SETTING} must be false, true, a number of hops from 0 to ${MAX_HOPS}, or a comma list of addresses`);
    return { kind: 'hops', hops };
  }
  const entries = text.split(',').map((e) => e.trim());
  if (entries.length > MAX_ENTRIES) throw new Error(`${SETTING} lists more than ${MAX_ENTRIES} entries`);
  const list = new BlockList();
  for (const entry of entries) for (const block of NAMED[entry.toLowerCase()] ?? [entry]) addBlock(list, block, entry);
  return { kind: 'list', list, text: entries.join(',') };
}

function addBlock(list: BlockList, block: string, entry: string): void {
  const [address = '', prefix, extra] = block.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const ok = family !== 0 && extra === undefined && (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits));
  if (!ok) {
    throw new Error(
      `${SETTING}: ${JSON.stringify(entry.slice(0, 100))} is not an address, a CIDR block (10.0.0.0/8) or one of loopback, linklocal, uniquelocal; ` +
        'the setting is false, true, a number of hops, or a comma list of those',
    );
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) list.addAddress(address, type);
  else list.addSubnet(address, Number(prefix), type);
}

/** An IPv4 address as Node reports it on a dual-stack socket (`::ffff:10.0.0.1`), written as IPv4. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Whether the hop `hop` away (0: the peer itself), at `address`, is believed. */
function believes(trust: TrustProxy, address: string, hop: number): boolean {
  switch (trust.kind) {
    case 'none':
      return false;
    case 'all':
      return true;
    case 'hops':
      return hop < trust.hops;
    case 'list': {
      const family = isIP(address);
      return family !== 0 && trust.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
    }
  }
}

/**
 * The client's address: the peer, or, walking X-Forwarded-For from its right end (the entry the
 * nearest proxy added), the first address not believed, as Express's `req.ip`. A value that is not an
 * address ends the walk at the last hop that is one: a log line never carries what a client made up.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  let address = plain(req.socket.remoteAddress ?? '');
  if (trust.kind === 'none' || !believes(trust, address, 0)) return address;
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded !== 'string') return address;
  const hops = forwarded.split(',');
  for (let i = hops.length - 1, hop = 1; i >= 0; i--, hop++) {
    const next = plain(hops[i]?.trim() ?? '');
    if (isIP(next) === 0) return address;
    address = next;
    if (!believes(trust, address, hop)) return address;
  }
  return address;
}

/** The first value of a header a proxy may have given as a list (`https, http`). */
function firstValue(value: string | string[] | undefined): string | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (typeof v !== 'string') return null;
  const comma = v.indexOf(',');
  return (comma === -1 ? v : v.slice(0, comma)).trim();
}

/**
 * Where the client reached the gateway, as `scheme://host[:port]`: from X-Forwarded-Proto and
 * X-Forwarded-Host when the peer is believed (their first values, as Express reads them; a proxy
 * should set them, not append), else from the connection (TLS or not) and the Host header. A value
 * that is not `http`/`https` or not a plain host is ignored; a missing or odd Host gives the
 * address the connection came in on.
 */
export function requestOrigin(req: IncomingMessage, trust: TrustProxy): string {
  const own = (req.socket as TLSSocket).encrypted === true ? 'https' : 'http';
  let proto = own;
  let host = typeof req.headers.host === 'string' && HOST.test(req.headers.host) ? req.headers.host : null;
  if (trust.kind !== 'none' && believes(trust, plain(req.socket.remoteAddress ?? ''), 0)) {
    const p = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
    if (p === 'http' || p === 'https') proto = p;
    const h = firstValue(req.headers['x-forwarded-host']);
    if (h !== null && HOST.test(h)) host = h;
  }
  return `${proto}://${host ?? `127.0.0.1:${req.socket.localPort ?? 0}`}`;
}

/** The setting as a reader would write it back, for the start-up log. */
export function describeTrust(trust: TrustProxy): string {
  switch (trust.kind) {
    case 'none':
      return 'false';
    case 'all':
      return 'true';
    case 'hops':
      return String(trust.hops);
    case 'list':
      return trust.text;
  }
}
