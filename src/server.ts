import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import type { AppDeps } from './deps.ts';
import { LogAppender } from './log/appender.ts';
import { PasteService } from './paste/service.ts';
import { RateLimiter } from './ratelimit/bucket.ts';
import { loadBuckets, saveBuckets } from './ratelimit/persist.ts';
import { AccountStore } from './store/accounts.ts';
import { DurableFiles } from './store/files.ts';
import { OwnerIndex } from './store/owner-index.ts';
import { PasteStore } from './store/pastes.ts';
import { RecentPastes } from './store/recent.ts';
import { SessionStore } from './store/sessions.ts';
import { TokenUsage } from './store/token-usage.ts';
import { ViewCounter } from './store/views.ts';

/** Timeouts against slow or idle clients (documented in the README). */
export const SERVER_TIMEOUTS = {
  headersTimeout: 10_000,
  requestTimeout: 60_000,
  keepAliveTimeout: 5_000,
} as const;

const MAINTENANCE_MS = 5_000;
const SWEEP_MS = 60_000;

export interface RunningServer {
  server: Server;
  port: number;
  deps: AppDeps;
  /** Graceful stop: no new connections, finish in-flight requests, persist state. */
  close(): Promise<void>;
}

/** Opens the stores under DATA_DIR, starts listening, and runs the background upkeep. */
export async function startServer(config: Config, now: () => number = Date.now): Promise<RunningServer> {
  const dir = config.dataDir;
  const files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
  const state = join(dir, 'state');
  await files.ensureDir(state);

  const accounts = new AccountStore(dir, files);
  const store = new PasteStore(dir, files, config.pasteCacheBytes);
  const views = new ViewCounter(store, files, join(state, 'views.json'));
  const tokenUsage = new TokenUsage(files, join(state, 'token-usage.json'));
  const owners = new OwnerIndex(dir, files);
  const recent = new RecentPastes(files, join(state, 'recent.json'));
  const sessions = new SessionStore(join(dir, 'sessions'), files, config.sessionIdleMs, now);
  const limiter = new RateLimiter(now);
  const bucketsFile = join(state, 'ratelimit.json');
  const log = new LogAppender({ dir: join(dir, 'logs'), now, retentionDays: config.logRetentionDays });
  await Promise.all([accounts.load(), store.init(), owners.init(), views.load(), tokenUsage.load(), recent.load(), sessions.load()]);
  limiter.restore(await loadBuckets(bucketsFile));
  await accounts.watch();

  // Listen before building the app: with PORT=0 the default BASE_URL needs the port we got.
  const server = createServer({ ...SERVER_TIMEOUTS });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  if (config.baseUrl === `http://localhost:${config.port}`) config = { ...config, baseUrl: `http://localhost:${port}` };

  const deps: AppDeps = {
    config,
    accounts,
    store,
    pastes: new PasteService(store, views, owners, recent, now),
    tokenUsage,
    sessions,
    limiter,
    log,
    now,
    logError: (err) => console.error(err),
  };

  server.on('request', createApp(deps));
  log.start();

  // Background upkeep, one step at a time so steps never overlap.
  let lastSweep = 0;
  let upkeep: Promise<void> = Promise.resolve();
  const step = async (): Promise<void> => {
    if (now() - lastSweep >= SWEEP_MS) {
      lastSweep = now();
      await store.sweepExpired(now());
      await sessions.sweep();
    }
    await views.drain();
    limiter.prune();
    await Promise.all([saveBuckets(files, bucketsFile, limiter), tokenUsage.save(), recent.save()]);
  };
  const tick = (): void => {
    upkeep = upkeep.then(step).catch(deps.logError);
  };
  tick();
  const timer = setInterval(tick, MAINTENANCE_MS);
  timer.unref();

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      clearInterval(timer);
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      // close() only drops connections idle right now; keep-alive sockets that finish their
      // request later would otherwise hold shutdown open for the whole keep-alive timeout.
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), 25);
      const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      await stopped;
      clearInterval(sweeper);
      clearTimeout(deadline);
      await upkeep;
      accounts.unwatch();
      await Promise.all([saveBuckets(files, bucketsFile, limiter), views.save(), tokenUsage.save(), recent.save(), log.close()]);
    })());

  return { server, port, deps, close };
}
