import type { Sql } from 'postgres';
import { randomBytes } from 'node:crypto';

/**
 * The web side's signing key (store/server-key.ts), in the one row of `server_key`: made by
 * whichever instance comes first, kept across restarts, the same for every instance, so what
 * one signs (anonymous CSRF tokens, unlock grants, login budget keys) another recognises. An
 * instance that loses the race to make it inserts nothing and reads the winner's.
 */
export async function loadServerKey(sql: Sql): Promise<Buffer> {
  await sql`insert into server_key (key) values (${randomBytes(32)}) on conflict (id) do nothing`;
  const [row] = await sql`select key from server_key`;
  const key = row?.['key'];
  // The table's checks allow nothing else; a changed schema should stop the start, not sign with it.
  if (!Buffer.isBuffer(key) || key.length !== 32) throw new Error('the server_key row is not a 32-byte key');
  return key;
}
