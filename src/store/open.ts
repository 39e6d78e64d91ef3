import { join } from 'node:path';
import { type CliStorage, savedOr, type Storage, type StorageOptions } from '../backend.ts';
import type { Config } from '../config.ts';
import { AuditLog } from '../log/audit.ts';
import { LogAppender } from '../log/appender.ts';
import { readLog } from '../log/reader.ts';
import { StorageFull } from '../storage/errors.ts';
import { ensureWritableDir } from '../storage/fs.ts';
import { isAnonymous } from '../paste/anonymous.ts';
import { AccountStore } from './accounts.ts';
import { RateLimiter } from '../ratelimit/bucket.ts';
import { BucketFile } from './bucket-file.ts';
import { sweepFiles } from '../paste/files.ts';
import { DiskFileBytes } from './file-bytes.ts';
import { countFileBytes } from './file-count.ts';
import { DurableFiles } from './files.ts';
import { IdempotencyRecords } from './idempotency.ts';
import { claimFolder, folderHolder } from './instance.ts';
import { checkDataFormat } from './migrate.ts';
import { OwnerIndex } from './owner-index.ts';
import { PasteStore } from './pastes.ts';
import { RecentPastes } from './recent.ts';
import { finishRestore } from './restore-swap.ts';
import { loadServerKey, SERVER_KEY_PATH } from './server-key.ts';
import { SessionStore } from './sessions.ts';
import { storedPastes } from './stored-pastes.ts';
import { HeldInMemory } from './shown-once.ts';
import { readUsage, TokenUsage } from './token-usage.ts';
import { ViewCounter } from './views.ts';

/** How often the folder claim is refreshed (README, One server per folder). */
const CLAIM_MS = 5_000;

/**
 * The data-folder backend (README, Data on disk and durability): claims the folder,
 * finishes a restore a crash cut short, checks (and migrates) the data format, then opens
 * every store under DATA_DIR and loads what is kept in memory.
 */
export async function openFileStorage(opts: StorageOptions): Promise<Storage> {
  const { config, now, warn, info } = opts;
  const dir = config.dataDir;
  await ensureWritableDir(dir);
  // One server per folder: before anything is touched (files.init empties tmp/).
  const claim = await claimFolder(dir);
  if (await finishRestore(dir)) info(`finished a restore into ${dir} that was cut short`);
  // A refused write is reported once a minute at most: under load it would be one line a request.
  let lastRefusal = Number.NEGATIVE_INFINITY;
  const files = new DurableFiles(join(dir, 'tmp'), {
    refused: (refused) => {
      if (Date.now() - lastRefusal < 60_000) return;
      lastRefusal = Date.now();
      warn(
        `storage: ${refused.message}; writes answer ${refused instanceof StorageFull ? '507' : '503'} and change nothing until it can be written again`,
      );
    },
    ...(opts.synced === undefined ? {} : { synced: opts.synced }),
  });
  await files.init();
  const migrated = await checkDataFormat(dir, files);
  if (migrated !== null) info(migrated);
  const state = join(dir, 'state');
  await files.ensureDir(state);

  const accounts = new AccountStore(dir, files);
  const pastes = new PasteStore(dir, files, config.pasteCacheBytes, (damage) =>
    warn(
      `paste ${damage.hash ?? '(hash unreadable)'}: ${damage.message}; its owner and admins get 500 paste_damaged (others 404) until one of them deletes it`,
    ),
  );
  const views = new ViewCounter(pastes, files, join(state, 'views.json'));
  const tokenUsage = new TokenUsage(files, join(state, 'token-usage.json'));
  const owners = new OwnerIndex(dir, files);
  // A paste the sweep removes leaves its owner's list, as a deleted one does (paste/service.ts).
  pastes.onSwept = (p) => (isAnonymous(p) ? Promise.resolve() : owners.remove(p.owner_id, p.hash));
  const recent = new RecentPastes(files, join(state, 'recent.json'));
  const idempotency = new IdempotencyRecords(dir, files);
  const fileBytes = new DiskFileBytes(dir, files);
  pastes.released = (hash) =>
    fileBytes
      .release(hash, now())
      .catch((err: unknown) => warn(`could not note a swept paste's files: ${String(err)}`));
  const sessions = new SessionStore(join(dir, 'sessions'), files, config.sessionIdleMs, now);
  const buckets = new BucketFile(files, join(state, 'ratelimit.json'));
  const limiter = new RateLimiter(now);
  const logDir = join(dir, 'logs');
  const log = new LogAppender({ dir: logDir, now, retentionDays: config.logRetentionDays, warn });
  const audit = new AuditLog(logDir, now, warn);
  const [serverKey] = await Promise.all([
    loadServerKey(files, join(dir, ...SERVER_KEY_PATH)),
    accounts.load(),
    pastes.init(),
    owners.init(),
    views.load(),
    tokenUsage.load(),
    recent.load(),
    sessions.load(),
    buckets.load(limiter),
  ]);
  await accounts.watch();
  log.start();

  // The claim is kept on its own timer, synchronously (store/instance.ts): nothing else the
  // server does can hold it up, and one found gone is written again.
  let claimTold = false;
  const claimTimer = setInterval(() => {
    if (claim.refresh() !== 'taken' || claimTold) return;
    claimTold = true;
    warn(`${join(dir, 'server.pid')} names another process: two servers may be using ${dir}; stop one of them`);
  }, opts.claimEveryMs ?? CLAIM_MS);
  claimTimer.unref();

  return {
    describe: `the data folder ${dir}`,
    pastes,
    views,
    owners,
    recent,
    accounts,
    sessions,
    shownOnce: new HeldInMemory(),
    idempotency,
    fileBytes,
    tokenUsage,
    serverKey,
    apiLog: {
      append: (entry) => log.append(entry),
      read: (query) => readLog(logDir, query),
      get written() {
        return log.written;
      },
      get dropped() {
        return log.dropped;
      },
      get unwritten() {
        return log.unwritten;
      },
    },
    audit,
    limiter,
    // One server per data folder (store/instance.ts): every round is its own.
    turn: async () => true,
    async upkeep(sweepDue) {
      // A bucket that has refilled completely carries nothing: memory tracks recent clients only.
      limiter.prune();
      if (sweepDue) {
        await sessions.sweep();
        await idempotency.sweep(now());
      }
      await views.drain();
      // Bytes no paste names any more go within a tick or two of their paste (README, Files).
      await sweepFiles(fileBytes, pastes, now());
      // The view counts still pending are saved every tick: a crash loses at most this tick's.
      // Every save is waited for, even after one fails, so the tick never ends (nor shutdown
      // begins its own saves) while one is still writing.
      const saved = await Promise.allSettled([views.save(), buckets.save(limiter), tokenUsage.save(), recent.save()]);
      for (const outcome of saved) if (outcome.status === 'rejected') throw outcome.reason;
    },
    async close() {
      accounts.unwatch();
      // Each save that fails becomes a warning; none keeps the others from being tried.
      const outcomes = await Promise.all([
        savedOr('the rate-limit buckets', buckets.save(limiter)),
        savedOr('the pending view counts', views.save()),
        savedOr("the tokens' last use", tokenUsage.save()),
        savedOr('the recent pastes list', recent.save()),
        savedOr('the API log', log.close()),
      ]);
      clearInterval(claimTimer);
      await claim.release();
      const warnings = outcomes.filter((w): w is string => w !== null);
      if (log.unwritten > 0 || log.dropped > 0)
        warnings.push(`${log.unwritten + log.dropped} API log lines could not be written to ${logDir} and are lost`);
      return warnings;
    },
    stats: {
      cache: () => pastes.cacheStats,
      sweep: () => pastes.sweepStats,
      writes: () => files.writes,
      pastesDir: join(dir, 'pastes'),
      storedFiles: () => countFileBytes(join(dir, 'files')),
    },
  };
}

/**
 * The data folder as the CLI opens it (CONTRACT §2): beside a running server or without
 * one. A restore a crash cut short is finished first unless a server holds the folder (its
 * start finished it), and the data format is checked (and migrated) before anything reads it.
 */
export async function openFileCli(
  config: Config,
  notes: { note: (message: string) => void; warn: (message: string) => void },
): Promise<CliStorage> {
  const dir = config.dataDir;
  if ((await folderHolder(dir)) === null && (await finishRestore(dir)))
    notes.note(`finished a restore into ${dir} that was cut short`);
  const files = new DurableFiles(join(dir, 'tmp'));
  await files.ensureDir(join(dir, 'tmp'));
  const migrated = await checkDataFormat(dir, files);
  if (migrated !== null) notes.note(migrated);
  const accounts = new AccountStore(dir, files);
  await accounts.load();
  const pastes = new PasteStore(dir, files, 0);
  const owners = new OwnerIndex(dir, files);
  const views = new ViewCounter(pastes, files, join(dir, 'state', 'views.json'));
  return {
    describe: `the data folder ${dir}`,
    accounts,
    audit: new AuditLog(join(dir, 'logs'), Date.now, notes.warn),
    owners,
    fileBytes: new DiskFileBytes(dir, files),
    pastes: {
      get: (hash) => pastes.get(hash),
      // The folders a create writes into are made on first use only.
      create: async (make, listing, first) => {
        await Promise.all([pastes.init(), owners.init()]);
        return pastes.create(make, listing, first);
      },
    },
    async *listPastes() {
      await views.load();
      yield* storedPastes(dir, (path, reason) => notes.warn(`${path} is damaged (${reason}); not exported`));
    },
    pendingViews: (p) => views.pending(p.hash, p.view_count),
    lastUses: () => readUsage(join(dir, 'state', 'token-usage.json')),
    close: async () => undefined,
  };
}
