import type { Config } from './config.ts';
import type { LogAppender } from './log/appender.ts';
import type { PasteService } from './paste/service.ts';
import type { RateLimiter } from './ratelimit/bucket.ts';
import type { AccountStore } from './store/accounts.ts';
import type { PasteStore } from './store/pastes.ts';
import type { SessionStore } from './store/sessions.ts';
import type { TokenUsage } from './store/token-usage.ts';

/** Everything a request may touch, built once by main (or a test) and passed down. */
export interface AppDeps {
  config: Config;
  accounts: AccountStore;
  store: PasteStore;
  pastes: PasteService;
  tokenUsage: TokenUsage;
  /** Web login sessions (the API uses tokens instead). */
  sessions: SessionStore;
  limiter: RateLimiter;
  log: LogAppender;
  now: () => number;
  /** Where unexpected faults go: the server's own log, never the client. */
  logError: (err: unknown) => void;
}
