/**
 * A token's IP allow-list (docs/tokens-and-quota.md, "IP allow-list"): the CIDR blocks or single
 * addresses, IPv4 or IPv6, its requests may come from. The address checked is the client's as
 * src/http/trust-proxy.ts finds it (the peer, or what a believed proxy's X-Forwarded-For names).
 */
import { BlockList, isIP } from 'node:net';
import { GatewayError } from '../errors/gateway-error.js';

/** The most entries a list may have. */
export const MAX_ALLOWED_IPS = 100;
/** The longest entry: a full IPv6 address with an IPv4 tail and a prefix fits. */
const MAX_ENTRY_LENGTH = 64;

/** What an entry must look like, for the errors that refuse one. */
export const ALLOWED_IP_FORM = 'an IPv4 or IPv6 address or CIDR block (203.0.113.7, 10.0.0.0/8, 2001:db8::/32)';

/** Why `entry` cannot be in an allow-list; null when it can. */
export function allowedIpProblem(entry: string): string | null {
  const shown = JSON.stringify(entry.slice(0, MAX_ENTRY_LENGTH));
  if (entry.length > MAX_ENTRY_LENGTH) return `${shown}… is not ${ALLOWED_IP_FORM}`;
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  // A zone (fe80::1%eth0) names an interface of one host: it means nothing in a client's address.
  const ok = family !== 0 && !address.includes('%') && extra === undefined && (prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= bits));
  return ok ? null : `${shown} is not ${ALLOWED_IP_FORM}`;
}

/** Why a whole list cannot be a token's (naming the first bad entry); null when it can. */
export function allowListProblem(entries: readonly string[]): string | null {
  if (entries.length === 0) return 'an allow-list names at least one address or block (for any address, remove the list)';
  if (entries.length > MAX_ALLOWED_IPS) return `an allow-list has at most ${MAX_ALLOWED_IPS} entries, not ${entries.length}`;
  for (const entry of entries) {
    const problem = allowedIpProblem(entry);
    if (problem) return problem;
  }
  return null;
}

/** The BlockList of a list: built once per list a cached token record holds, not per request. */
const compiled = new WeakMap<readonly string[], BlockList>();

function blockListOf(entries: readonly string[]): BlockList {
  let list = compiled.get(entries);
  if (list) return list;
  list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  compiled.set(entries, list);
  return list;
}

/** Whether `address` (the client's) is in the list; an IPv4 address is also tried as IPv4-mapped IPv6 (`::ffff:a.b.c.d`), and the reverse. */
export function ipAllowed(entries: readonly string[], address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const list = blockListOf(entries);
  if (family === 4) return list.check(address, 'ipv4') || list.check(`::ffff:${address}`, 'ipv6');
  if (list.check(address, 'ipv6')) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] !== undefined && list.check(mapped[1], 'ipv4');
}

/** Refuses a request from outside a token's allow-list: ip_not_allowed, naming the address it came from, never the list. */
export function checkClientAddress(entries: readonly string[] | null | undefined, address: string): void {
  if (!entries || ipAllowed(entries, address)) return;
  const from = address === '' ? 'an unknown address' : address.slice(0, 64);
  throw new GatewayError('ip_not_allowed', `this API key may not be used from ${from}; ask for the address to be allowed`);
}
