import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { type AuthProxyConfig, authProxyOf } from './config/auth-proxy.ts';
import { type OidcConfig, oidcOf } from './config/oidc.ts';
import { type DatabaseTarget, databaseTargetOf } from './config/database.ts';
import { fileStoreOf, type S3Target } from './config/file-store.ts';

/** Everything the server reads from its environment, parsed and checked once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  baseUrl: string;
  /** BASE_URL was not set: a web form posted from any loopback spelling of PORT is ours too (http/site-origins.ts). */
  baseUrlDefault: boolean;
  maxPasteBytes: number;
  trustProxy: boolean;
  authFailLimitPerMinute: number;
  /** Per-IP budgets key an IPv6 client by its network of this many bits (http/client-ip.ts). */
  ipv6PrefixLength: number;
  logRetentionDays: number;
  openRegistration: boolean;
  /** How long a login session lasts without activity. */
  sessionIdleMs: number;
  /** How long in-flight requests may take to finish after SIGTERM. */
  shutdownTimeoutMs: number;
  /**
   * How long a stopping server keeps serving after SIGTERM while /healthz answers 503, so a
   * load balancer takes it out before it closes (README, Running several instances).
   */
  shutdownDrainMs: number;
  /** Memory for hot pastes and their rendered responses. */
  pasteCacheBytes: number;
  /** The server's own log: JSON lines, or lines for people (README, Server log). */
  logFormat: 'json' | 'pretty';
  /** The rate new tokens made on My API Keys get; only admins set more, or 0 (README, Configuration). */
  defaultTokenRatePerMinute: number;
  /** The bearer token scrapers send for /metrics (README, Metrics); null: not on the main port. */
  metricsToken: string | null;
  /** A second address serving only /metrics; null for none. */
  metricsListen: { host: string; port: number } | null;
  /** Earlier versions kept per paste; an edit past this drops the oldest (README, Revisions). */
  maxRevisions: number;
  /** DATABASE_URL, parsed: PostgreSQL holds every piece of state; null: DATA_DIR does (README, Configuration). */
  database: DatabaseTarget | null;
  /** How long start waits for the database to answer (containers start together). */
  databaseWaitSeconds: number;
  /** How long one query (and one connection attempt) may take before the request gets a 503. */
  databaseTimeoutMs: number;
  /** Sign-in by a trusted proxy (README, Sign-in by a proxy); null: off, the header means nothing. */
  authProxy: AuthProxyConfig | null;
  /** Sign-in with OpenID Connect (README, Sign-in with OpenID Connect); null: off, /login/oidc is 404. */
  oidc: OidcConfig | null;
  /** ANONYMOUS_PASTES and its limits (README, Anonymous pastes); null: every create needs an account. */
  anonymous: AnonymousLimits | null;
  /** CORS_ORIGINS: the origins the API answers across origins (`*`: any); empty: none (README, CORS). */
  corsOrigins: readonly string[];
  /** MARKDOWN_REMOTE_IMAGES: a rendered Markdown paste shows images from other servers (README, Markdown). */
  markdownRemoteImages: boolean;
  /** MAX_FILE_BYTES, MAX_FILES_PER_PASTE, USER_QUOTA_BYTES, ANONYMOUS_FILES (README, Files). */
  files: FileLimits;
  /**
   * FILE_STORE=s3://… and its S3_* settings: the files' bytes go to that bucket; null: with the pastes
   * (README, Files).
   */
  fileStore: S3Target | null;
}

/** The files' limits (README, Files). */
export interface FileLimits {
  maxFileBytes: number;
  maxFilesPerPaste: number;
  userQuotaBytes: number;
  /** ANONYMOUS_FILES: an anonymous create may bring files. */
  anonymousFiles: boolean;
}

export const FILE_LIMIT_DEFAULTS: FileLimits = {
  maxFileBytes: 10_485_760,
  maxFilesPerPaste: 10,
  userQuotaBytes: 1_073_741_824,
  anonymousFiles: false,
};

/** What a create without an account may do: per client IP per minute, bytes, the longest expiry. */
export interface AnonymousLimits {
  ratePerMinute: number;
  maxBytes: number;
  maxExpiry: AnonymousExpiry;
}

/** The expiries an anonymous paste may be capped at: any of paste/expiry.ts's but `never`. */
const ANONYMOUS_EXPIRIES = ['10m', '1h', '1d', '1w', '1m'] as const;
type AnonymousExpiry = (typeof ANONYMOUS_EXPIRIES)[number];
const isAnonymousExpiry = (s: string): s is AnonymousExpiry => (ANONYMOUS_EXPIRIES as readonly string[]).includes(s);

/** Anonymous pastes' default size bound, when MAX_PASTE_BYTES is not smaller. */
const ANONYMOUS_DEFAULT_BYTES = 65_536;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

// A host name of at most the DNS length, in labels that neither start nor end with a hyphen.
const HOST_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^(?=.{1,253}$)${HOST_LABEL}(?:\\.${HOST_LABEL})*$`);

/** METRICS_TOKEN: at least 16 printable characters without spaces, or unset. */
function metricsTokenOf(raw: string | undefined, problems: string[]): string | null {
  if (raw === undefined || raw === '') return null;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) {
    problems.push('METRICS_TOKEN must be 16 to 256 printable characters without spaces');
    return null;
  }
  return raw;
}

/** METRICS_LISTEN: `host:port` (`[::1]:9464` for IPv6), or unset. */
function listenOf(raw: string | undefined, problems: string[]): { host: string; port: number } | null {
  if (raw === undefined || raw === '') return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(raw);
  const port = Number(m?.[3]);
  if (m === null || port > 65535) {
    problems.push(`METRICS_LISTEN must be host:port (e.g. 127.0.0.1:9464), got "${raw}"`);
    return null;
  }
  return { host: m[1] ?? m[2] ?? '', port };
}

/**
 * CORS_ORIGINS: a comma-separated list of origins (`https://app.example`, a port if not the
 * scheme's own, no path), or `*` alone; unset or empty: none.
 */
export function corsOriginsOf(raw: string | undefined, problems: string[]): string[] {
  const list = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (list.length === 1 && list[0] === '*') return ['*'];
  const origins: string[] = [];
  for (const item of list) {
    let origin: string | null = null;
    try {
      const u = new URL(item);
      // Browsers send an origin as scheme://host[:port], lower case, the default port left out.
      if (
        (u.protocol === 'http:' || u.protocol === 'https:') &&
        `${u.origin}` === item.toLowerCase().replace(/\/$/, '')
      )
        origin = u.origin;
    } catch {
      // URL throws a TypeError for anything unparseable: reported below.
    }
    if (origin === null) {
      problems.push(
        `CORS_ORIGINS must be * or a comma-separated list of origins such as https://app.example:8443, got "${item}"`,
      );
    } else origins.push(origin);
  }
  return origins;
}

/** LOG_FORMAT: `json` (the default) or `pretty`. */
export function logFormatOf(raw: string | undefined, problems: string[] = []): 'json' | 'pretty' {
  if (raw === undefined || raw === '' || raw === 'json') return 'json';
  if (raw === 'pretty') return 'pretty';
  problems.push(`LOG_FORMAT must be json or pretty, got "${raw}"`);
  return 'json';
}

/** Parses the environment; reports every bad variable at once rather than the first. */
export function parseConfig(env: NodeJS.ProcessEnv): Config {
  const problems: string[] = [];

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return Number(raw);
  };
  const flag = (name: string): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
    if (raw === '1' || raw === 'true') return true;
    problems.push(`${name} must be 0 or 1, got "${raw}"`);
    return false;
  };

  /** The anonymous door's limits; its bytes are at most MAX_PASTE_BYTES, its expiry never `never`. */
  const anonymousOf = (maxPasteBytes: number): AnonymousLimits => {
    const maxExpiry = env['ANONYMOUS_MAX_EXPIRY'] || '1w';
    if (!isAnonymousExpiry(maxExpiry))
      problems.push(`ANONYMOUS_MAX_EXPIRY must be one of ${ANONYMOUS_EXPIRIES.join(', ')}, got "${maxExpiry}"`);
    return {
      ratePerMinute: int('ANONYMOUS_RATE_PER_MINUTE', 10, 1, 1_000_000),
      maxBytes: int('ANONYMOUS_MAX_BYTES', Math.min(ANONYMOUS_DEFAULT_BYTES, maxPasteBytes), 1, maxPasteBytes),
      maxExpiry: isAnonymousExpiry(maxExpiry) ? maxExpiry : '1w',
    };
  };

  const port = int('PORT', 8080, 0, 65535);
  const host = env['HOST'] || '127.0.0.1';
  // An IPv4 or IPv6 address, or a host name (letters, digits and hyphens, dot-separated labels).
  if (isIP(host) === 0 && !HOST_NAME.test(host)) {
    problems.push(`HOST must be an IP address or a host name, got "${host}"`);
  }
  const dataDir = resolve(env['DATA_DIR'] || './data');
  let baseUrl = env['BASE_URL'] || `http://localhost:${port}`;
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError('protocol');
    baseUrl = baseUrl.replace(/\/+$/, '');
  } catch {
    // URL throws a TypeError for anything unparseable; that is exactly "invalid".
    problems.push(`BASE_URL must be an http(s) URL, got "${baseUrl}"`);
  }

  const trustProxy = flag('TRUST_PROXY');
  const config: Config = {
    port,
    host,
    dataDir,
    baseUrl,
    baseUrlDefault: !env['BASE_URL'],
    maxPasteBytes: int('MAX_PASTE_BYTES', 1_048_576, 1, 64 * 1_048_576),
    trustProxy,
    authFailLimitPerMinute: int('AUTH_FAIL_LIMIT_PER_MINUTE', 30, 0, 1_000_000),
    ipv6PrefixLength: int('IPV6_PREFIX_LENGTH', 64, 32, 128),
    logRetentionDays: int('LOG_RETENTION_DAYS', 30, 1, 36_500),
    openRegistration: flag('OPEN_REGISTRATION'),
    sessionIdleMs: int('SESSION_IDLE_DAYS', 14, 1, 3650) * 86_400_000,
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    // Behind a proxy, long enough for deploy/haproxy.cfg's checks (every 500 ms) to see the 503.
    shutdownDrainMs: int('SHUTDOWN_DRAIN_MS', trustProxy ? 2_000 : 0, 0, 600_000),
    pasteCacheBytes: int('PASTE_CACHE_MB', 32, 0, 65_536) * 1_048_576,
    logFormat: logFormatOf(env['LOG_FORMAT'], problems),
    defaultTokenRatePerMinute: int('DEFAULT_TOKEN_RATE_PER_MINUTE', 60, 1, 1_000_000),
    metricsToken: metricsTokenOf(env['METRICS_TOKEN'], problems),
    metricsListen: listenOf(env['METRICS_LISTEN'], problems),
    database: databaseTargetOf(env['DATABASE_URL'], problems),
    databaseWaitSeconds: int('DATABASE_WAIT_SECONDS', 30, 0, 3600),
    databaseTimeoutMs: int('DATABASE_TIMEOUT_MS', 5000, 100, 600_000),
    maxRevisions: int('MAX_REVISIONS', 100, 1, 10_000),
    authProxy: authProxyOf(env, problems, flag),
    oidc: oidcOf(env, problems, flag),
    anonymous: null,
    corsOrigins: corsOriginsOf(env['CORS_ORIGINS'], problems),
    markdownRemoteImages: flag('MARKDOWN_REMOTE_IMAGES'),
    files: {
      maxFileBytes: int('MAX_FILE_BYTES', FILE_LIMIT_DEFAULTS.maxFileBytes, 1, 1_073_741_824),
      maxFilesPerPaste: int('MAX_FILES_PER_PASTE', FILE_LIMIT_DEFAULTS.maxFilesPerPaste, 0, 1_000),
      userQuotaBytes: int('USER_QUOTA_BYTES', FILE_LIMIT_DEFAULTS.userQuotaBytes, 0, Number.MAX_SAFE_INTEGER),
      anonymousFiles: flag('ANONYMOUS_FILES'),
    },
    fileStore: fileStoreOf(env, problems, flag),
  };
  config.anonymous = flag('ANONYMOUS_PASTES') ? anonymousOf(config.maxPasteBytes) : null;
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
