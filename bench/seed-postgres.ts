/**
 * Fills a PostgreSQL database with a large install, in bulk SQL (bench/README.md, "Large
 * installs on PostgreSQL"): users and tokens, pastes over many users with one user holding
 * many of them, and API log lines over the retention window. Rows are shaped as the server
 * writes them (pg/paste-row.ts, pg/account-rows.ts, pg/api-log.ts), so a server started on the
 * database serves them.
 *
 *   node --import tsx bench/seed-postgres.ts [--url postgres://...] [--pastes N] [--log-lines N]
 *
 * Without --url it seeds a throwaway cluster (test/helpers/postgres.ts), prints its URL and
 * keeps it running until Ctrl-C.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import postgres, { type Sql } from 'postgres';
import { Passwords } from '../src/crypto/passwords.ts';
import { CHUNK_LINES } from '../src/pg/api-log.ts';
import { migrate } from '../src/pg/migrate.ts';

export interface SeedSizes {
  pastes: number;
  logLines: number;
  /** Pastes the user BIG_USER owns. */
  bigUserPastes: number;
  users: number;
  tokensPerUser: number;
  /** LOG_RETENTION_DAYS the server will run with: the log spans a little less. */
  retentionDays: number;
}

export const DEFAULT_SIZES: SeedSizes = {
  pastes: 1_000_000,
  logLines: 2_000_000,
  bigUserPastes: 50_000,
  users: 2_000,
  tokensPerUser: 3,
  retentionDays: 30,
};

/** Who signs in to measure: an admin (user 1) and the user with many pastes (user 2). */
export const ADMIN = { name: 'admin', password: 'bench-admin-password' };
export const BIG_USER = { name: 'many', password: 'bench-many-password' };

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LANGS = ['text', 'javascript', 'typescript', 'python', 'go', 'rust', 'sql', 'bash', 'yaml', 'json', 'markdown'];
const WORDS = (
  'cache queue retry parser config deploy invoice ledger webhook session cursor token batch export import ' +
  'schema migration backup restore report metrics health shard replica index vacuum checkpoint buffer socket ' +
  'stream upload download thumbnail encoder decoder router handler middleware scheduler worker cron timeout ' +
  'kubernetes docker nginx postgres redis kafka terraform ansible grafana prometheus elastic lambda'
).split(' ');
const NAMES = ['Müller', 'Straße', 'café', 'naïve', 'Zoë', 'Łódź', 'ÆSIR', 'İstanbul', 'Kelvin K', 'ΣΊΣΥΦΟΣ'];

/** A deterministic stream of numbers in [0, 1), so two seeds of the same size are alike. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Texts to build pastes from: code and notes of 200 bytes to about 2 kB, some with accents. */
function bodies(count: number): string[] {
  const rnd = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const lines: string[] = [`// ${pick(WORDS)} ${pick(WORDS)}: ${pick(NAMES)}`];
    const blocks = 1 + Math.floor(rnd() * 8);
    for (let b = 0; b < blocks; b++) {
      const [f, a, c] = [pick(WORDS), pick(WORDS), pick(WORDS)];
      lines.push(
        `function ${f}_${a}(${c}, options) {`,
        `  const ${a} = await load${c[0]?.toUpperCase()}${c.slice(1)}(${c}, { retries: ${b + 1} });`,
        `  if (!${a}) throw new Error("no ${a} for \\"${c}\\"");`,
        `\treturn ${f}(${a}); // TODO ${pick(WORDS)}`,
        '}',
        '',
      );
    }
    out.push(lines.join('\n'));
  }
  return out;
}

/** The next free user id and the accounts' version, as the accounts store keeps them. */
async function seedAccounts(sql: Sql, s: SeedSizes, now: number): Promise<void> {
  const passwords = new Passwords();
  const [adminHash, bigHash] = await Promise.all([passwords.hash(ADMIN.password), passwords.hash(BIG_USER.password)]);
  const year = 365 * 86_400_000;
  // Users 1 (admin) and 2 (the many-pastes user) sign in; the rest sign in with tokens only.
  await sql`insert into users (id, name, role, password, created_at, disabled, last_login_at)
    select i, case i when 1 then ${ADMIN.name} when 2 then ${BIG_USER.name} else 'user' || lpad(i::text, 5, '0') end,
      case when i = 1 or i % 500 = 0 then 'admin' else 'user' end,
      case i when 1 then ${adminHash} when 2 then ${bigHash} else null end,
      to_timestamp((${now - year}::float8 + i * 1000) / 1000), i % 97 = 0,
      case when i % 3 = 0 then null else to_timestamp((${now}::float8 - i * 60000) / 1000) end
    from generate_series(1, ${s.users}) i`;
  const tokens = s.users * s.tokensPerUser;
  const ids: string[] = [];
  const hashes: string[] = [];
  for (let i = 0; i < tokens; i++) {
    const id = tokenId(i);
    ids.push(id);
    hashes.push(
      createHash('sha256')
        .update(`pst_${id}_${'x'.repeat(24)}${id}`)
        .digest('hex'),
    );
  }
  await sql`insert into tokens (id, user_id, label, scopes, rate_limit_per_minute, hash, created_at, expires_at)
    select t.id, 1 + (t.n - 1) % ${s.users}, 'key ' || t.n,
      case when t.n % 7 = 0 then '{read}'::text[] else '{read,write}'::text[] end,
      60, t.hash, to_timestamp((${now - year}::float8 + t.n * 1000) / 1000), null
    from unnest(${ids}::text[], ${hashes}::text[]) with ordinality as t(id, hash, n) order by t.n`;
  await sql`update accounts_state set version = version + 1, next_user_id = ${s.users + 1}`;
}

/** Token i's id: eight base62 characters, unique per i. */
export function tokenId(i: number): string {
  let out = '';
  let n = i + 62 ** 5;
  for (let k = 0; k < 8; k++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/**
 * The pastes, in slices: hash = six base62 digits of the number (the short code, unique) and
 * four more; the first `bigUserPastes` belong to user 2 and are spread through time among
 * everyone else's. Content is stored as JSON.stringify writes it (to_json's escapes are the same).
 */
async function seedPastes(sql: Sql, s: SeedSizes, now: number, say: (m: string) => void): Promise<void> {
  const texts = bodies(1_000);
  await sql`create temporary table bench_bodies (n integer primary key, body text not null)`;
  await sql`insert into bench_bodies select n - 1, b from unnest(${texts}::text[]) with ordinality as t(b, n)`;
  const span = 365 * 86_400_000;
  const slice = 100_000;
  for (let from = 1; from <= s.pastes; from += slice) {
    const to = Math.min(s.pastes, from + slice - 1);
    // The many-pastes user's share is taken evenly through the numbers, so through time.
    const every = Math.max(1, Math.floor(s.pastes / Math.max(1, s.bigUserPastes)));
    await sql`
      insert into pastes (hash, owner_id, privacy, created_at, updated_at, expire_at, burned, language, title,
        revision, view_count, highlight, burn_after_read, password, content_json, receipt, sweep_at)
      select h, o, p, c, c, e, false, l, t, 1, i % 1000, true, false, null, to_json(b)::text, null, e
      from (
        select i, ${hashSql(sql)} as h,
          case when i % ${every} = 0 and i / ${every} <= ${s.bigUserPastes} then 2
            else 3 + i % ${Math.max(1, s.users - 2)} end as o,
          (array['public', 'public', 'unlisted', 'private'])[1 + (i / 7) % 4] as p,
          to_timestamp((${now - span}::float8 + i::float8 * ${span / s.pastes}) / 1000) as c,
          case when i % 20 = 1 then to_timestamp((${now}::float8 + 86400000::float8 * (1 + i % 300)) / 1000) end as e,
          (${LANGS}::text[])[1 + (i / 7) % ${LANGS.length}] as l,
          initcap((${WORDS}::text[])[1 + i % ${WORDS.length}])
            || ' ' || (${WORDS}::text[])[1 + (i / 13) % ${WORDS.length}]
            || case when i % 11 = 0 then ' for ' || (${NAMES}::text[])[1 + i % ${NAMES.length}] else '' end
            || ' #' || i as t,
          (select body from bench_bodies where n = i % 1000) || E'\nticket ' || i || E'\n' as b
        from generate_series(${from}::int, ${to}::int) i
      ) x order by i`;
    say(`pastes ${to}/${s.pastes}`);
  }
}

/** Ten base62 characters from i: six for the (unique) short code, four that vary. */
const hashSql = (sql: Sql) => sql`(
  select string_agg(substr(${BASE62}, 1 + ((i::bigint / (62::bigint ^ k)::bigint) % 62)::int, 1), '' order by k desc)
  from generate_series(0, 5) k) || substr(md5(i::text), 1, 4)`;

/**
 * API log lines over the retention window, oldest first (ids in time order, as written):
 * mostly paste reads by recent tokens; some tokens, one user, one endpoint and the 5xx
 * answers only in the oldest days, which is what a filter that matches only old lines finds.
 */
async function seedLog(sql: Sql, s: SeedSizes, now: number, say: (m: string) => void): Promise<void> {
  const span = (s.retentionDays - 1) * 86_400_000;
  const tokens = s.users * s.tokensPerUser;
  const slice = 250_000;
  // The lines as rows first, then as the server writes them: chunks of CHUNK_LINES with the
  // values each holds, made by the SQL of the migration that brought chunks (009-api-log-chunks.sql).
  await sql`
    create unlogged table bench_log_rows (id bigint primary key, time timestamptz, token_id text, user_id integer,
      method text, endpoint text, endpoint_length integer, status smallint, ip text, duration_ms float8,
      request_id text, error text, unlogged integer)`;
  for (let from = 1; from <= s.logLines; from += slice) {
    const to = Math.min(s.logLines, from + slice - 1);
    await sql`
      insert into bench_log_rows (id, time, token_id, user_id, method, endpoint, endpoint_length, status, ip,
        duration_ms, request_id, error, unlogged)
      select i, to_timestamp((${now - span}::float8 + i::float8 * ${span / s.logLines}) / 1000),
        case when anon then null else tok end, case when anon then null else 1 + (t - 1) % ${s.users} end,
        case when ep = '/api/v1/paste_create.php' then 'POST' else 'GET' end, ep, null, st,
        '10.' || (t % 250) || '.' || (i % 250) || '.' || (1 + i % 200), 0.3 + (i % 977) / 97.0,
        'bench-' || to_hex(i), case when st >= 400 then 'refused ' || st end, null
      from (
        select i, i % 10 = 0 as anon, t, ${tokenIdSql(sql)} as tok, old,
          case when old and i % 50 = 0 then '/api/v1/paste_edit.php'
               when i % 5 = 0 then '/api/v1/paste_create.php' when i % 3 = 0 then '/api/v1/raw.php'
               else '/api/v1/paste.php' end as ep,
          case when old and i % 400 = 0 then 503 when i % 25 = 0 then 404 when i % 60 = 0 then 429
               when i % 5 = 0 then 201 else 200 end as st
        from (
          select i, i <= ${Math.floor(s.logLines / 10)} as old,
            -- The first tenth of the lines (the oldest days) also uses the tokens of users 3 to 9, and only it.
            case when i <= ${Math.floor(s.logLines / 10)} and i % 4 = 0 then ${s.users * 2} + 3 + i % 7
                 else 1 + (i::bigint * 7919) % ${Math.max(1, s.users * 2)} end as t0
          from generate_series(${from}::int, ${to}::int) i) y,
          -- Users 3 to 9 are seen only in the oldest days: their other tokens' lines go to users 10 to 16.
          lateral (
            select case when not old and (t0 - 1) % ${s.users} + 1 between 3 and 9 then t0 + 7 else t0 end as t) z
      ) x order by i`;
    say(`log lines ${to}/${s.logLines}`);
  }
  const [base] = await sql`select coalesce(max(id), 0)::int as n from api_log_chunks`;
  const first = (base?.['n'] as number) + 1;
  const chunk = () => sql`(${first}::bigint + (id - 1) / ${CHUNK_LINES})`;
  await sql`
    insert into api_log_chunks (id, first_time, last_time, line_count, lines) overriding system value
    select ${chunk()}, min(time), max(time), count(*),
      string_agg(api_log_line(time, token_id, user_id, method, endpoint, endpoint_length, status, ip, duration_ms,
        request_id, error, unlogged), E'\n' order by id)
    from bench_log_rows group by 1`;
  await sql`
    insert into api_log_seen (kind, value, chunk)
    select distinct 't'::"char", token_id, ${chunk()} from bench_log_rows where token_id is not null
    union select distinct 'u'::"char", user_id::text, ${chunk()} from bench_log_rows where user_id is not null
    union select distinct 'e'::"char", endpoint, ${chunk()} from bench_log_rows
    union select distinct 's'::"char", (status / 100)::text, ${chunk()} from bench_log_rows`;
  await sql`select setval(pg_get_serial_sequence('api_log_chunks', 'id'), (select max(id) from api_log_chunks))`;
  await sql`drop table bench_log_rows`;
  say('log lines in chunks');
  if (tokens < s.users * 2 + 10) throw new Error('seed: at least 4 tokens per user (ids for the old-only tokens)');
}

/** Token number t's id, as tokenId makes it (t counts from 1). */
const tokenIdSql = (sql: Sql) => sql`(
  select string_agg(
    substr(${BASE62}, 1 + (((t - 1 + 916132832)::bigint / (62::bigint ^ k)::bigint) % 62)::int, 1), '' order by k desc)
  from generate_series(0, 7) k)`;

/** Migrates the database at `url` and fills it; `say` hears progress. */
export async function seed(url: string, s: SeedSizes, say: (m: string) => void = () => {}): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(sql);
    const [row] =
      await sql`select (select count(*) from users)::int as users, (select count(*) from pastes)::int as pastes`;
    if (row?.['users'] !== 0 || row['pastes'] !== 0)
      throw new Error('seed: the database already holds users or pastes');
    await sql`set statement_timeout = 0`;
    const now = Date.now();
    const t0 = performance.now();
    await seedAccounts(sql, s, now);
    say(`users ${s.users}, tokens ${s.users * s.tokensPerUser}`);
    await seedPastes(sql, s, now, say);
    await seedLog(sql, s, now, say);
    // The server reads content_json with JSON.parse and writes it with JSON.stringify: same text both ways.
    for (const r of await sql`select content_json from pastes order by hash limit 200`) {
      const c = r['content_json'] as string;
      if (JSON.stringify(JSON.parse(c)) !== c)
        throw new Error(`seed: content_json is not as JSON.stringify writes it: ${c}`);
    }
    await sql`vacuum analyze`;
    say(`seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  } finally {
    await sql.end();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      pastes: { type: 'string' },
      'log-lines': { type: 'string' },
      users: { type: 'string' },
      'big-user-pastes': { type: 'string' },
    },
  });
  const num = (v: string | undefined, d: number): number => (v === undefined ? d : Number(v.replaceAll('_', '')));
  const sizes: SeedSizes = {
    ...DEFAULT_SIZES,
    pastes: num(values.pastes, DEFAULT_SIZES.pastes),
    logLines: num(values['log-lines'], DEFAULT_SIZES.logLines),
    users: num(values.users, DEFAULT_SIZES.users),
    bigUserPastes: num(values['big-user-pastes'], DEFAULT_SIZES.bigUserPastes),
  };
  let url = values.url;
  if (url === undefined) {
    const { createTestDatabase } = await import('../test/helpers/postgres.ts');
    url = await createTestDatabase();
  }
  const say = (m: string): void => void process.stderr.write(`${m}\n`);
  await seed(url, sizes, say);
  if (values.url === undefined) {
    process.stdout.write(`DATABASE_URL=${url}\n(the cluster stops and is removed on Ctrl-C)\n`);
    await new Promise(() => {});
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
