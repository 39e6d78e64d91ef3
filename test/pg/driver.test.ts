import assert from 'node:assert/strict';
import { createServer, connect as tcpConnect, type Socket } from 'node:net';
import { test } from 'node:test';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/postgres.ts';

/**
 * A loopback proxy to the database that resets the client's connection (TCP RST) as soon as
 * the client sends a message holding `marker`.
 */
async function resettingProxy(target: URL, marker: string): Promise<{ port: number; close: () => Promise<void> }> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port), target.hostname);
    open.add(client).add(upstream);
    client.on('data', (d: Buffer) => {
      if (d.includes(marker)) {
        client.resetAndDestroy();
        upstream.destroy();
      } else upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => client.write(d));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('a connection lost while the driver asks for the array types fails its query, and leaves nothing unhandled', async () => {
  const url = new URL(await createTestDatabase());
  // The driver's first question on a new connection reads pg_type's array types.
  const proxy = await resettingProxy(url, "typcategory = 'A'");
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => void unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  const sql = postgres({
    host: '127.0.0.1',
    port: proxy.port,
    database: url.pathname.slice(1),
    username: 'postgres',
    max: 1,
    onnotice: () => {},
  });
  try {
    await assert.rejects(sql`select 1 as one`, (err: { code?: string }) =>
      /ECONNRESET|CONNECTION_CLOSED/.test(String(err.code)),
    );
    // An absence is checked, so there is nothing to poll for: the stray rejection has time to surface.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(
      unhandled,
      [],
      'the array types query rejected where nobody catches it (vendor/README.md, fault 3)',
    );
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await sql.end({ timeout: 0 });
    await proxy.close();
  }
});
