import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { apiSide } from './api/side.ts';
import { ReadBodies } from './api/v1/bodies.ts';
import { Idempotency } from './api/v1/idempotency.ts';
import { createApp } from './app.ts';
import { BodyBudget, preAuthBudgetBytes } from './http/body-budget.ts';
import { maxBodyBytes } from './http/body.ts';
import { inviteWhenRead } from './http/continue.ts';
import { RequestIds } from './http/request-id.ts';
import type { Reply } from './http/reply.ts';
import { respond } from './http/respond.ts';
import { ServerMetrics } from './observe.ts';
import { Accounts } from './auth/accounts.ts';
import { Authenticator } from './auth/authenticate.ts';
import type { Config } from './config.ts';
import { Passwords } from './crypto/passwords.ts';
import { Signer, sign } from './crypto/signature.ts';
import { LogAppender } from './log/appender.ts';
import { LineBudget } from './log/line-budget.ts';
import { ServerLog } from './log/server-log.ts';
import { PasteService } from './paste/service.ts';
import { InFlight, serve, TurnQueue, type FaultLog } from './pipeline/run.ts';
import { RateLimiter } from './ratelimit/bucket.ts';
import { FailureBudget } from './ratelimit/failure-budget.ts';
import { AuditLog } from './log/audit.ts';
import { AccountStore } from './store/accounts.ts';
import { BucketFile } from './store/bucket-file.ts';
import { DurableFiles } from './store/files.ts';
import { ensureWritableDir } from './storage/fs.ts';
import { StorageFull, StorageReadOnly } from './storage/errors.ts';
import { checkDataFormat } from './store/migrate.ts';
import { claimFolder } from './store/instance.ts';
import { finishRestore } from './store/restore-swap.ts';
import { IdempotencyRecords } from './store/idempotency.ts';
import { OwnerIndex } from './store/owner-index.ts';
import { PasteStore } from './store/pastes.ts';
import { RecentPastes } from './store/recent.ts';
import { SessionStore } from './store/sessions.ts';
import { TokenUsage } from './store/token-usage.ts';
import { ViewCounter } from './store/views.ts';
import { PageParts } from './web/page-parts.ts';
import { ShownOnce } from './web/shown-once.ts';
import { loadServerKey, SERVER_KEY_PATH } from './store/server-key.ts';
import { webSide } from './web/side.ts';
import { TimeTags } from './web/time.ts';

/** Timeouts against slow or idle clients (documented in the README). */
export const SERVER_TIMEOUTS = {
  headersTimeout: 10_000,
  requestTimeout: 60_000,
  keepAliveTimeout: 5_000,
  // Node looks for connections past headersTimeout/requestTimeout this often (30 s by
  // default, which let headers trickle in for up to 40 s).
  connectionsCheckingInterval: 1_000,
} as const;

const MAINTENANCE_MS = 5_000;
const SWEEP_MS = 60_000;
/** Index entries one sweep slice visits before the sweep lets go of the disk and the event loop. */
const SWEEP_SLICE = 500;

export interface ServerOptions {
  /** The clock every rule reads (expiry, buckets, sessions, grants, log times); tests move it. */
  now?: () => number;
  /** Where unexpected faults go; the server log (stderr) by default. */
  logError?: FaultLog;
  /** Where what an operator should know goes (a full disk, a damaged file); the server log by default. */
  warn?: (message: string) => void;
  /** Where what was done for the operator goes (a data migration); the server log by default. */
  info?: (message: string) => void;
  /** Password hashing and checks; tests give one with a stand-in scrypt or a small gate. */
  passwords?: Passwords;
  /** The timers and slices of the upkeep (tests shorten them); the defaults otherwise. */
  upkeep?: {
    everyMs?: number;
    claimEveryMs?: number;
    sweepSlice?: number;
    /** Awaited between two slices of a sweep (tests hold a sweep half done with it). */
    betweenSlices?: () => Promise<void>;
  };
}

export interface RunningServer {
  server: Server;
  port: number;
  /** The METRICS_LISTEN port (the one a port of 0 was given), or null. */
  metricsPort: number | null;
  /** The public address, with the port a PORT of 0 was given. */
  baseUrl: string;
  /** Runs the background upkeep once now (sweep, view counts, state files), as its timer does. */
  upkeep(): Promise<void>;
  /**
   * Graceful stop: no new connections, finish in-flight requests, persist state. Resolves
   * with what could not be saved (a full or read-only disk), one sentence each; it does
   * not fail for that, so the process still ends cleanly.
   */
  close(): Promise<string[]>;
}

/**
 * Opens the stores under DATA_DIR, builds the services and the two sides on them, starts
 * listening, and runs the background upkeep. Every piece of state (caches, buckets,
 * counters, pools) lives on an object made here, so two servers in one process share none.
 */
export async function startServer(config: Config, opts: ServerOptions = {}): Promise<RunningServer> {
  const now = opts.now ?? Date.now;
  const serverLog = new ServerLog(config.logFormat);
  const logError: FaultLog = opts.logError ?? ((err, requestId) => serverLog.fault(err, requestId));
  const warn = opts.warn ?? ((message: string) => serverLog.warn(message));
  const dir = config.dataDir;
  await ensureWritableDir(dir);
  // One server per folder: before anything is touched (files.init empties tmp/).
  const claim = await claimFolder(dir);
  // A restore a crash cut short is finished before anything reads the folder (README, Backup and restore).
  if (await finishRestore(dir))
    (opts.info ?? ((m: string) => serverLog.info(m)))(`finished a restore into ${dir} that was cut short`);
  const metrics = new ServerMetrics();
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
    synced: (what, seconds) => metrics.fsync.observe(seconds, [what]),
  });
  await files.init();
  const migrated = await checkDataFormat(dir, files);
  if (migrated !== null) (opts.info ?? ((m: string) => serverLog.info(m)))(migrated);
  const state = join(dir, 'state');
  await files.ensureDir(state);

  const accountFile = new AccountStore(dir, files);
  const store = new PasteStore(dir, files, config.pasteCacheBytes, (damage) =>
    warn(
      `paste ${damage.hash ?? '(hash unreadable)'}: ${damage.message}; its owner and admins get 500 paste_damaged (others 404) until one of them deletes it`,
    ),
  );
  const views = new ViewCounter(store, files, join(state, 'views.json'));
  const tokenUsage = new TokenUsage(files, join(state, 'token-usage.json'));
  const owners = new OwnerIndex(dir, files);
  const recent = new RecentPastes(files, join(state, 'recent.json'));
  const idempotencyRecords = new IdempotencyRecords(dir, files);
  const sessions = new SessionStore(join(dir, 'sessions'), files, config.sessionIdleMs, now);
  const limiter = new RateLimiter(now);
  const buckets = new BucketFile(files, join(state, 'ratelimit.json'));
  const log = new LogAppender({ dir: join(dir, 'logs'), now, retentionDays: config.logRetentionDays, warn });
  const [serverKey] = await Promise.all([
    loadServerKey(files, join(dir, ...SERVER_KEY_PATH)),
    accountFile.load(),
    store.init(),
    owners.init(),
    views.load(),
    tokenUsage.load(),
    recent.load(),
    sessions.load(),
  ]);
  await buckets.load(limiter);
  await accountFile.watch();

  // Listen before building the sides: with PORT=0 the default BASE_URL needs the port we got.
  const server = createServer({ ...SERVER_TIMEOUTS });
  // The open connections, for shutdown: one that has not sent a byte yet is busy to Node
  // (waiting for a request's headers), and would hold the stop for SHUTDOWN_TIMEOUT_MS.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = config.baseUrl === `http://localhost:${config.port}` ? `http://localhost:${port}` : config.baseUrl;

  const budget = new FailureBudget(limiter);
  const audit = new AuditLog(join(dir, 'logs'), now, warn);
  const accounts = new Accounts(accountFile, now, audit);
  const passwords =
    opts.passwords ??
    new Passwords({
      refused: (subject, problem) =>
        warn(
          `${subject}: its stored password hash is refused (${problem}); every password for it fails until one is set again`,
        ),
    });
  const authenticator = new Authenticator({
    passwords,
    accounts: accountFile,
    budget,
    failLimitPerMinute: config.authFailLimitPerMinute,
    touch: (tokenId, client) => tokenUsage.touch(tokenId, now(), client),
    loginKey: (client, name) => sign(serverKey, 'login-user', `${client}\0${name}`).slice(0, 22),
    failed: (kind) => metrics.authFailed(kind),
    now,
  });
  const pastes = new PasteService({
    store,
    views,
    owners,
    recent,
    budget,
    now,
    audit,
    maxRevisions: config.maxRevisions,
    passwords,
  });
  // One budget for both sides: what matters is the memory all unauthenticated bodies hold.
  const preAuth = new BodyBudget(preAuthBudgetBytes(maxBodyBytes(config.maxPasteBytes)));
  const logBudget = new LineBudget(now);
  const api = apiSide({
    baseUrl,
    maxPasteBytes: config.maxPasteBytes,
    preAuth,
    accounts: accountFile,
    authenticator,
    limiter,
    pastes,
    bodies: new ReadBodies(Math.max(1_048_576, config.pasteCacheBytes / 8)),
    idempotency: new Idempotency(
      idempotencyRecords,
      async (hash) => {
        const p = await store.get(hash);
        return p === null ? null : (p.revision ?? 1);
      },
      now,
      serverKey,
      (hash) => pastes.relist(hash),
    ),
    log,
    logBudget,
    now,
    logError,
  });
  const parts = new PageParts(Math.max(1_048_576, config.pasteCacheBytes / 4));
  const web = webSide({
    config: { ...config, baseUrl },
    logDir: join(dir, 'logs'),
    preAuth,
    shownOnce: new ShownOnce(),
    shownPasswords: new ShownOnce(),
    audit,
    parts,
    signer: new Signer(serverKey),
    times: new TimeTags(),
    accounts,
    authenticator,
    sessions,
    pastes,
    tokenUsage,
    limiter,
    now,
    logError,
  });
  // Off unless configured (README, Metrics): then nothing is counted or walked at all.
  const metricsOn = config.metricsToken !== null || config.metricsListen !== null;
  if (metricsOn)
    metrics.attach({
      cache: () => store.cacheStats,
      sweep: () => store.sweepStats,
      pastes: () => pastes.counts,
      log: () => ({
        written: log.written,
        dropped: log.dropped,
        unwritten: log.unwritten,
        unlogged: logBudget.unlogged,
      }),
      writes: () => files.writes,
      parts: () => parts,
      pastesDir: join(dir, 'pastes'),
    });
  if (metricsOn) metrics.watch(server);
  const scrape = (req: IncomingMessage): Reply => metrics.scrape(req, config.metricsToken);
  const inFlight = new InFlight();
  const app = createApp({
    api: serve(
      api,
      logError,
      metricsOn ? (ctx, reply) => metrics.request('api', ctx, reply.status) : undefined,
      inFlight,
    ),
    // The API's steps already wait for the check phase (its accounts check, api/side.ts); the web's would not.
    web: serve(
      web,
      logError,
      metricsOn ? (ctx, reply) => metrics.request('web', ctx, reply.status) : undefined,
      inFlight,
      new TurnQueue(logError),
    ),
    trustProxy: config.trustProxy,
    ipv6PrefixLength: config.ipv6PrefixLength,
    ids: new RequestIds(),
    ...(config.metricsToken === null ? {} : { metrics: scrape }),
  });
  server.on('request', app);
  server.on('checkContinue', (req, res) => {
    inviteWhenRead(req, res);
    app(req, res);
  });
  log.start();

  // METRICS_LISTEN: a second address that serves /metrics and nothing else (README, Metrics).
  let metricsServer: Server | null = null;
  if (config.metricsListen !== null) {
    const { host, port: metricsPort } = config.metricsListen;
    const only = createServer({ ...SERVER_TIMEOUTS }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      respond(
        res,
        path === '/metrics' ? scrape(req) : { kind: 'text', status: 404, body: 'only /metrics is served here\n' },
      );
    });
    await new Promise<void>((resolve, reject) => {
      only.once('error', reject);
      only.listen(metricsPort, host, () => {
        only.off('error', reject);
        resolve();
      });
    }).catch(async (err: unknown) => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw err;
    });
    metricsServer = only;
  }

  // The claim is kept on its own timer, synchronously (store/instance.ts): nothing else the
  // server does can hold it up, and one found gone is written again.
  let claimTold = false;
  const keepClaim = (): void => {
    if (claim.refresh() !== 'taken' || claimTold) return;
    claimTold = true;
    warn(`${join(dir, 'server.pid')} names another process: two servers may be using ${dir}; stop one of them`);
  };
  const claimTimer = setInterval(keepClaim, opts.upkeep?.claimEveryMs ?? MAINTENANCE_MS);
  claimTimer.unref();

  // The expiry sweep runs beside the rest of the upkeep, in bounded slices, so that a
  // minute in which thousands of pastes expire delays no save of the view counts.
  const slice = opts.upkeep?.sweepSlice ?? SWEEP_SLICE;
  let stopping = false;
  let sweeping: Promise<void> | null = null;
  const sweep = async (): Promise<void> => {
    while (!stopping && (await store.sweepSlice(now(), slice)).more)
      if (opts.upkeep?.betweenSlices !== undefined) await opts.upkeep.betweenSlices();
  };
  // A write the disk refused has been reported already (above); anything else is a fault.
  const report = (err: unknown): void => {
    if (!(err instanceof StorageFull || err instanceof StorageReadOnly)) logError(err);
  };

  // The rest of the upkeep, one step at a time so steps never overlap.
  let lastSweep = Number.NEGATIVE_INFINITY;
  let upkeep: Promise<void> = Promise.resolve();
  const step = async (): Promise<void> => {
    if (now() - lastSweep >= SWEEP_MS) {
      lastSweep = now();
      sweeping ??= sweep()
        .catch(report)
        .finally(() => {
          sweeping = null;
        });
      await sessions.sweep();
      await idempotencyRecords.sweep(now());
    }
    await views.drain();
    limiter.prune();
    // The view counts still pending are saved every tick: a crash loses at most this tick's.
    // Every save is waited for, even after one fails, so the tick never ends (nor shutdown
    // begins its own saves) while one is still writing.
    const saved = await Promise.allSettled([views.save(), buckets.save(limiter), tokenUsage.save(), recent.save()]);
    for (const outcome of saved) if (outcome.status === 'rejected') throw outcome.reason;
  };
  const tick = (): Promise<void> => (upkeep = upkeep.then(step).catch(report));
  void tick();
  const timer = setInterval(tick, opts.upkeep?.everyMs ?? MAINTENANCE_MS);
  timer.unref();
  /** One upkeep step now, and the sweep it may have started, to its end (tests; README, Expiry). */
  const upkeepNow = async (): Promise<void> => {
    await tick();
    await sweeping;
  };

  let closing: Promise<string[]> | null = null;
  const close = (): Promise<string[]> =>
    (closing ??= (async () => {
      clearInterval(timer);
      stopping = true;
      metrics.stop();
      if (metricsServer !== null) {
        metricsServer.close();
        metricsServer.closeAllConnections();
      }
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      // close() only drops connections idle right now; keep-alive sockets that finish their
      // request later would otherwise hold shutdown open for the whole keep-alive timeout.
      // A connection that never sent anything has no request to finish (a browser's
      // preconnect, a load balancer's check): it goes too, as an idle one does.
      const closeIdle = (): void => {
        server.closeIdleConnections();
        for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
      };
      closeIdle();
      const sweeper = setInterval(closeIdle, 25);
      const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      await stopped;
      clearInterval(sweeper);
      clearTimeout(deadline);
      // A request cut at the deadline learns it from its socket's close, later: let it (and
      // any still waiting for the disk) finish, log line included, before the log is closed.
      await inFlight.settled(1_000);
      await Promise.all([upkeep, sweeping]);
      accountFile.unwatch();
      // Each save that fails becomes a warning; none keeps the others from being tried.
      const attempt = (what: string, save: Promise<unknown>): Promise<string | null> =>
        save.then(
          () => null,
          (err: unknown) => `could not save ${what}: ${err instanceof Error ? err.message : String(err)}`,
        );
      const outcomes = await Promise.all([
        attempt('the rate-limit buckets', buckets.save(limiter)),
        attempt('the pending view counts', views.save()),
        attempt("the tokens' last use", tokenUsage.save()),
        attempt('the recent pastes list', recent.save()),
        attempt('the API log', log.close()),
      ]);
      clearInterval(claimTimer);
      await claim.release();
      const warnings = outcomes.filter((w): w is string => w !== null);
      if (log.unwritten > 0 || log.dropped > 0) {
        warnings.push(
          `${log.unwritten + log.dropped} API log lines could not be written to ${join(dir, 'logs')} and are lost`,
        );
      }
      return warnings;
    })());

  const metricsPort = metricsServer === null ? null : (metricsServer.address() as AddressInfo).port;
  return { server, port, metricsPort, baseUrl, upkeep: upkeepNow, close };
}
