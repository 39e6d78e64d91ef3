import type { IdempotencyStore } from './paste/idempotency.ts';
import type { AccountRecords } from './auth/accounts.ts';
import type { SessionRecords } from './auth/sessions.ts';
import type { ShownOnceRecords } from './auth/shown-once.ts';
import type { Config } from './config.ts';
import type { ApiLogEntry } from './log/entry.ts';
import type { AuditSink } from './auth/accounts.ts';
import type { AuditLog } from './log/audit.ts';
import type { LogPage, LogQuery } from './log/reader.ts';
import type { FileBytes } from './paste/files.ts';
import type { Paste } from './paste/paste.ts';
import type { OwnerLists, PasteRepository, RecentList, ViewCounts } from './paste/repository.ts';
import type { Limiter } from './ratelimit/limiter.ts';
import type { Job } from './jobs/job.ts';

/**
 * Everything a running server keeps, as one backend provides it: the data folder
 * (store/open.ts) or PostgreSQL (pg/open.ts). server.ts picks one from the configuration,
 * in one place, builds the services and both sides on what it returns, and runs its jobs
 * and saves (ARCHITECTURE.md, Background jobs); nothing else
 * knows which it has (ARCHITECTURE.md, The storage seam).
 */
export interface Storage {
  /** Where the state lives, for messages: `the data folder /srv/paste`, `PostgreSQL at db:5432`. */
  readonly describe: string;
  readonly pastes: PasteRepository & PasteUpkeep;
  readonly views: ViewCounts;
  readonly owners: OwnerLists;
  readonly recent: RecentList;
  readonly accounts: AccountRecords & { knownTokenId(id: string): boolean };
  readonly sessions: SessionRecords;
  /** New secrets waiting for the page that shows them once (a token's, a new user's password). */
  readonly shownOnce: ShownOnceRecords;
  readonly idempotency: IdempotencyStore;
  /** Files' bytes (README, Files), swept of what no paste names by the backend's `file sweep` job. */
  readonly fileBytes: FileBytes;
  readonly tokenUsage: TokenUses;
  /** The web side's signing key, made once and kept (CSRF tokens, unlock grants, login keys). */
  readonly serverKey: Buffer;
  readonly apiLog: ApiLog;
  readonly audit: AuditSink & Pick<AuditLog, 'read'>;
  /**
   * The rate-limit buckets and failure budgets (README, Rate limits): in memory and saved
   * with the data folder, or shared by every instance on the database.
   */
  readonly limiter: Limiter;
  /**
   * The backend's background work, which the server's scheduler runs (jobs/scheduler.ts):
   * saving what is counted in memory every few seconds, sweeping old records, and whatever
   * else only this backend needs (the folder claim, the database probe).
   */
  readonly jobs: readonly Job[];
  /**
   * Whether this server does this round of a job done once across the servers sharing the
   * storage (`oncePerCluster`); the data folder's one server always does (README, Running several instances).
   */
  turn(job: string, everyMs: number): Promise<boolean>;
  /** What is held in memory and saved at close, after the jobs have stopped; each is tried (saveEach). */
  readonly saves: readonly Save[];
  /**
   * Lets go of what the backend holds, last, once every save was tried (the folder claim, the
   * pool); resolves with what is lost all the same, one sentence each.
   */
  release(): Promise<string[]>;
  /** What /metrics reports of the storage; absent parts are not reported. */
  readonly stats: StorageStats;
  /** What `/healthz` says of the storage, answered at once (a backend probes in the background). */
  health?(): Health;
  /**
   * Runs one request's handling so that its calls into the storage share one deadline and
   * one refusal (pg/scope.ts); absent where a call cannot outlive its request (the data folder).
   */
  scope?<T>(fn: () => T): T;
}

/** The expiry sweep, run in bounded slices beside the rest of the upkeep (README, Expiry). */
export interface PasteUpkeep {
  sweepSlice(now: number, limit: number): Promise<{ changed: number; more: boolean }>;
}

/** When each token was last used, and from where (README, Web pages: API Tokens). */
export interface TokenUses {
  touch(tokenId: string, now: number, ip?: string): void;
  get(tokenId: string): number | undefined;
  ip(tokenId: string): string | undefined;
  lastDay(tokenId: string, now: number): number;
}

/** The API request log (README, API request log): written in the background, read by the admins. */
export interface ApiLog {
  append(entry: ApiLogEntry): void;
  read(query: LogQuery): Promise<LogPage>;
  readonly written: number;
  readonly dropped: number;
  readonly unwritten: number;
}

/**
 * The API log as the server sees it, over a backend's writer (which counts what it wrote,
 * dropped and holds) and its reader.
 */
export const apiLogOver = (log: Omit<ApiLog, 'read'>, read: ApiLog['read']): ApiLog => ({
  append: (entry) => log.append(entry),
  read,
  get written() {
    return log.written;
  },
  get dropped() {
    return log.dropped;
  },
  get unwritten() {
    return log.unwritten;
  },
});

export interface StorageStats {
  cache?: () => { hits: number; misses: number; bytes: number; entries: number };
  sweep?: () => { wiped: number; removed: number };
  writes?: () => number;
  /** The data folder's pastes, whose disk use /metrics reports. */
  pastesDir?: string;
  /** Counts the files' bytes stored (README, Metrics); /metrics asks at most every few seconds. */
  storedFiles?: () => Promise<StoredFiles>;
}

/** Distinct files' bytes stored (one copy however many pastes hold them), and their size. */
export interface StoredFiles {
  files: number;
  bytes: number;
}

/** What a backend needs from the server besides the configuration. */
export interface StorageOptions {
  config: Config;
  now: () => number;
  /** What an operator should know (a full disk, a damaged file, a claim taken). */
  warn: (message: string) => void;
  /** What was done for the operator (a migration, a restore finished). */
  info: (message: string) => void;
  /** Each fsync's time, for /metrics. */
  synced?: (what: 'file' | 'folder', seconds: number) => void;
  /** How often the folder claim is kept (tests shorten it). */
  claimEveryMs?: number;
  /** How often what is counted in memory is saved; UPKEEP_MS unless tests shorten it. */
  upkeepEveryMs?: number;
}

/** The storage's word on `/healthz`: `ok` false answers 503, so a load balancer sends elsewhere. */
export interface Health {
  ok: boolean;
  [fact: string]: unknown;
}

/**
 * What the operator CLI works on (cli.ts), opened by the same backend as a server's storage,
 * beside a running server or without one: accounts, pastes for export and import, and the
 * audit log its actions go to.
 */
export interface CliStorage {
  readonly describe: string;
  readonly accounts: AccountRecords;
  readonly audit: AuditSink;
  readonly owners: OwnerLists;
  readonly pastes: Pick<PasteRepository, 'get' | 'create'>;
  /** Files' bytes: export reads them, import stores them (README, Export and import). */
  readonly fileBytes: FileBytes;
  /** Every stored paste's hash, owner and creation time, in no promised order (export sorts). */
  listPastes(): AsyncIterable<Pick<Paste, 'hash' | 'owner_id' | 'created_at'>>;
  /** Views of a paste counted but not yet in its record (export adds them). */
  pendingViews(p: Paste): number;
  /** When each token was last used (token list). */
  lastUses(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** Something held in memory that close saves (README, Shutdown): `what` names it in the warning a failure becomes. */
export interface Save {
  readonly what: string;
  save(): Promise<unknown>;
}

/** How often the backends save what is counted in memory (ARCHITECTURE.md, Background jobs). */
export const UPKEEP_MS = 5_000;
/** How often the API log writes the lines waiting in memory (README, API request log: at least once a second). */
export const LOG_FLUSH_MS = 1_000;

/**
 * A save at close, as a warning when it fails: every save is tried, none keeps the others from
 * being tried, and what could not be saved is told in one sentence (README, Shutdown).
 */
export const savedOr = (what: string, save: Promise<unknown>): Promise<string | null> =>
  save.then(
    () => null,
    (err: unknown) => `could not save ${what}: ${err instanceof Error ? err.message : String(err)}`,
  );

/** Every save at once, each tried whatever the others do; resolves with what could not be saved. */
export async function saveEach(saves: readonly Save[]): Promise<string[]> {
  const tried = (s: Save) =>
    savedOr(
      s.what,
      Promise.resolve().then(() => s.save()),
    );
  return (await Promise.all(saves.map(tried))).filter((w): w is string => w !== null);
}
