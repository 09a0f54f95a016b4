import type { AddressInfo } from 'node:net';
import type { Server } from 'node:net';

/** Where a listening server is bound, and a URL that reaches it from this machine. */
export interface ListenAddress {
  /** The address bound, as the system reports it: `0.0.0.0` or `::` for every interface. */
  readonly address: string;
  readonly port: number;
  /** A URL to call it at: a wildcard address becomes the loopback (a wildcard is no place to connect to). */
  readonly url: string;
}

/** The bound address of a listening server, and a usable URL for it. */
export function listenAddress(server: Server, tls: boolean): ListenAddress {
  const { address, port, family } = server.address() as AddressInfo;
  const v6 = family === 'IPv6' || (family as unknown) === 6;
  const host = address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '[::1]' : v6 ? `[${address}]` : address;
  return { address, port, url: `${tls ? 'https' : 'http'}://${host}:${port}` };
}
