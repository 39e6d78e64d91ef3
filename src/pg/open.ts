import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from 'postgres';
import { fileBlobsFor, servedFileBlobs } from '../files/open.ts';
import { ClaimedFiles, type FileBlobs, sweepFiles } from '../paste/files.ts';
import { PgFileBlobs, PgFileClaims } from './file-bytes.ts';
import { apiLogOver, LOG_FLUSH_MS, type CliStorage, type Storage, type StorageOptions, UPKEEP_MS } from '../backend.ts';
import type { Job } from '../jobs/job.ts';
import type { Config } from '../config.ts';
import { Reminder } from '../log/reminder.ts';
import { PgAccounts } from './accounts.ts';
import { PgApiLog } from './api-log.ts';
import { PgAudit } from './audit.ts';
import { openDatabase, POOL_SIZE, type Database } from './connect.ts';
import { DbGuard } from './guard.ts';
import { DatabaseProbe } from './probe.ts';
import { PgIdempotency } from './idempotency.ts';
import { PgLimiter } from './limiter.ts';
import { migrate } from './migrate.ts';
import { PgOwnerLists } from './owner-lists.ts';
import { PgPasteStore } from './pastes.ts';
import { PgRecentList } from './recent.ts';
import { scopedSql } from './scoped-sql.ts';
import { loadServerKey } from './server-key.ts';
import { PgSessions } from './sessions.ts';
import { PgShownOnce } from './shown-once.ts';
import { PgTokenUsage } from './token-usage.ts';
import { UpkeepTurns } from './turns.ts';
import { PgViewCounts } from './views.ts';

/**
 * Calls allowed in flight per connection: beyond, 503 at once (README, Running on PostgreSQL).
 * A create makes several calls, so fewer refused a share of 50 clients' creates.
 */
const QUEUED_PER_CONNECTION = 32;
/** How often the API log's old lines are deleted (LOG_RETENTION_DAYS). */
const PRUNE_MS = 3_600_000;
/** How often the sweeps of ended sessions and old records run, once across the instances (as the expiry sweep). */
const RECORD_SWEEP_MS = 60_000;
/** A spooled upload older than this is one a crash left behind: no request takes so long. */
const STALE_UPLOAD_MS = 3_600_000;

/**
 * Uploads are spooled under DATA_DIR/tmp before their bytes go into the database (README,
 * Files); what a crash left there an hour ago is removed (another instance may share the folder).
 */
async function prepareSpool(dir: string, before: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(dir)) {
    if (!name.startsWith('upload-')) continue;
    const path = join(dir, name);
    // Gone meanwhile (its request finished): nothing to do.
    const at = await stat(path).then(
      (s) => s.mtimeMs,
      () => Number.POSITIVE_INFINITY,
    );
    if (at < before) await rm(path, { force: true });
  }
}

/** How often one instance sweeps files' bytes no paste names any more (README, Files: within a minute). */
const FILE_SWEEP_MS = 5_000;
/** How often /healthz's word on the database is renewed in the background. */
const PROBE_MS = 1_000;
/** How often start reminds that it is still waiting for the database. */
const WAIT_REMINDER_MS = 10_000;

/**
 * What start says while it waits for the database: a line when the wait begins and a reminder
 * at most every WAIT_REMINDER_MS with the latest reason, not a line per attempt (pg/connect.ts).
 */
export function waitNotes(say: (message: string) => void, now: () => number = Date.now): (reason: string) => void {
  const reminder = new Reminder(now, WAIT_REMINDER_MS);
  return (reason) => {
    const lasted = reminder.due();
    if (lasted === null) return;
    say(
      lasted === 0
        ? `waiting for the database: ${reason}`
        : `still waiting for the database after ${Math.round(lasted / 1000)} s: ${reason}`,
    );
  };
}

/**
 * The PostgreSQL backend (README, Running on PostgreSQL): waits for the database, brings its
 * schema up to date under the migration lock, then builds every store on one pool. Every
 * call a request makes into the database goes through one guard (pg/guard.ts).
 */
export async function openPgStorage(opts: StorageOptions): Promise<Storage> {
  const { config, info } = opts;
  const db = await openDatabase(config, { onWait: waitNotes(info) });
  try {
    const migrated = await migrate(db.sql);
    if (migrated.applied.length > 0)
      info(`database schema brought from version ${migrated.from} to ${migrated.to} on ${db.describe}`);
    return await openStores(db, opts);
  } catch (err) {
    await db.close();
    throw err;
  }
}

async function openStores(db: Database, opts: StorageOptions): Promise<Storage> {
  // Every store's statements wait for a place on the pool and belong to their request (pg/scoped-sql.ts).
  const sql = scopedSql(db.sql, POOL_SIZE);
  const guard = new DbGuard(opts.config.databaseTimeoutMs, POOL_SIZE * QUEUED_PER_CONNECTION);
  await prepareSpool(join(opts.config.dataDir, 'tmp'), Date.now() - STALE_UPLOAD_MS);
  const blobs = servedFileBlobs(opts.config, await fileBlobsFor(opts.config, () => new PgFileBlobs(sql)));
  const s = buildStores(sql, db, opts, blobs);
  const serverKey = await loadStores(s, sql, opts.warn);
  const probe = databaseProbe(db, guard, opts);
  return {
    describe: `PostgreSQL at ${db.describe}`,
    pastes: guard.wrap(s.pastes),
    views: s.views,
    owners: guard.wrap(s.owners),
    recent: s.recent,
    accounts: guard.wrap(s.accounts),
    sessions: guard.wrap(s.sessions),
    shownOnce: guard.wrap(s.shownOnce),
    idempotency: guard.wrap(s.idempotency),
    fileBytes: guard.wrap(s.fileBytes),
    tokenUsage: s.tokenUsage,
    serverKey,
    apiLog: apiLogOver(s.apiLog, (query) => guard.run(() => s.apiLog.read(query))),
    audit: {
      record: (actor, r) => s.audit.record(actor, r),
      read: (offset, limit) => guard.run(() => s.audit.read(offset, limit)),
    },
    limiter: guard.wrap(s.limiter),
    jobs: pgJobs(s, guard, probe, opts),
    turn: (job, everyMs) => guard.run(() => s.turns.take(job, everyMs)),
    saves: [
      { what: 'the pending view counts', save: () => s.views.save() },
      { what: "the tokens' last use", save: () => s.tokenUsage.save() },
      { what: 'the API log', save: () => s.apiLog.close() },
    ],
    release: () => release(s, db),
    stats: {
      cache: () => s.pastes.cacheStats,
      sweep: () => s.pastes.sweepStats,
      // A commit is this backend's durable write; PostgreSQL does its own fsyncs, which the server does not see.
      writes: () => s.pastes.commits,
      // From the claims, wherever the bytes are (FILE_STORE): no chunk is touched, no bucket listed.
      storedFiles: () => s.fileBytes.stored(),
    },
    health: () => ({ ok: probe.answering, database: probe.answering ? 'answers' : 'does not answer' }),
    scope: (fn) => guard.request(fn),
  };
}

/** Every store on the pool, not yet loaded. */
function buildStores(sql: Sql, db: Database, opts: StorageOptions, blobs: FileBlobs) {
  const { config, now, warn } = opts;
  const pastes = new PgPasteStore(sql, config.pasteCacheBytes);
  const views = new PgViewCounts(sql, pastes);
  const recent = new PgRecentList(sql);
  const accounts = new PgAccounts(sql, { dataDir: config.dataDir });
  const sessions = new PgSessions(sql, config.sessionIdleMs, now);
  const idempotency = new PgIdempotency(sql);
  const shownOnce = new PgShownOnce(sql);
  const turns = new UpkeepTurns(sql, now);
  const tokenUsage = new PgTokenUsage(sql, now);
  const limiter = new PgLimiter(sql, now, () => pastes.heardRecently());
  const apiLog = new PgApiLog(sql, { now, warn, where: db.describe, inserts: db.logSql });
  const audit = new PgAudit(sql, now, warn);
  const owners = new PgOwnerLists(sql);
  // The claims stay in the database wherever the bytes go (FILE_STORE).
  const fileBytes = new ClaimedFiles(new PgFileClaims(sql, join(config.dataDir, 'tmp')), blobs);
  pastes.released = (hash) =>
    fileBytes
      .release(hash, now())
      .catch((err: unknown) => warn(`could not note a swept paste's files: ${String(err)}`));
  return {
    pastes,
    views,
    recent,
    accounts,
    sessions,
    idempotency,
    shownOnce,
    turns,
    tokenUsage,
    limiter,
    apiLog,
    audit,
    owners,
    fileBytes,
  };
}
type PgStores = ReturnType<typeof buildStores>;

/** Reads what is kept in memory and starts the listeners; resolves with the server key. */
async function loadStores(s: PgStores, sql: Sql, warn: (message: string) => void): Promise<Buffer> {
  const [serverKey, wordIndex] = await Promise.all([
    loadServerKey(sql),
    s.owners.wordIndex(),
    s.accounts.load(),
    s.recent.load(),
    s.tokenUsage.load(),
    s.pastes.listen(),
    s.limiter.listen(),
  ]);
  // Migration 6 leaves the index out where pg_trgm or btree_gin cannot be made, and says so only in a notice.
  if (!wordIndex)
    warn(
      'My pastes search has no trigram index: migration 6 could not make the extensions pg_trgm and btree_gin, ' +
        "so each search reads the user's pastes newest first, for at most a second (README, Running on " +
        'PostgreSQL: Large installs, says how to add it)',
    );
  return serverKey;
}

/**
 * /healthz answers at once from the last probe: a load balancer's check never waits on the database.
 * The probe is also the guard's breaker (pg/guard.ts): while it finds the database down,
 * requests that need it are refused at once. It has a connection of its own, so a pool
 * busy with slow statements is not taken for a database that is down.
 * The operator hears of an outage once when it begins and once when it ends, not once a request.
 */
function databaseProbe(db: Database, guard: DbGuard, { info, warn }: StorageOptions): DatabaseProbe {
  return new DatabaseProbe(() => guard.check(() => db.probeSql`select 1`), {
    up: () => {
      guard.reset();
      info(`the database at ${db.describe} answers again`);
    },
    down: (err) => {
      const why = err instanceof Error ? err.message : String(err);
      guard.trip(why);
      warn(`the database at ${db.describe} does not answer (${why}); requests that need it get 503 until it does`);
    },
  });
}

/** The database's background work (ARCHITECTURE.md, Background jobs). */
function pgJobs(s: PgStores, guard: DbGuard, probe: DatabaseProbe, opts: StorageOptions): Job[] {
  const everyMs = opts.upkeepEveryMs ?? UPKEEP_MS;
  // Each is on its way already when the guard is asked: one it refuses (the breaker open) still settles, unheard.
  const guarded = (work: Promise<unknown>): Promise<void> => {
    work.catch(() => undefined);
    return guard.run(() => work).then(() => undefined);
  };
  return [
    // Sent, not awaited: probes overlap while each may wait out DATABASE_TIMEOUT_MS (pg/probe.ts).
    { name: 'database probe', everyMs: PROBE_MS, oncePerCluster: false, run: async () => void probe.probe() },
    { name: 'api log', everyMs: LOG_FLUSH_MS, oncePerCluster: false, run: () => s.apiLog.flush() },
    // Old API log lines go by LOG_RETENTION_DAYS, as the files do (README, API request log).
    {
      name: 'api log retention',
      everyMs: PRUNE_MS,
      oncePerCluster: true,
      run: (now) => s.apiLog.prune(opts.config.logRetentionDays, now),
    },
    {
      // Ended sessions, old idempotency records, full buckets and unshown secrets.
      name: 'record sweeps',
      everyMs: RECORD_SWEEP_MS,
      oncePerCluster: true,
      run: async (now) => {
        const swept = await Promise.allSettled(
          [s.sessions.sweep(), s.idempotency.sweep(now), s.limiter.prune(), s.shownOnce.sweep(now)].map(guarded),
        );
        for (const outcome of swept) if (outcome.status === 'rejected') throw outcome.reason;
      },
    },
    { name: 'view counts', everyMs, oncePerCluster: false, run: () => guarded(s.views.drain()) },
    { name: "tokens' last use", everyMs, oncePerCluster: false, run: () => guarded(s.tokenUsage.save()) },
    // Bytes no paste names any more, within a minute of their paste (README, Files).
    {
      name: 'file sweep',
      everyMs: FILE_SWEEP_MS,
      oncePerCluster: true,
      run: (now) => guarded(sweepFiles(s.fileBytes, s.pastes, now)),
    },
    // Read again: another instance's new pastes join it (README, Running several instances).
    { name: 'recent pastes list', everyMs, oncePerCluster: false, run: () => guarded(s.recent.load()) },
  ];
}

/** Lets go of the listeners and the pool, once every save was tried. */
async function release(s: PgStores, db: Database): Promise<string[]> {
  await Promise.all([s.accounts.close(), s.pastes.close(), s.limiter.close()]);
  await db.close();
  const lost = s.apiLog.unwritten + s.apiLog.dropped;
  return lost > 0 ? [`${lost} API log lines could not be written to ${db.describe} and are lost`] : [];
}

/**
 * The database as the CLI opens it (CONTRACT §2), beside running servers or without one:
 * the schema brought up to date as a server would, and the accounts read without a listener
 * (a command is short; the servers hear of its changes through the accounts' notification,
 * and the server of this DATA_DIR through the file it writes there, pg/accounts.ts).
 */
export async function openPgCli(config: Config, notes: { note: (message: string) => void }): Promise<CliStorage> {
  const db = await openDatabase(config, { onWait: waitNotes(notes.note) });
  try {
    const migrated = await migrate(db.sql);
    // An empty database gets its schema in silence, as a new data folder its format: a command's
    // stderr holds only what it has to say. An upgrade of a schema in use is told.
    if (migrated.applied.length > 0 && migrated.from > 0)
      notes.note(`database schema brought from version ${migrated.from} to ${migrated.to} on ${db.describe}`);
    const sql = db.sql;
    const accounts = new PgAccounts(sql, { listen: false, dataDir: config.dataDir });
    await accounts.load();
    const pastes = new PgPasteStore(sql, config.pasteCacheBytes);
    return {
      describe: `PostgreSQL at ${db.describe}`,
      accounts,
      audit: new PgAudit(sql, Date.now, (m) => notes.note(`warning: ${m}`)),
      owners: new PgOwnerLists(sql),
      pastes,
      // FILE_STORE's bucket when set: an import moves the bytes there (README, Export and import).
      fileBytes: new ClaimedFiles(
        new PgFileClaims(sql, join(config.dataDir, 'tmp')),
        await fileBlobsFor(config, () => new PgFileBlobs(sql)),
      ),
      async *listPastes() {
        // A cursor: the list of a large install is never held whole.
        for await (const rows of sql<{ hash: string; owner_id: number; created_at: number }[]>`
          select hash, owner_id, (extract(epoch from created_at) * 1000)::float8 as created_at
          from pastes order by created_at, hash`.cursor(500))
          yield* rows;
      },
      // Views are added to the rows as they are counted by each server's upkeep: none wait here.
      pendingViews: () => 0,
      async lastUses() {
        const rows = await sql<{ token_id: string; at: number }[]>`
          select token_id, (extract(epoch from last_used_at) * 1000)::float8 as at from token_usage`;
        return Object.fromEntries(rows.map((r) => [r.token_id, r.at]));
      },
      close: async () => {
        await accounts.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
