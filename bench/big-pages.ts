/**
 * Times the pages that read a whole user's or the whole log's rows, on a large PostgreSQL
 * install made by bench/seed-postgres.ts (bench/README.md, "Large installs on PostgreSQL"):
 * starts the server on the database, signs in as the seed's admin and many-pastes user, and
 * prints each page's median time.
 *
 *   node --import tsx bench/big-pages.ts --url postgres://... [--runs 7] [--only REGEXP] [--crowd N]
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { migrate } from '../src/pg/migrate.ts';
import { removeTempDir, spawnServer, tempDir } from './proc.ts';
import { ADMIN, BIG_USER, DEFAULT_SIZES, tokenId } from './seed-postgres.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    runs: { type: 'string' },
    only: { type: 'string' },
    crowd: { type: 'string' },
  },
});
if (values.url === undefined) throw new Error('usage: big-pages.ts --url postgres://... [--runs 7] [--only REGEXP]');
const url = values.url;
const runs = Number(values.runs ?? 7);

/** A signed-in browser: its cookies, over fetch. */
class Session {
  readonly #cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async get(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.#cookies.size > 0) headers.set('cookie', [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(this.base + path, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      this.#cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return res;
  }

  async login(name: string, password: string): Promise<void> {
    const form = await (await this.get('/login')).text();
    const csrf = /name="_csrf" value="([^"]*)"/.exec(form)?.[1] ?? '';
    const body = new URLSearchParams({ _csrf: csrf, name, password, next: '/' });
    const res = await this.get('/login', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    if (res.status !== 303) throw new Error(`login as ${name}: ${res.status} ${await res.text()}`);
  }
}

/** The median of `runs` timed GETs after one untimed one, and what the page says it found. */
async function time(s: Session, path: string): Promise<{ ms: number; note: string }> {
  const note = summary(await (await s.get(path)).text());
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = await s.get(path);
    const text = await res.text();
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] as number, note };
}

/** What the page says it holds: "N pastes found", a user count, or the log rows shown. */
function summary(page: string): string {
  const found = /(?:More than )?(\d+) (?:pastes?) (?:found|in all)/.exec(page)?.[0];
  const stopped = /The search stopped after your newest (\d+) of (\d+)/.exec(page);
  if (found !== undefined) return found + (stopped === null ? '' : ` (stopped after ${stopped[1]} of ${stopped[2]})`);
  const users = /(\d+) in all/.exec(page)?.[0];
  if (users !== undefined) return `${users} users`;
  return `${Math.max(0, (page.match(/<tr/g) ?? []).length - 1)} log rows`;
}

const day = 86_400_000;
const isoMinute = (ms: number): string => new Date(ms).toISOString().slice(0, 16);
const now = Date.now();
const oldToken = tokenId(DEFAULT_SIZES.users * 2 + 3);
const PAGES: [string, string][] = [
  ['My pastes, page 1', '/my'],
  ['My pastes, page 500', '/my?page=500'],
  ['My search: a title word (kubernetes)', '/my?q=kubernetes'],
  ['My search: a word in every text (function)', '/my?q=function'],
  ['My search: one paste (ticket 420000)', `/my?q=${encodeURIComponent('ticket 420000')}`],
  ['My search: nothing matches', '/my?q=zanzibar'],
  ['My search: word + language + privacy', '/my?q=Redis&language=go&privacy=private'],
  ['My search: a language', '/my?language=go'],
  ['My search: a word in 1 of 90 pastes (ticket 12)', `/my?q=${encodeURIComponent('ticket 12')}`],
  ['My search: a word in 1 of 9 pastes (ticket 3)', `/my?q=${encodeURIComponent('ticket 3')}`],
  ['My search: a word in every text, page 50', '/my?q=function&page=50'],
  ['My search: no plain letter (Łódź)', `/my?q=${encodeURIComponent('Łódź')}`],
  ['My search: no plain letter, no match (日本)', `/my?q=${encodeURIComponent('日本')}`],
  ['My search: 200 × U+0130 (İ)', `/my?q=${encodeURIComponent('\u0130'.repeat(200))}`],
  ['Admin users', '/admin/users'],
  ['API log, no filter', '/admin/logs'],
  ['API log, a recent token', `/admin/logs?token=${tokenId(10)}`],
  ['API log, a token seen only long ago', `/admin/logs?token=${oldToken}`],
  ['API log, a user seen only long ago', '/admin/logs?user=5'],
  ['API log, an endpoint used only long ago', '/admin/logs?endpoint=/api/v1/paste_edit.php'],
  ['API log, 5xx (only long ago)', '/admin/logs?status=5'],
  ['API log, 4xx of a user with none (no match)', '/admin/logs?status=4&user=5'],
  ['API log, one old day', `/admin/logs?from=${isoMinute(now - 28 * day)}&to=${isoMinute(now - 27 * day)}`],
  ['API log, old day + user', `/admin/logs?from=${isoMinute(now - 28 * day)}&to=${isoMinute(now - 27 * day)}&user=42`],
];

/**
 * `n` searches for 200 × U+0130 at once by the many-pastes user, and meanwhile another user's
 * page and /healthz, once a quarter second: what each got, and how long the others waited.
 */
async function crowd(many: Session, other: Session, n: number): Promise<void> {
  const q = `/my?q=${encodeURIComponent('\u0130'.repeat(200))}`;
  const t0 = performance.now();
  let done = false;
  const searches = Promise.all(
    Array.from({ length: n }, async () => {
      const res = await many.get(q);
      await res.text();
      return { status: res.status, ms: performance.now() - t0 };
    }),
  ).finally(() => {
    done = true;
  });
  const beside: { page: number; health: number; ms: number }[] = [];
  while (!done) {
    const t = performance.now();
    const [page, health] = await Promise.all([other.get('/my'), fetch(`${other.base}/healthz`)]);
    await Promise.all([page.text(), health.text()]);
    beside.push({ page: page.status, health: health.status, ms: performance.now() - t });
    await new Promise((r) => setTimeout(r, 250));
  }
  const answered = await searches;
  const statuses = new Map<number, number>();
  for (const a of answered) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const slowest = Math.max(...answered.map((a) => a.ms));
  process.stdout.write(
    `\n${n} searches for 200 × U+0130 at once: ${[...statuses].map(([s, k]) => `${k} × ${s}`).join(', ')}, ` +
      `the last answered after ${slowest.toFixed(0)} ms\n`,
  );
  process.stdout.write(
    `meanwhile another user's My pastes and /healthz, ${beside.length} times: statuses ` +
      `${[...new Set(beside.flatMap((b) => [b.page, b.health]))].join(', ')}, slowest ` +
      `${Math.max(...beside.map((b) => b.ms)).toFixed(0)} ms\n`,
  );
}

// Pending migrations run here, without the server's start-up timeout: an index on a large table takes a while.
const sql = postgres(url, { max: 1, onnotice: () => {} });
const t0 = performance.now();
const { applied } = await migrate(sql);
const [size] =
  await sql`select (select count(*) from pastes)::int as pastes, (select count(*) from api_log)::int as log`;
await sql.end();
if (applied.length > 0)
  process.stdout.write(
    `migrated (${applied.map((m) => m.name).join(', ')}) in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );
process.stdout.write(`${size?.['pastes']} pastes, ${size?.['log']} API log lines; median of ${runs}\n\n`);

const dataDir = await tempDir('big');
const server = await spawnServer('server', ['node', '--import', 'tsx', 'src/main.ts'], {
  DATA_DIR: dataDir,
  DATABASE_URL: url,
  LOG_RETENTION_DAYS: String(DEFAULT_SIZES.retentionDays),
});
try {
  const base = `http://127.0.0.1:${server.port}`;
  const admin = new Session(base);
  await admin.login(ADMIN.name, ADMIN.password);
  const many = new Session(base);
  await many.login(BIG_USER.name, BIG_USER.password);
  process.stdout.write('| page | median ms | found |\n| --- | ---: | --- |\n');
  for (const [label, path] of PAGES) {
    if (values.only !== undefined && !new RegExp(values.only).test(label)) continue;
    const { ms, note } = await time(path.startsWith('/admin') ? admin : many, path);
    process.stdout.write(`| ${label} | ${ms.toFixed(0)} | ${note} |\n`);
  }
  if (values.crowd !== undefined) await crowd(many, admin, Number(values.crowd));
} finally {
  await server.stop();
  await removeTempDir(dataDir);
}
