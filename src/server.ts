import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { apiSide } from './api/side.ts';
import { ReadBodies } from './api/v1/bodies.ts';
import { Idempotency } from './api/v1/idempotency.ts';
import { createApp } from './app.ts';
import { Accounts } from './auth/accounts.ts';
import { Authenticator } from './auth/authenticate.ts';
import { type PasteUpkeep, type Storage, saveEach } from './backend.ts';
import type { Job } from './jobs/job.ts';
import { Scheduler, timersOn } from './jobs/scheduler.ts';
import type { Config } from './config.ts';
import { Passwords } from './crypto/passwords.ts';
import { Signer, sign } from './crypto/signature.ts';
import { BodyBudget, preAuthBudgetBytes } from './http/body-budget.ts';
import { Cors } from './http/cors.ts';
import { maxBodyBytes } from './http/body.ts';
import { inviteWhenRead } from './http/continue.ts';
import type { Reply } from './http/reply.ts';
import { RequestIds } from './http/request-id.ts';
import { respond } from './http/respond.ts';
import { LineBudget } from './log/line-budget.ts';
import { ServerLog } from './log/server-log.ts';
import { ServerMetrics } from './observe.ts';
import { AnonymousDoor } from './paste/anonymous.ts';
import { PasteService } from './paste/service.ts';
import type { RequestContext } from './pipeline/context.ts';
import { InFlight, serve, TurnQueue, type FaultLog } from './pipeline/run.ts';
import { FailureBudget } from './ratelimit/failure-budget.ts';
import { StorageFull, StorageReadOnly, StorageUnavailable } from './storage/errors.ts';
import { openPgStorage } from './pg/open.ts';
import { openFileStorage } from './store/open.ts';
import { PageParts } from './web/page-parts.ts';
import { ShownOnce } from './web/shown-once.ts';
import { OidcClient } from './web/oidc-client.ts';
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

/** How often the expiry sweep runs, once across the servers sharing the storage. */
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
    /** How often what is counted in memory is saved (UPKEEP_MS in backend.ts). */
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
  /** Where the state lives, for the start-up line: `the data folder …`, `PostgreSQL at …`. */
  storage: string;
  /**
   * A round of every background job now (the expiry sweep, view counts, state files, record
   * sweeps), each after its round in progress; resolves once all have ended (tests).
   */
  upkeep(): Promise<void>;
  /**
   * The first phase of a stop behind a load balancer: /healthz answers 503 at once while every
   * request is still served, for SHUTDOWN_DRAIN_MS; resolves then, or as soon as close() is called.
   */
  drain(): Promise<void>;
  /**
   * Graceful stop: no new connections, finish in-flight requests, persist state. Resolves
   * with what could not be saved (a full or read-only disk), one sentence each; it does
   * not fail for that, so the process still ends cleanly.
   */
  close(): Promise<string[]>;
}

/** What every phase of a server shares: the configuration, the clock and where messages go. */
interface Basics {
  config: Config;
  opts: ServerOptions;
  now: () => number;
  logError: FaultLog;
  warn: (message: string) => void;
  info: (message: string) => void;
  metrics: ServerMetrics;
}

/**
 * Opens the storage the configuration names (ARCHITECTURE.md, The storage seam), the one
 * place that picks a backend: the data folder unless `DATABASE_URL` is set.
 */
async function openStorage(b: Basics): Promise<Storage> {
  const options = {
    config: b.config,
    now: b.now,
    warn: b.warn,
    info: b.info,
    synced: (what: 'file' | 'folder', seconds: number) => b.metrics.fsync.observe(seconds, [what]),
    ...(b.opts.upkeep?.claimEveryMs === undefined ? {} : { claimEveryMs: b.opts.upkeep.claimEveryMs }),
    ...(b.opts.upkeep?.everyMs === undefined ? {} : { upkeepEveryMs: b.opts.upkeep.everyMs }),
  };
  return b.config.database === null ? openFileStorage(options) : openPgStorage(options);
}

/** The services, the rate limiter and the budgets every side shares, built on the storage. */
function buildServices(b: Basics, storage: Storage) {
  const { config, now, warn } = b;
  const limiter = storage.limiter;
  const budget = new FailureBudget(limiter);
  const passwords =
    b.opts.passwords ??
    new Passwords({
      refused: (subject, problem) =>
        warn(
          `${subject}: its stored password hash is refused (${problem}); every password for it fails until one ` +
            'is set again',
        ),
    });
  const authenticator = new Authenticator({
    passwords,
    accounts: storage.accounts,
    budget,
    failLimitPerMinute: config.authFailLimitPerMinute,
    touch: (tokenId, client) => storage.tokenUsage.touch(tokenId, now(), client),
    loginKey: (client, name) => sign(storage.serverKey, 'login-user', `${client}\0${name}`).slice(0, 22),
    failed: (kind) => b.metrics.authFailed(kind),
    now,
  });
  const pastes = new PasteService({
    store: storage.pastes,
    views: storage.views,
    owners: storage.owners,
    recent: storage.recent,
    budget,
    now,
    audit: storage.audit,
    maxRevisions: config.maxRevisions,
    passwords,
    files: { bytes: storage.fileBytes, limits: config.files },
  });
  return {
    limiter,
    authenticator,
    pastes,
    anonymous: config.anonymous === null ? null : new AnonymousDoor(config.anonymous, limiter),
    accounts: new Accounts(storage.accounts, now, storage.audit),
    // One budget for both sides: what matters is the memory all unauthenticated bodies hold.
    preAuth: new BodyBudget(preAuthBudgetBytes(maxBodyBytes(config.maxPasteBytes))),
    logBudget: new LineBudget(now),
    // One signer for the server key: the web's grants and CSRF tokens, the API's file grants.
    signer: new Signer(storage.serverKey),
  };
}
type Services = ReturnType<typeof buildServices>;

/** The API side (api/side.ts) on the services. */
function buildApi(b: Basics, storage: Storage, s: Services, baseUrl: string) {
  const { config, now, logError } = b;
  return apiSide({
    baseUrl,
    loopbackIsOurs: config.baseUrlDefault,
    maxPasteBytes: config.maxPasteBytes,
    files: { tmpDir: storage.fileBytes.tmpDir, limits: config.files },
    preAuth: s.preAuth,
    accounts: storage.accounts,
    authenticator: s.authenticator,
    limiter: s.limiter,
    pastes: s.pastes,
    anonymous: s.anonymous,
    cors: config.corsOrigins.length === 0 ? null : new Cors(config.corsOrigins),
    bodies: new ReadBodies(Math.max(1_048_576, config.pasteCacheBytes / 8)),
    idempotency: new Idempotency(
      storage.idempotency,
      async (hash) => {
        const p = await storage.pastes.get(hash);
        return p === null ? null : (p.revision ?? 1);
      },
      now,
      storage.serverKey,
      (hash) => s.pastes.relist(hash),
    ),
    log: storage.apiLog,
    logBudget: s.logBudget,
    now,
    signer: s.signer,
    logError,
  });
}

/** The web side (web/side.ts) on the services, with the parts of pages it keeps. */
function buildWeb(b: Basics, storage: Storage, s: Services, baseUrl: string, parts: PageParts) {
  const { config, now, logError } = b;
  return webSide({
    config: { ...config, baseUrl },
    apiLog: storage.apiLog,
    preAuth: s.preAuth,
    files: { tmpDir: storage.fileBytes.tmpDir, limits: config.files },
    shownOnce: new ShownOnce(storage.shownOnce, 'token'),
    shownPasswords: new ShownOnce(storage.shownOnce, 'user'),
    audit: storage.audit,
    parts,
    signer: s.signer,
    times: new TimeTags(),
    accounts: s.accounts,
    authenticator: s.authenticator,
    sessions: storage.sessions,
    pastes: s.pastes,
    anonymous: s.anonymous,
    tokenUsage: storage.tokenUsage,
    limiter: s.limiter,
    now,
    logError,
    oidc:
      config.oidc === null
        ? null
        : new OidcClient(config.oidc, `${baseUrl}/login/oidc/callback`, storage.serverKey, now),
    warn: b.warn,
  });
}

/** The API and the web side on the services, and the request listener that routes to them. */
function buildSides(b: Basics, storage: Storage, s: Services, baseUrl: string, draining: () => boolean) {
  const { config, logError, metrics } = b;
  const parts = new PageParts(Math.max(1_048_576, config.pasteCacheBytes / 4));
  const api = buildApi(b, storage, s, baseUrl);
  const web = buildWeb(b, storage, s, baseUrl, parts);
  // Off unless configured (README, Metrics): then nothing is counted or walked at all.
  const metricsOn = config.metricsToken !== null || config.metricsListen !== null;
  if (metricsOn)
    metrics.attach({
      ...storage.stats,
      pastes: () => s.pastes.counts,
      log: () => ({
        written: storage.apiLog.written,
        dropped: storage.apiLog.dropped,
        unwritten: storage.apiLog.unwritten,
        unlogged: s.logBudget.unlogged,
      }),
      parts: () => parts,
    });
  const scrape = (req: IncomingMessage): Reply => metrics.scrape(req, config.metricsToken);
  const inFlight = new InFlight();
  const counted = (side: 'api' | 'web') =>
    metricsOn ? (ctx: RequestContext, reply: Reply) => metrics.request(side, ctx, reply.status) : undefined;
  const app = createApp({
    api: serve(api, logError, counted('api'), inFlight),
    // The API's steps already wait for the check phase (its accounts check, api/side.ts); the web's would not.
    web: serve(web, logError, counted('web'), inFlight, new TurnQueue(logError)),
    trustProxy: config.trustProxy,
    ipv6PrefixLength: config.ipv6PrefixLength,
    ids: new RequestIds(),
    ...(config.metricsToken === null ? {} : { metrics: scrape }),
    health: () => (draining() ? { ok: false, shutting_down: true } : (storage.health?.() ?? { ok: true })),
    ...(storage.scope === undefined ? {} : { scope: storage.scope }),
  });
  return { app, scrape, inFlight, metricsOn };
}
type Sides = ReturnType<typeof buildSides>;

/** Listens on HOST:PORT, keeping the open connections for a graceful close. */
async function listen(config: Config): Promise<{ server: Server; sockets: Set<Socket>; port: number }> {
  const server = createServer({ ...SERVER_TIMEOUTS });
  // The open connections, for shutdown: one that has not sent a byte yet is busy to Node
  // (waiting for a request's headers), and would hold the stop for SHUTDOWN_TIMEOUT_MS.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await listening(server, config.port, config.host);
  return { server, sockets, port: (server.address() as AddressInfo).port };
}

const listening = (server: Server, port: number, host: string): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });

/** METRICS_LISTEN: a second address that serves /metrics and nothing else (README, Metrics). */
async function listenForMetrics(config: Config, scrape: (req: IncomingMessage) => Reply): Promise<Server | null> {
  if (config.metricsListen === null) return null;
  const only = createServer({ ...SERVER_TIMEOUTS }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    respond(
      res,
      path === '/metrics' ? scrape(req) : { kind: 'text', status: 404, body: 'only /metrics is served here\n' },
    );
  });
  await listening(only, config.metricsListen.port, config.metricsListen.host);
  return only;
}

/**
 * The expiry sweep (README, Expiry), a job like the backend's: it runs in bounded slices, so
 * that a minute in which thousands of pastes expire delays no other job, and a stop ends it
 * between two slices.
 */
function expirySweep(b: Basics, pastes: PasteUpkeep): Job {
  const slice = b.opts.upkeep?.sweepSlice ?? SWEEP_SLICE;
  const between = b.opts.upkeep?.betweenSlices;
  return {
    name: 'expiry sweep',
    everyMs: SWEEP_MS,
    // The servers sharing a database take turns: one of them does each round (README, Running several instances).
    oncePerCluster: true,
    run: async (_now, stop) => {
      while (!stop.aborted && (await pastes.sweepSlice(b.now(), slice)).more)
        if (between !== undefined) await between();
    },
  };
}

/** The background jobs, the backend's and the expiry sweep, on one scheduler (ARCHITECTURE.md, Background jobs). */
function startJobs(b: Basics, storage: Storage): Scheduler {
  const scheduler = new Scheduler({
    jobs: [...storage.jobs, expirySweep(b, storage.pastes)],
    clock: timersOn(b.now),
    turn: (job, everyMs) => storage.turn(job, everyMs),
    // A write the storage refused, or an outage of the database, has been reported already (the
    // backend warns once); anything else is a fault.
    report: (err) => {
      if (!(err instanceof StorageFull || err instanceof StorageReadOnly || err instanceof StorageUnavailable))
        b.logError(err);
    },
  });
  scheduler.start();
  return scheduler;
}

/**
 * SIGTERM's first phase (README, Running several instances): /healthz answers 503 while
 * requests are still served, so the load balancer's checks take this instance out before it closes.
 */
function drainPhase(drainMs: number) {
  let draining = false;
  let endDrain = (): void => {};
  let drained: Promise<void> | null = null;
  return {
    get draining(): boolean {
      return draining;
    },
    /** Begins the phase; resolves after SHUTDOWN_DRAIN_MS, or as soon as it is ended. */
    begin: (): Promise<void> =>
      (drained ??= new Promise<void>((resolve) => {
        draining = true;
        const timer = setTimeout(resolve, drainMs);
        endDrain = () => {
          clearTimeout(timer);
          resolve();
        };
      })),
    /** Ends the phase at once (close), /healthz still answering 503. */
    end: (): void => {
      draining = true;
      endDrain();
    },
  };
}
type Drain = ReturnType<typeof drainPhase>;

/** Routes the requests to the sides, and serves METRICS_LISTEN if configured. */
async function serveSides(b: Basics, server: Server, sides: Sides): Promise<Server | null> {
  if (sides.metricsOn) b.metrics.watch(server);
  server.on('request', sides.app);
  server.on('checkContinue', (req, res) => {
    inviteWhenRead(req, res);
    sides.app(req, res);
  });
  return listenForMetrics(b.config, sides.scrape).catch(async (err: unknown) => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  });
}

/** What a running server lets go of at close, in the order close goes through it. */
interface Running {
  drain: Drain;
  metricsServer: Server | null;
  server: Server;
  sockets: Set<Socket>;
  sides: Sides;
  jobs: Scheduler;
  storage: Storage;
}

/**
 * The graceful stop: listening ends and requests in flight finish, the jobs stop, then every
 * save is tried and the backend lets go; resolves with what could not be saved.
 */
async function closeServer(b: Basics, r: Running): Promise<string[]> {
  r.drain.end();
  b.metrics.stop();
  if (r.metricsServer !== null) {
    r.metricsServer.close();
    r.metricsServer.closeAllConnections();
  }
  await stopListening(r.server, r.sockets, b.config.shutdownTimeoutMs);
  // A request cut at the deadline learns it from its socket's close, later: let it (and
  // any still waiting for the storage) finish, log line included, before the log is closed.
  await r.sides.inFlight.settled(1_000);
  await r.jobs.stop();
  const unsaved = await saveEach(r.storage.saves);
  return [...unsaved, ...(await r.storage.release())];
}

/**
 * Opens the storage, builds the services and the two sides on it, starts listening, and
 * runs the background jobs. Every piece of state (caches, buckets, counters, pools) lives
 * on an object made here, so two servers in one process share none.
 */
export async function startServer(config: Config, opts: ServerOptions = {}): Promise<RunningServer> {
  const serverLog = new ServerLog(config.logFormat);
  const b: Basics = {
    config,
    opts,
    now: opts.now ?? Date.now,
    logError: opts.logError ?? ((err, requestId) => serverLog.fault(err, requestId)),
    warn: opts.warn ?? ((message: string) => serverLog.warn(message)),
    info: opts.info ?? ((message: string) => serverLog.info(message)),
    metrics: new ServerMetrics(),
  };
  const storage = await openStorage(b);
  const services = buildServices(b, storage);
  // Listen before building the sides: with PORT=0 the default BASE_URL needs the port we got.
  const { server, sockets, port } = await listen(config);
  const baseUrl = config.baseUrl === `http://localhost:${config.port}` ? `http://localhost:${port}` : config.baseUrl;
  const drain = drainPhase(config.shutdownDrainMs);
  const sides = buildSides(b, storage, services, baseUrl, () => drain.draining);
  const metricsServer = await serveSides(b, server, sides);
  const jobs = startJobs(b, storage);
  let closing: Promise<string[]> | null = null;
  const running: Running = { drain, metricsServer, server, sockets, sides, jobs, storage };
  return {
    server,
    port,
    metricsPort: metricsServer === null ? null : (metricsServer.address() as AddressInfo).port,
    baseUrl,
    storage: storage.describe,
    upkeep: () => jobs.runAll(),
    drain: drain.begin,
    close: () => (closing ??= closeServer(b, running)),
  };
}

/**
 * No new connections; requests in flight finish (until the deadline). close() only drops
 * connections idle right now; keep-alive sockets that finish their request later would
 * otherwise hold shutdown open for the whole keep-alive timeout. A connection that never
 * sent anything has no request to finish (a browser's preconnect, a load balancer's
 * check): it goes too, as an idle one does.
 */
async function stopListening(server: Server, sockets: Set<Socket>, deadlineMs: number): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  const closeIdle = (): void => {
    server.closeIdleConnections();
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
  };
  closeIdle();
  const sweeper = setInterval(closeIdle, 25);
  const deadline = setTimeout(() => server.closeAllConnections(), deadlineMs);
  await stopped;
  clearInterval(sweeper);
  clearTimeout(deadline);
}
