import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** A TCP proxy in front of a store (PostgreSQL, Redis) that a test can cut, silence and let speak again. */
export interface FaultProxy {
  readonly port: number;
  /** Connections open now (pairs). */
  readonly open: number;
  /** Destroys every connection pair at once (both sides see a reset/close), as a server restart or a pgbouncer restart does; new connections are accepted as usual. Returns how many pairs were cut. */
  reset(): number;
  /** Silent: new connections are accepted but nothing is forwarded either way, and bytes on existing pairs are held, not forwarded (a store that accepts and never answers, a network partition). */
  silence(): void;
  /** Ends the silence: held bytes are forwarded in order, and connections accepted while silent are connected to the target now. */
  speak(): void;
  close(): Promise<void>;
}

/** One client connection and its connection to the target; `upstream` is null until it is dialled (later, if accepted while silent). */
interface Pair {
  readonly client: Socket;
  upstream: Socket | null;
}

/**
 * Listens on 127.0.0.1, port 0, and forwards each connection to `targetHost:targetPort`. When the
 * target refuses or fails, the client's connection is reset: through a proxy that is as close as it
 * gets to the ECONNREFUSED the client would see without one.
 */
export async function faultProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultProxy> {
  const pairs = new Set<Pair>();
  let silent = false;

  /** Forwards `from` to `to`, pausing `from` while `to` is backed up; the silence keeps it paused. */
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!silent) from.resume();
    });
    from.on('end', () => {
      if (!to.destroyed) to.end();
    });
  };

  /** Ends a pair as one of its sides ended: a clean close is passed on as a close (after the bytes in flight), an error as a reset. */
  const onClose = (pair: Pair, side: Socket, hadError: boolean) => {
    const other = side === pair.client ? pair.upstream : pair.client;
    if (other && !other.destroyed) {
      if (hadError) hardReset(other);
      else other.end();
    }
    // A client gone before it was dialled (upstream still null) leaves nothing to wait for.
    if (pair.client.destroyed && (!pair.upstream || pair.upstream.destroyed)) pairs.delete(pair);
  };

  const dial = (pair: Pair) => {
    if (pair.client.destroyed) {
      pairs.delete(pair);
      return;
    }
    const upstream = connect({ port: targetPort, host: targetHost });
    pair.upstream = upstream;
    upstream.setNoDelay(true);
    // Errors on a socket end its pair and nothing else: the test sees them through its own client.
    upstream.on('error', () => undefined);
    upstream.on('close', (hadError) => onClose(pair, upstream, hadError));
    forward(pair.client, upstream);
    forward(upstream, pair.client);
    pair.client.resume();
  };

  // pauseOnConnect: a connection accepted while silent must not be read from until speak().
  const server = createServer({ pauseOnConnect: true }, (client) => {
    const pair: Pair = { client, upstream: null };
    pairs.add(pair);
    client.setNoDelay(true);
    client.on('error', () => undefined);
    client.on('close', (hadError) => onClose(pair, client, hadError));
    if (!silent) dial(pair);
  });
  // After listen, a server error (EMFILE on accept) must not take the test process down.
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | null = null;
  return {
    port,
    get open() {
      return pairs.size;
    },
    reset() {
      const cut = pairs.size;
      for (const { client, upstream } of pairs) {
        hardReset(client);
        if (upstream) hardReset(upstream);
      }
      pairs.clear();
      return cut;
    },
    silence() {
      silent = true;
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream?.pause();
      }
    },
    speak() {
      silent = false;
      for (const pair of [...pairs]) {
        if (!pair.upstream) dial(pair);
        else {
          pair.client.resume();
          pair.upstream.resume();
        }
      }
    },
    close() {
      return (closing ??= new Promise<void>((resolve) => {
        // server.close() waits for every connection to end, so they go first.
        server.close(() => resolve());
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream?.destroy();
        }
        pairs.clear();
      }));
    },
  };
}

/** Closes a socket with a TCP RST (the peer sees ECONNRESET) where Node can (18.3+), else plainly. */
function hardReset(socket: Socket): void {
  if (socket.destroyed) return;
  // Still connecting, resetAndDestroy() would wait for the connection only to reset it.
  if (typeof socket.resetAndDestroy === 'function' && !socket.connecting) {
    try {
      socket.resetAndDestroy();
      return;
    } catch {
      // not a TCP handle after all: fall through
    }
  }
  socket.destroy();
}
