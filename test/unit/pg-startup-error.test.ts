/**
 * A PostgreSQL connection that ends in the same chunk that finished its start-up (a fast shutdown
 * sends 57P01 to every backend, one of which had just said ReadyForQuery): pg emits that as an
 * 'error' on the client before the code that asked for the connection can listen to it. Unheard,
 * it ended the process (seen in the store-fault test); now the statement fails store_unavailable
 * and the process goes on. A fake server speaks just enough of the protocol to make it happen.
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { Database } from '../../src/store/postgres/database.js';
import { isStoreUnavailable } from '../../src/store/unavailable.js';

/** A protocol message: its type byte, its length (itself included) and its body. */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const AUTH_OK = message('R', Buffer.from([0, 0, 0, 0]));
const READY = message('Z', Buffer.from('I', 'latin1'));
const FATAL = message('E', Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0', 'latin1'));

test('a connection ended in the chunk that finished its start-up fails the statement store_unavailable, and the process goes on', async () => {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    // The start-up message arrives first; everything after it is answered with one write.
    socket.once('data', () => {
      connections++;
      socket.end(Buffer.concat([AUTH_OK, READY, FATAL]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const db = new Database(`postgres://gateway@127.0.0.1:${port}/gateway`, 2, { connectMs: 2_000, statementMs: 2_000, idleInTransactionMs: 2_000 });
  try {
    await assert.rejects(db.query('SELECT 1'), (err) => isStoreUnavailable(err));
    assert.ok(connections >= 1, 'the fake server was reached');
  } finally {
    await db.end();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
