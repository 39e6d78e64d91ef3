import { copyFile, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after } from 'node:test';
import type { Sql } from 'postgres';
import type { AccountsDoc } from '../../src/auth/records.ts';
import { shortcodeOf } from '../../src/paste/paste.ts';
import { readAccounts } from '../../src/pg/account-rows.ts';
import { chunkEntry } from '../../src/pg/api-log-query.ts';
import { ACCOUNTS_CHANNEL } from '../../src/pg/accounts.ts';
import { revisionRowOf } from '../../src/pg/paste-row.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { BACKEND, backendEnv } from './backend.ts';
import { beforeClusterStops } from './postgres.ts';

/**
 * What a server stored, read the way its backend keeps it (CONTRIBUTING, Tests): the data folder's
 * files, or the database's rows. Tests that look behind the API (a secret never stored in
 * clear, a log line's fields) read through these, so they hold on both backends.
 */

const pools = new Map<string, Sql>();

const endPools = async (): Promise<void> => {
  await Promise.all([...pools.values()].map((sql) => sql.end({ timeout: 1 })));
  pools.clear();
};
after(endPools);
beforeClusterStops(endPools);

/** A connection to the database of this data folder (TEST_BACKEND=postgres only). */
export async function database(dataDir: string): Promise<Sql> {
  const url = (await backendEnv(dataDir))['DATABASE_URL'];
  if (url === undefined) throw new Error('database() needs TEST_BACKEND=postgres');
  let sql = pools.get(url);
  if (sql === undefined) {
    const { default: postgres } = await import('postgres');
    sql = postgres(url, { max: 2, onnotice: () => undefined });
    pools.set(url, sql);
  }
  return sql;
}

const ms = (column: string): string => `(extract(epoch from ${column}) * 1000)::float8`;

/** The API log's lines as JSON objects, oldest first, with the keys the file lines have. */
export async function apiLogLines(dataDir: string): Promise<Record<string, unknown>[]> {
  if (BACKEND === 'files') {
    const dir = join(dataDir, 'logs');
    const lines: Record<string, unknown>[] = [];
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const f of names.filter((n) => n.startsWith('api-')).sort())
      for (const line of (await readFile(join(dir, f), 'utf8')).split('\n'))
        if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
    return lines;
  }
  // Each chunk's lines, read back as the file lines (migrations/009-api-log-chunks.sql).
  const sql = await database(dataDir);
  const chunks = await sql<{ lines: string }[]>`select lines from api_log_chunks order by id`;
  return chunks.flatMap((c) =>
    c.lines
      .split('\n')
      // A line retention deleted leaves a null in its place.
      .filter((line) => line !== 'null')
      .map((line) => ({ ...(chunkEntry(line) ?? { unreadable: line }) }) as Record<string, unknown>),
  );
}

/** The audit log's entries, oldest first, as the file lines hold them. */
export async function auditEntries(dataDir: string): Promise<Record<string, unknown>[]> {
  if (BACKEND === 'files') {
    const dir = join(dataDir, 'logs');
    const out: Record<string, unknown>[] = [];
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const f of names.filter((n) => n.startsWith('audit-')).sort())
      for (const line of (await readFile(join(dir, f), 'utf8')).split('\n'))
        if (line) out.push(JSON.parse(line) as Record<string, unknown>);
    return out;
  }
  const sql = await database(dataDir);
  const rows = await sql.unsafe(`select *, ${ms('time')} as time_ms from audit_log order by id`);
  return rows.map((r) => ({
    time: new Date(r['time_ms'] as number).toISOString(),
    via: r['via'],
    user_id: r['user_id'],
    user: r['user_name'],
    ip: r['ip'],
    action: r['action'],
    target: r['target'],
    before: r['before'],
    after: r['after'],
  }));
}

/** The accounts as the file holds them (users, tokens, revoked token ids): the file, or its rows. */
export async function storedAccounts(dataDir: string): Promise<AccountsDoc> {
  if (BACKEND === 'files') return JSON.parse(await readFile(join(dataDir, 'accounts.json'), 'utf8')) as AccountsDoc;
  return (await readAccounts(await database(dataDir))).doc;
}

/** The login sessions as stored, by key (the SHA-256 hex of the cookie's id), in key order. */
export async function storedSessions(dataDir: string): Promise<{ key: string; record: Record<string, unknown> }[]> {
  if (BACKEND === 'files') {
    const dir = join(dataDir, 'sessions');
    const out: { key: string; record: Record<string, unknown> }[] = [];
    for (const name of (await readdir(dir).catch(() => [] as string[])).sort())
      if (name.endsWith('.json'))
        out.push({
          key: name.slice(0, -'.json'.length),
          record: JSON.parse(await readFile(join(dir, name), 'utf8')) as Record<string, unknown>,
        });
    return out;
  }
  const sql = await database(dataDir);
  const rows = await sql.unsafe(
    `select key, user_id, csrf, ${ms('created_at')} as created_at, ${ms('last_seen')} as last_seen from sessions order by key`,
  );
  return rows.map(({ key, ...record }) => ({ key: key as string, record }));
}

/** Moves a stored session's last use back by `ms` (with the server stopped), as if it had idled. */
export async function ageSession(dataDir: string, key: string, by: number): Promise<void> {
  if (BACKEND === 'files') {
    const file = join(dataDir, 'sessions', `${key}.json`);
    const rec = JSON.parse(await readFile(file, 'utf8')) as { last_seen: number };
    rec.last_seen -= by;
    await writeFile(file, JSON.stringify(rec));
    return;
  }
  const sql = await database(dataDir);
  const { count } =
    await sql`update sessions set last_seen = last_seen - ${by} * interval '1 millisecond' where key = ${key}`;
  if (count !== 1) throw new Error(`no stored session ${key}`);
}

/** The keys of the rate-limit buckets as saved (the state file written at a clean stop, or the rows). */
export async function storedBucketKeys(dataDir: string): Promise<string[]> {
  if (BACKEND === 'files') {
    const text = await readFile(join(dataDir, 'state', 'ratelimit.json'), 'utf8');
    return Object.keys(JSON.parse(text) as object);
  }
  const sql = await database(dataDir);
  return (await sql<{ key: string }[]>`select key from rate_buckets order by key`).map((r) => r.key);
}

/**
 * Everything the backend holds, as one text to search (a secret must be nowhere in it): every
 * file under the data folder, or every row of every table.
 */
export async function everythingStored(dataDir: string): Promise<string> {
  let out = await allFiles(dataDir);
  if (BACKEND === 'postgres') {
    const sql = await database(dataDir);
    const tables = await sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public'`;
    for (const { name } of tables) out += JSON.stringify(await sql.unsafe(`select * from "${name}"`));
  }
  return out;
}

async function allFiles(dir: string): Promise<string> {
  let out = '';
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name);
    out += e.isDirectory() ? await allFiles(p) : await readFile(p, 'utf8').catch(() => '');
  }
  return out;
}

/** A paste as stored (the file's JSON, or its row), or null when there is none. */
export async function storedPaste(dataDir: string, hash: string): Promise<Record<string, unknown> | null> {
  if (BACKEND === 'files') {
    const code = shortcodeOf(hash);
    const text = await readFile(join(dataDir, 'pastes', code.slice(0, 2), `${code}.json`), 'utf8').catch(() => null);
    return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
  }
  const sql = await database(dataDir);
  const [row] = await sql`select * from pastes where hash = ${hash}`;
  return row === undefined ? null : { ...row };
}

/** How many pastes are stored, tombstones included: the paste files, or the rows. */
export async function storedPasteCount(dataDir: string): Promise<number> {
  if (BACKEND === 'files') {
    const root = join(dataDir, 'pastes');
    let n = 0;
    for (const shard of await readdir(root).catch(() => [] as string[])) n += (await readdir(join(root, shard))).length;
    return n;
  }
  const sql = await database(dataDir);
  const [row] = await sql`select count(*)::int as n from pastes`;
  return row?.['n'] as number;
}

/** How many Idempotency-Key records are stored: the files of idempotency/, or the rows. */
export async function storedIdempotencyRecords(dataDir: string): Promise<number> {
  if (BACKEND === 'files') return (await readdir(join(dataDir, 'idempotency'))).length;
  const sql = await database(dataDir);
  const [row] = await sql`select count(*)::int as n from idempotency_records`;
  return row?.['n'] as number;
}

/** The revision numbers kept of a paste, oldest first: its `.rN.json` files, or its rows of paste_revisions. */
export async function storedRevisions(dataDir: string, hash: string): Promise<number[]> {
  if (BACKEND === 'files') {
    const code = shortcodeOf(hash);
    const names = await readdir(join(dataDir, 'pastes', code.slice(0, 2))).catch(() => [] as string[]);
    const kept = names.map((n) => new RegExp(`^${code}\\.r(\\d+)\\.json$`).exec(n)?.[1]).filter((n) => n !== undefined);
    return kept.map(Number).sort((a, b) => a - b);
  }
  const sql = await database(dataDir);
  const rows = await sql`select revision from paste_revisions where hash = ${hash} order by revision`;
  return rows.map((r) => r['revision'] as number);
}

/**
 * Keeps a paste's current version as its revision `revision`, behind the server's back, as an
 * earlier version of the server may have left it: a copy of its file, or a row of paste_revisions.
 */
export async function plantRevision(dataDir: string, hash: string, revision: number): Promise<void> {
  if (BACKEND === 'files') {
    const code = shortcodeOf(hash);
    const dir = join(dataDir, 'pastes', code.slice(0, 2));
    await copyFile(join(dir, `${code}.json`), join(dir, `${code}.r${revision}.json`));
    return;
  }
  const sql = await database(dataDir);
  const paste = await new PgPasteStore(sql).get(hash);
  if (paste === null) throw new Error(`no stored paste ${hash}`);
  await sql`insert into paste_revisions ${sql(revisionRowOf(hash, { ...paste, revision }))}`;
}

/** A paste's file, where the store keeps it. */
const pasteFile = (dataDir: string, hash: string): string => {
  const code = shortcodeOf(hash);
  return join(dataDir, 'pastes', code.slice(0, 2), `${code}.json`);
};

/**
 * Replaces a paste's stored password hash with `plant(old)`, behind the server's back (a
 * damaged or hand-edited store): its file rewritten, or its row updated. Stop the server
 * first: the file store keeps pastes in memory.
 */
export async function plantPastePassword(dataDir: string, hash: string, plant: (old: string) => string): Promise<void> {
  if (BACKEND === 'files') {
    const file = pasteFile(dataDir, hash);
    const record = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    record['password'] = plant(record['password'] as string);
    await writeFile(file, JSON.stringify(record));
    return;
  }
  const sql = await database(dataDir);
  const [row] = await sql<{ password: string }[]>`select password from pastes where hash = ${hash}`;
  if (row === undefined) throw new Error(`no stored paste ${hash}`);
  await sql`update pastes set password = ${plant(row.password)} where hash = ${hash}`;
}

/**
 * Replaces a user's stored password hash with `plant(old)` as another writer of the accounts
 * would, so a running server takes it up: the file replaced whole by a rename (which the
 * server watches for), or the row changed under the accounts lock with the version moved on
 * and announced (pg/accounts.ts).
 */
export async function plantUserPassword(dataDir: string, name: string, plant: (old: string) => string): Promise<void> {
  if (BACKEND === 'files') {
    const file = join(dataDir, 'accounts.json');
    const doc = JSON.parse(await readFile(file, 'utf8')) as { users: { name: string; password: string }[] };
    const user = doc.users.find((u) => u.name === name);
    if (user === undefined) throw new Error(`no user ${name}`);
    user.password = plant(user.password);
    await writeFile(`${file}.new`, JSON.stringify(doc));
    await rename(`${file}.new`, file);
    return;
  }
  const sql = await database(dataDir);
  await sql.begin(async (tx) => {
    // The accounts lock first, as every writer takes it (pg/accounts.ts, mutate).
    await tx`select version from accounts_state for update`;
    const [user] = await tx<{ password: string }[]>`select password from users where name = ${name}`;
    if (user === undefined) throw new Error(`no user ${name}`);
    await tx`update users set password = ${plant(user.password)} where name = ${name}`;
    const [state] = await tx<{ version: string }[]>`
      update accounts_state set version = version + 1 returning version::text as version`;
    await tx`select pg_notify(${ACCOUNTS_CHANNEL}, ${state?.version ?? ''})`;
  });
}

/** The SHA-256 of every file's bytes the server holds (README, Files), sorted. */
export async function storedFileBytes(dataDir: string): Promise<string[]> {
  if (BACKEND === 'files') {
    const root = join(dataDir, 'files');
    const out: string[] = [];
    for (const shard of await readdir(root).catch(() => [] as string[]))
      if (/^[0-9a-f]{2}$/.test(shard))
        for (const name of await readdir(join(root, shard))) if (/^[0-9a-f]{64}$/.test(name)) out.push(name);
    return out.sort();
  }
  const sql = await database(dataDir);
  const rows = await sql<{ sha256: string }[]>`select sha256 from file_blobs order by sha256`;
  return rows.map((r) => r.sha256);
}

/** Uploads spooled and not yet stored or removed (DATA_DIR/tmp on both backends). */
export async function spooledUploads(dataDir: string): Promise<string[]> {
  const names = await readdir(join(dataDir, 'tmp')).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith('upload-'));
}

/**
 * The SHA-256 of every file a stored paste names, in its current version or a kept one: the
 * bytes the store must hold, and all it may hold once the file sweep has run.
 */
export async function namedFileBytes(dataDir: string): Promise<string[]> {
  const named = new Set<string>();
  const add = (stored: unknown): void => {
    const files = typeof stored === 'string' ? (JSON.parse(stored) as unknown) : stored;
    if (Array.isArray(files)) for (const f of files as { sha256: string }[]) named.add(f.sha256);
  };
  if (BACKEND === 'files') {
    const root = join(dataDir, 'pastes');
    for (const shard of await readdir(root).catch(() => [] as string[]))
      for (const name of await readdir(join(root, shard)).catch(() => [] as string[]))
        if (name.endsWith('.json'))
          add((JSON.parse(await readFile(join(root, shard, name), 'utf8')) as { files?: unknown }).files);
    return [...named].sort();
  }
  const sql = await database(dataDir);
  for (const r of await sql<{ files: unknown }[]>`select files from pastes where files is not null`) add(r.files);
  for (const r of await sql<{ files: unknown }[]>`select fields->'files' as files from paste_revisions`) add(r.files);
  return [...named].sort();
}
