import { join } from 'node:path';
import {
  apiLogOver,
  type CliStorage,
  type Save,
  type Storage,
  type StorageOptions,
  LOG_FLUSH_MS,
  UPKEEP_MS,
} from '../backend.ts';
import type { Job } from '../jobs/job.ts';
import type { Config } from '../config.ts';
import { AuditLog } from '../log/audit.ts';
import { LogAppender } from '../log/appender.ts';
import { readLog } from '../log/reader.ts';
import { StorageFull } from '../storage/errors.ts';
import { ensureWritableDir } from '../storage/fs.ts';
import { AccountStore } from './accounts.ts';
import { RateLimiter } from '../ratelimit/bucket.ts';
import { BucketFile } from './bucket-file.ts';
import { fileBlobsFor, servedFileBlobs } from '../files/open.ts';
import { ClaimedFiles, type FileBlobs, sweepFiles } from '../paste/files.ts';
import { DiskFileBlobs, DiskFileClaims } from './file-bytes.ts';
import { isAnonymous } from '../paste/anonymous.ts';
import { DurableFiles } from './files.ts';
import { IdempotencyRecords } from './idempotency.ts';
import { claimFolder, type FolderClaim, folderHolder } from './instance.ts';
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
/** How often ended sessions and old idempotency records are swept (as the expiry sweep, server.ts). */
const RECORD_SWEEP_MS = 60_000;
/** How often the API log's old days' files are looked for. */
const DAY_MS = 86_400_000;

/**
 * The data-folder backend (README, Data on disk and durability): claims the folder,
 * finishes a restore a crash cut short, checks (and migrates) the data format, then opens
 * every store under DATA_DIR and loads what is kept in memory.
 */
export async function openFileStorage(opts: StorageOptions): Promise<Storage> {
  const { dir, claim, files } = await openFolder(opts);
  const blobs = servedFileBlobs(opts.config, await fileBlobsFor(opts.config, () => new DiskFileBlobs(dir, files)));
  const stores = buildStores(dir, files, opts, blobs);
  const serverKey = await loadStores(stores, files, dir);
  return {
    describe: `the data folder ${dir}`,
    pastes: stores.pastes,
    views: stores.views,
    owners: stores.owners,
    recent: stores.recent,
    accounts: stores.accounts,
    sessions: stores.sessions,
    shownOnce: new HeldInMemory(),
    idempotency: stores.idempotency,
    fileBytes: stores.fileBytes,
    tokenUsage: stores.tokenUsage,
    serverKey,
    apiLog: apiLogOver(stores.log, (query) => readLog(stores.logDir, query)),
    audit: stores.audit,
    limiter: stores.limiter,
    jobs: fileJobs(stores, claim, dir, opts),
    // One server per data folder (store/instance.ts): every round is its own.
    turn: async () => true,
    saves: fileSaves(stores),
    async release() {
      stores.accounts.unwatch();
      await claim.release();
      const { log } = stores;
      return log.unwritten > 0 || log.dropped > 0
        ? [`${log.unwritten + log.dropped} API log lines could not be written to ${stores.logDir} and are lost`]
        : [];
    },
    stats: {
      cache: () => stores.pastes.cacheStats,
      sweep: () => stores.pastes.sweepStats,
      writes: () => files.writes,
      pastesDir: join(dir, 'pastes'),
      storedFiles: () => stores.fileBytes.stored(),
    },
  };
}

/**
 * The folder made ready before any store opens it: claimed (one server per folder, before
 * anything is touched: files.init empties tmp/), a restore cut short finished, the format checked.
 */
async function openFolder(opts: StorageOptions): Promise<{ dir: string; claim: FolderClaim; files: DurableFiles }> {
  const { config, warn, info } = opts;
  const dir = config.dataDir;
  await ensureWritableDir(dir);
  const claim = await claimFolder(dir);
  if (await finishRestore(dir)) info(`finished a restore into ${dir} that was cut short`);
  // A refused write is reported once a minute at most: under load it would be one line a request.
  let lastRefusal = Number.NEGATIVE_INFINITY;
  const files = new DurableFiles(join(dir, 'tmp'), {
    refused: (refused) => {
      if (Date.now() - lastRefusal < 60_000) return;
      lastRefusal = Date.now();
      warn(
        `storage: ${refused.message}; writes answer ${refused instanceof StorageFull ? '507' : '503'} and ` +
          'change nothing until it can be written again',
      );
    },
    ...(opts.synced === undefined ? {} : { synced: opts.synced }),
  });
  await files.init();
  const migrated = await checkDataFormat(dir, files);
  if (migrated !== null) info(migrated);
  await files.ensureDir(join(dir, 'state'));
  return { dir, claim, files };
}

/** Every store under the folder, not yet loaded. */
function buildStores(dir: string, files: DurableFiles, opts: StorageOptions, blobs: FileBlobs) {
  const { config, now, warn } = opts;
  const state = join(dir, 'state');
  const accounts = new AccountStore(dir, files);
  const pastes = new PasteStore(dir, files, config.pasteCacheBytes, (damage) =>
    warn(
      `paste ${damage.hash ?? '(hash unreadable)'}: ${damage.message}; its owner and admins get 500 ` +
        'paste_damaged (others 404) until one of them deletes it',
    ),
  );
  const views = new ViewCounter(pastes, files, join(state, 'views.json'));
  const tokenUsage = new TokenUsage(files, join(state, 'token-usage.json'));
  const owners = new OwnerIndex(dir, files);
  // A paste the sweep removes leaves its owner's list, as a deleted one does (paste/service.ts).
  pastes.onSwept = (p) => (isAnonymous(p) ? Promise.resolve() : owners.remove(p.owner_id, p.hash));
  const recent = new RecentPastes(files, join(state, 'recent.json'));
  const idempotency = new IdempotencyRecords(dir, files);
  // The claims stay in the folder wherever the bytes go (FILE_STORE).
  const fileBytes = new ClaimedFiles(new DiskFileClaims(dir, files), blobs);
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
  return {
    accounts,
    pastes,
    views,
    tokenUsage,
    owners,
    recent,
    idempotency,
    fileBytes,
    sessions,
    buckets,
    limiter,
    logDir,
    log,
    audit,
  };
}
type FileStores = ReturnType<typeof buildStores>;

/** Reads what is kept in memory and starts the accounts' watch; resolves with the server key. */
async function loadStores(s: FileStores, files: DurableFiles, dir: string): Promise<Buffer> {
  const [serverKey] = await Promise.all([
    loadServerKey(files, join(dir, ...SERVER_KEY_PATH)),
    s.accounts.load(),
    s.pastes.init(),
    s.owners.init(),
    s.views.load(),
    s.tokenUsage.load(),
    s.recent.load(),
    s.sessions.load(),
    s.buckets.load(s.limiter),
  ]);
  await s.accounts.watch();
  return serverKey;
}

/** The data folder's background work (ARCHITECTURE.md, Background jobs). */
function fileJobs(s: FileStores, claim: FolderClaim, dir: string, opts: StorageOptions): Job[] {
  const everyMs = opts.upkeepEveryMs ?? UPKEEP_MS;
  let claimTold = false;
  return [
    {
      // Kept synchronously (store/instance.ts): nothing else the server does can hold it up,
      // and one found gone is written again.
      name: 'folder claim',
      everyMs: opts.claimEveryMs ?? CLAIM_MS,
      oncePerCluster: false,
      run: async () => {
        if (claim.refresh() !== 'taken' || claimTold) return;
        claimTold = true;
        opts.warn(
          `${join(dir, 'server.pid')} names another process: two servers may be using ${dir}; stop one of them`,
        );
      },
    },
    {
      name: 'record sweeps',
      everyMs: RECORD_SWEEP_MS,
      oncePerCluster: true,
      run: async (now) => {
        await s.sessions.sweep();
        await s.idempotency.sweep(now);
      },
    },
    // Counted views are folded into their pastes, and those still pending saved every round: a crash loses at most one
    // round's.
    { name: 'view counts', everyMs, oncePerCluster: false, run: () => s.views.drain().then(() => s.views.save()) },
    {
      name: 'rate-limit buckets',
      everyMs,
      oncePerCluster: false,
      // A bucket that has refilled completely carries nothing: memory tracks recent clients only.
      run: async () => {
        s.limiter.prune();
        await s.buckets.save(s.limiter);
      },
    },
    // Bytes no paste names any more go within a round or two of their paste (README, Files).
    {
      name: 'file sweep',
      everyMs,
      oncePerCluster: true,
      run: async (now) => {
        await sweepFiles(s.fileBytes, s.pastes, now);
      },
    },
    { name: "tokens' last use", everyMs, oncePerCluster: false, run: () => s.tokenUsage.save() },
    { name: 'recent pastes list', everyMs, oncePerCluster: false, run: () => s.recent.save() },
    { name: 'api log', everyMs: LOG_FLUSH_MS, oncePerCluster: false, run: () => s.log.flush() },
    // Days' files older than LOG_RETENTION_DAYS go (README, API request log).
    { name: 'api log retention', everyMs: DAY_MS, oncePerCluster: true, run: () => s.log.prune() },
  ];
}

/** What close saves: every count held in memory, and the API log's last lines. */
const fileSaves = (s: FileStores): Save[] => [
  { what: 'the rate-limit buckets', save: () => s.buckets.save(s.limiter) },
  { what: 'the pending view counts', save: () => s.views.save() },
  { what: "the tokens' last use", save: () => s.tokenUsage.save() },
  { what: 'the recent pastes list', save: () => s.recent.save() },
  { what: 'the API log', save: () => s.log.close() },
];

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
    // FILE_STORE's bucket when set: an import moves the bytes there (README, Export and import).
    fileBytes: new ClaimedFiles(
      new DiskFileClaims(dir, files),
      await fileBlobsFor(config, () => new DiskFileBlobs(dir, files)),
    ),
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
