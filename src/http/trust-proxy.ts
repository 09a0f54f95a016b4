import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
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
  | { readonly kind: 'list'; readonly blocks: readonly Block[]; readonly text: string };

/**
 * An address block: its first address and mask. Matched in JavaScript: with node:net's BlockList
 * (a SocketAddress made per check) the client of a request through two proxies took 26 µs to find,
 * this way about 2 µs (less than its request id).
 */
type Block = { readonly family: 4; readonly net: number; readonly mask: number } | { readonly family: 6; readonly net: bigint; readonly shift: bigint };

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
  const blocks = entries.flatMap((entry) => (NAMED[entry.toLowerCase()] ?? [entry]).map((block) => blockOf(block, entry)));
  return { kind: 'list', blocks, text: entries.join(',') };
}

function blockOf(block: string, entry: string): Block {
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
  const length = prefix === undefined ? bits : Number(prefix);
  if (family === 4) {
    const mask = length === 0 ? 0 : (~0 << (32 - length)) >>> 0;
    return { family: 4, net: (v4(address) & mask) >>> 0, mask };
  }
  const shift = BigInt(128 - length);
  return { family: 6, net: v6(address) >> shift, shift };
}

/** A dotted IPv4 address (isIP said so) as a 32-bit number; read by character, since it runs per hop of every request. */
function v4(address: string): number {
  let n = 0;
  let part = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 46) {
      n = n * 256 + part;
      part = 0;
    } else part = part * 10 + (c - 48);
  }
  return n * 256 + part;
}

/** An IPv6 address (isIP said so; a zone is dropped) as a 128-bit number. */
function v6(address: string): bigint {
  let text = address.split('%')[0] ?? '';
  const last = text.lastIndexOf(':');
  // An IPv4 tail (`::ffff:10.0.0.1`, `64:ff9b::192.0.2.1`) as the two groups it stands for.
  if (text.includes('.', last)) {
    const n = v4(text.slice(last + 1));
    text = `${text.slice(0, last + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? front : [...front, ...new Array<string>(8 - front.length - back.length).fill('0'), ...back];
  let n = 0n;
  for (const g of groups) n = (n << 16n) | BigInt(Number.parseInt(g, 16));
  return n;
}

/** Whether an address of `family` (isIP's answer; 0: not an address, never in) is in one of the blocks. */
function inBlocks(blocks: readonly Block[], address: string, family: number): boolean {
  if (family === 4) {
    const n = v4(address);
    return blocks.some((b) => b.family === 4 && (n & b.mask) >>> 0 === b.net);
  }
  if (family !== 6) return false;
  const n = v6(address);
  return blocks.some((b) => b.family === 6 && n >> b.shift === b.net);
}

/** An IPv4 address as Node reports it on a dual-stack socket (`::ffff:10.0.0.1`), written as IPv4. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Whether the hop `hop` away (0: the peer itself), at `address` of `family` (isIP's answer), is believed. */
function believes(trust: TrustProxy, address: string, family: number, hop: number): boolean {
  switch (trust.kind) {
    case 'none':
      return false;
    case 'all':
      return true;
    case 'hops':
      return hop < trust.hops;
    case 'list':
      return inBlocks(trust.blocks, address, family);
  }
}

/**
 * The client's address: the peer, or, walking X-Forwarded-For from its right end (the entry the
 * nearest proxy added), the first address not believed, as Express's `req.ip`. A value that is not an
 * address ends the walk at the last hop that is one: a log line never carries what a client made up.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  let address = plain(req.socket.remoteAddress ?? '');
  if (trust.kind === 'none' || !believes(trust, address, isIP(address), 0)) return address;
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded !== 'string') return address;
  const hops = forwarded.split(',');
  for (let i = hops.length - 1, hop = 1; i >= 0; i--, hop++) {
    const next = plain(hops[i]?.trim() ?? '');
    const family = isIP(next);
    if (family === 0) return address;
    address = next;
    if (!believes(trust, address, family, hop)) return address;
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
  const peer = plain(req.socket.remoteAddress ?? '');
  if (trust.kind !== 'none' && believes(trust, peer, isIP(peer), 0)) {
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
