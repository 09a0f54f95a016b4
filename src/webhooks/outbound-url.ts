/**
 * Where the gateway may send a webhook (docs/webhooks.md, "Where deliveries may go"): https only,
 * and never to a private, loopback, link-local, CGNAT, unique-local or metadata address, unless the
 * operator allows private addresses (GATEWAY_WEBHOOK_ALLOW_PRIVATE=1, which also allows http).
 * Checked when an endpoint or a callback URL is registered, and again at each delivery against the
 * address actually connected to (`guardedLookup`), so a name that resolves elsewhere later (DNS
 * rebinding) is refused too.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** The longest URL accepted. */
export const MAX_URL_LENGTH = 2000;

const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv6');

/** Whether an address is one no webhook may reach without GATEWAY_WEBHOOK_ALLOW_PRIVATE (the cloud metadata addresses 169.254.169.254 and fd00:ec2::254 included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return BLOCKED.check(mapped[1], 'ipv4');
  return BLOCKED.check(address, 'ipv6');
}

/** Why a URL cannot receive webhooks as written (scheme, form, a private literal address); null when it may, subject to where its name resolves. */
export function urlProblem(raw: string, allowPrivate: boolean): string | null {
  if (raw.length > MAX_URL_LENGTH) return `a webhook URL has at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${JSON.stringify(raw.slice(0, 100))} is not an absolute URL`;
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return allowPrivate ? 'a webhook URL is https:// or http://' : 'a webhook URL is https:// (http:// only where GATEWAY_WEBHOOK_ALLOW_PRIVATE=1)';
  }
  if (url.username !== '' || url.password !== '') return 'a webhook URL carries no user name or password';
  if (url.hash !== '') return 'a webhook URL has no #fragment';
  const host = hostOf(url);
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host)))) {
    return `${host} is a private, loopback or link-local address (GATEWAY_WEBHOOK_ALLOW_PRIVATE=1 allows them)`;
  }
  return null;
}

/** The host of a URL as an address or a name (an IPv6 literal without its brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** Why a URL's name resolves where no webhook may go (or does not resolve); null when every address it resolves to is public, or private ones are allowed. */
export async function resolvedProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  const host = hostOf(new URL(raw));
  if (allowPrivate || isIP(host) !== 0) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await new Promise((resolve, reject) => dnsLookup(host, { all: true }, (err, a) => (err ? reject(err) : resolve(a))));
  } catch {
    return `${host} does not resolve`;
  }
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  return bad ? `${host} resolves to ${bad.address}, a private, loopback or link-local address (GATEWAY_WEBHOOK_ALLOW_PRIVATE=1 allows them)` : null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the sockets of deliveries: resolves as node:dns does, and fails the connection
 * when the address it would connect to is private (the check at the moment of connecting).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (host: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(host, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const bad = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (bad) {
        const refusal: NodeJS.ErrnoException = new Error(`${host} resolves to ${bad.address}, a private address; the delivery was not sent`);
        refusal.code = 'EPRIVATE';
        return callback(refusal, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
