import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, DatabaseStartError, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { loadMigrations } from '../../src/pg/migrations.ts';
import { PgApiLog } from '../../src/pg/api-log.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import type { ApiLogEntry } from '../../src/log/entry.ts';
import type { LogPage } from '../../src/log/reader.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

async function open(url: string): Promise<Database> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  return db;
}

const tables = async (db: Database): Promise<string[]> =>
  (
    await db.sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`
  ).map((r) => r['table_name'] as string);

const recorded = async (db: Database) =>
  (await db.sql`select version, name, applied_at from schema_migrations order by version`).map((r) => ({ ...r }));

/** One table for each kind of state DATA_DIR holds (README, Data on disk). */
const STATE_TABLES = [
  'accounts_state',
  // A view of the chunks' lines, a row a line (migration 9).
  'api_log',
  'api_log_chunks',
  'api_log_seen',
  'audit_log',
  // Files' bytes, in chunks, with each paste's claims and the releases the file sweep reads (migration 16).
  'file_blobs',
  'file_chunks',
  'file_claims',
  'file_releases',
  'idempotency_records',
  'paste_revisions',
  // The views folded in since a paste's row was written (migration 14).
  'paste_views',
  'pastes',
  'rate_buckets',
  'revoked_tokens',
  'schema_migrations',
  'server_key',
  'sessions',
  'shown_once',
  'token_usage',
  'token_usage_hourly',
  'tokens',
  'upkeep_runs',
  'users',
];

test('migrate gives an empty database the schema and records each migration', async () => {
  const db = await open(await createTestDatabase());
  assert.deepEqual(await tables(db), []);
  const known = await loadMigrations();
  const result = await migrate(db.sql);
  assert.equal(result.from, 0);
  assert.equal(result.to, known.length);
  assert.deepEqual(
    result.applied.map((m) => m.version),
    known.map((m) => m.version),
  );
  assert.deepEqual(await tables(db), STATE_TABLES);
  const rows = await recorded(db);
  assert.deepEqual(
    rows.map((r) => [r['version'], r['name']]),
    known.map((m) => [m.version, m.name]),
  );
  assert.ok(rows.every((r) => r['applied_at'] instanceof Date));
  // Pages of pastes keep room for the next versions of their rows (migration 12).
  const [pastes] = await db.sql`select reloptions from pg_class where relname = 'pastes'`;
  assert.deepEqual(pastes?.['reloptions'], ['fillfactor=70']);
  // The API log's chunks are compressed with LZ4 (migration 13; Debian's PostgreSQL 15 has it).
  const [lines] = await db.sql`select attcompression from pg_attribute
    where attrelid = 'api_log_chunks'::regclass and attname = 'lines'`;
  assert.equal(lines?.['attcompression'], 'l');
  const [stored] = await db.sql`insert into api_log_chunks (first_time, last_time, line_count, lines)
    values (now(), now(), 1000, repeat('{"a":"b"}' || chr(10), 20000)) returning id`;
  const [method] = await db.sql`select pg_column_compression(lines) as m, length(lines) as n from api_log_chunks
    where id = ${stored?.['id'] as string}`;
  assert.deepEqual([method?.['m'], method?.['n']], ['lz4', 200_000]);
});

test('a second start changes nothing', async () => {
  const db = await open(await createTestDatabase());
  await migrate(db.sql);
  const before = await recorded(db);
  const again = await migrate(db.sql);
  assert.deepEqual(again.applied, []);
  assert.equal(again.from, again.to);
  assert.deepEqual(await recorded(db), before);
});

test('two instances starting together apply the migrations once', async () => {
  const url = await createTestDatabase();
  const [a, b] = await Promise.all([open(url), open(url)]);
  const results = await Promise.all([migrate(a.sql), migrate(b.sql)]);
  const counts = results.map((r) => r.applied.length).sort();
  const known = await loadMigrations();
  assert.deepEqual(counts, [0, known.length], 'one applied them, the other found them applied');
  assert.equal((await recorded(a)).length, known.length);
});

test('a schema newer than the server knows is refused in one line, and left alone', async () => {
  const db = await open(await createTestDatabase());
  const { to } = await migrate(db.sql);
  await db.sql`insert into schema_migrations (version, name) values (${to + 1}, 'from-the-future')`;
  const before = await recorded(db);
  await assert.rejects(migrate(db.sql), (err) => {
    assert.ok(err instanceof DatabaseStartError);
    assert.equal(
      err.message,
      `cannot start: the database's schema is version ${to + 1}, newer than this server knows (${to}); run a newer server or restore a backup`,
    );
    return true;
  });
  assert.deepEqual(await recorded(db), before);
});

test('a migration that fails leaves the database as it was: all pending migrations or none', async () => {
  const db = await open(await createTestDatabase());
  const [first] = await loadMigrations();
  assert.ok(first);
  const broken = { version: 2, name: 'broken', sql: 'create table half_done (id int); select 1 / 0;' };
  await assert.rejects(migrate(db.sql, [first, broken]), /division by zero/);
  assert.deepEqual(await tables(db), [], 'not even schema_migrations');
});

test("the schema holds a paste's short code once, and a text with U+0000 in it", async () => {
  const db = await open(await createTestDatabase());
  await migrate(db.sql);
  const paste = (hash: string) => db.sql`
    insert into pastes (hash, owner_id, privacy, created_at, updated_at, language, title, highlight, burn_after_read, content_json)
    values (${hash}, 1, 'public', now(), now(), 'text', '', false, false, ${JSON.stringify('a\u0000b')})
    returning shortcode, content_json`;
  const [row] = await paste('AbCdEf0123');
  assert.equal(row?.['shortcode'], 'AbCdEf');
  assert.equal(JSON.parse(row?.['content_json'] as string), 'a\u0000b');
  await assert.rejects(paste('AbCdEf9999'), (err) => (err as { code?: string }).code === '23505');
});

test('loadMigrations reads NNN-name.sql in order and refuses a gap or a badly named file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  try {
    await writeFile(join(dir, '002-second.sql'), 'select 2;');
    await writeFile(join(dir, '001-first.sql'), 'select 1;');
    await writeFile(join(dir, 'notes.txt'), 'not a migration');
    assert.deepEqual(await loadMigrations(dir), [
      { version: 1, name: 'first', sql: 'select 1;' },
      { version: 2, name: 'second', sql: 'select 2;' },
    ]);
    await writeFile(join(dir, '004-fourth.sql'), 'select 4;');
    await assert.rejects(loadMigrations(dir), /migration 3 should come next, found 4/);
    await rm(join(dir, '004-fourth.sql'));
    await writeFile(join(dir, '3-third.sql'), 'select 3;');
    await assert.rejects(loadMigrations(dir), /a migration is named NNN-name\.sql/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('migration 9 moves the API log rows into chunks, which read back as the rows were; the old name stays a view that takes inserts', async () => {
  const db = await open(await createTestDatabase());
  const all = await loadMigrations();
  await migrate(db.sql, all.slice(0, 8));
  // 2,500 rows: three chunks of the migration's thousand.
  await db.sql`
    insert into api_log (time, token_id, user_id, method, endpoint, endpoint_length, status, ip, duration_ms, request_id,
      error, unlogged)
    select to_timestamp(1700000000 + i), case when i % 3 = 0 then null else 'tok' || (i % 4) end,
      case when i % 5 = 0 then null else i % 7 end, 'GET', '/api/v1/paste.php', case when i = 7 then 250 end,
      case when i % 11 = 0 then 404 else 200 end, '10.0.0.' || (i % 9), i * 0.5,
      case when i % 11 = 0 then 'r' || i end, case when i % 11 = 0 then 'nope "' || i || '"' end,
      case when i = 9 then 3 end
    from generate_series(1, 2500) as i`;
  const before = await db.sql`select * from api_log order by id`;
  await migrate(db.sql, all);
  const log = new PgApiLog(db.sql);
  const entries: ApiLogEntry[] = [];
  for (let cursor: string | null = null; ; ) {
    const page: LogPage = await log.read({ limit: 500, ...(cursor === null ? {} : { cursor }) });
    entries.push(...page.entries);
    cursor = page.next;
    if (cursor === null) break;
  }
  const asLine = (r: Record<string, unknown>): Record<string, unknown> => {
    const line: Record<string, unknown> = {
      time: (r['time'] as Date).toISOString(),
      token_id: r['token_id'],
      user_id: r['user_id'],
      method: r['method'],
      endpoint: r['endpoint'],
    };
    if (r['endpoint_length'] !== null) line['endpoint_length'] = r['endpoint_length'];
    Object.assign(line, { status: r['status'], ip: r['ip'], duration_ms: r['duration_ms'] });
    for (const key of ['request_id', 'error', 'unlogged']) if (r[key] !== null) line[key] = r[key];
    return line;
  };
  assert.deepEqual(entries, before.map(asLine).reverse());
  assert.deepEqual(Object.keys(entries.find((e) => e.unlogged !== undefined) ?? {}), [
    ...['time', 'token_id', 'user_id', 'method', 'endpoint', 'status', 'ip', 'duration_ms', 'unlogged'],
  ]);
  assert.deepEqual(
    (await db.sql`select line_count from api_log_chunks order by id`).map((r) => r['line_count']),
    [999, 1000, 501],
  );
  // Filters find what they found before.
  const tok1 = (await log.read({ token_id: 'tok1', statusClass: 4, limit: 500 })).entries;
  assert.deepEqual(
    tok1.map((e) => e.duration_ms),
    before
      .filter((r) => r['token_id'] === 'tok1' && r['status'] === 404)
      .map((r) => r['duration_ms'])
      .reverse(),
  );

  // The view reads each line as a row, and a row inserted into it, as a server of the
  // version before would, becomes a chunk of one line that the filters find.
  const viewed = await db.sql`select * from api_log order by id`;
  assert.deepEqual(viewed.map(asLine), before.map(asLine));
  await db.sql`insert into api_log (time, token_id, user_id, method, endpoint, status, ip, duration_ms)
    values (now(), 'tok-old', 42, 'POST', '/api/v1/paste_create.php', 201, '10.1.1.1', 3.25)`;
  const [old] = (await log.read({ user_id: 42, endpoint: '/api/v1/paste_create.php' })).entries;
  assert.deepEqual([old?.token_id, old?.status, old?.duration_ms], ['tok-old', 201, 3.25]);
});

test('migration 14 keeps every count; the first fold of a paste that is not burned makes its row of views', async () => {
  const db = await open(await createTestDatabase());
  const all = await loadMigrations();
  await migrate(db.sql, all.slice(0, 13));
  await db.sql`
    insert into pastes (hash, owner_id, privacy, created_at, updated_at, language, title, highlight, burn_after_read,
      burned, view_count, content_json)
    values ('Living0014', 1, 'public', now(), now(), 'text', '', true, false, false, 4, '"x"'),
      ('Burned0014', 1, 'public', now(), now(), 'text', '', true, true, true, 1, '""')`;
  await migrate(db.sql, all);
  const store = new PgPasteStore(db.sql);
  assert.equal((await store.get('Living0014'))?.view_count, 4);
  assert.equal((await store.get('Burned0014'))?.view_count, 1);
  const views = new PgViewCounts(db.sql);
  views.add('Living0014', 4);
  views.add('Burned0014', 1);
  await views.drain();
  assert.equal((await store.get('Living0014'))?.view_count, 5);
  assert.equal((await store.get('Burned0014'))?.view_count, 1);
  const rows = await db.sql`select hash, views::int as views from paste_views order by hash`;
  assert.deepEqual(
    rows.map((r) => ({ ...r })),
    [{ hash: 'Living0014', views: 1 }],
  );
});
