/**
 * A server connection that ends in the same read as the message that completes it (a FATAL 57P01 right after
 * ReadyForQuery, as when the server shuts down while a pool connection is being made): the statement that
 * wanted the connection fails, and the process goes on. A minimal PostgreSQL wire peer on loopback sends
 * both messages in one write, which is the only way to make the two arrive together every time.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { openDb } from '../../src/adapters/postgres/db.ts';

/** A backend message: type byte, Int32 length (counting itself), body (PostgreSQL manual, "Message Formats"). */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const AUTHENTICATION_OK = message('R', Buffer.from([0, 0, 0, 0]));
const READY_FOR_QUERY = message('Z', Buffer.from('I', 'latin1'));
const FATAL_ADMIN_SHUTDOWN = message(
  'E',
  Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0', 'latin1'),
);

test(
  'a FATAL in the same read as the ReadyForQuery that completes a new pool connection fails that statement, not ' +
    'the process',
  async () => {
    const sockets: Socket[] = [];
    const server: Server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
      // The first read is the StartupMessage (no SSLRequest: the URL asks for none).
      socket.once('data', () => {
        socket.end(Buffer.concat([AUTHENTICATION_OK, READY_FOR_QUERY, FATAL_ADMIN_SHUTDOWN]));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => {
      uncaught.push(error);
    };
    process.on('uncaughtException', onUncaught);
    const db = await openDb({
      databaseUrl: `postgresql://postgres@127.0.0.1:${port}/tidings`,
      dataDir: '',
      poolSize: 1,
    });
    try {
      await assert.rejects(db.query('SELECT 1'), 'the statement on the ended connection fails');
      await assert.rejects(
        db.query('SELECT 1'),
        'and so does the next one, on a new connection that ends the same way',
      );
      assert.deepEqual(
        uncaught.map((e) => (e instanceof Error ? e.message : String(e))),
        [],
        'no error event went unheard',
      );
    } finally {
      process.off('uncaughtException', onUncaught);
      await db.close();
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  },
);
