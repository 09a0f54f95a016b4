/**
 * The servers a test writes itself (a made-up vendor, an origin, a watcher): started on a free
 * port of 127.0.0.1 and closed with their kept-alive connections, so that no test names a port
 * and none waits on an idle socket at the end.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `server` on a free port of 127.0.0.1; resolves to its base URL. */
export function listenLocal(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/** Closes `server` and every connection it still holds (a gateway's pooled keep-alive sockets). */
export function closeLocal(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** The base URL of a local port nothing listens on (bound, then released): connections are refused. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  const url = await listenLocal(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}
