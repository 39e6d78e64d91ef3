import { isIP } from 'node:net';
import { resolve } from 'node:path';

/** Everything the server reads from its environment, parsed and checked once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  baseUrl: string;
  maxPasteBytes: number;
  trustProxy: boolean;
  authFailLimitPerMinute: number;
  logRetentionDays: number;
  openRegistration: boolean;
  /** How long a login session lasts without activity. */
  sessionIdleMs: number;
  /** How long in-flight requests may take to finish after SIGTERM. */
  shutdownTimeoutMs: number;
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
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

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

  const port = int('PORT', 8080, 0, 65535);
  const host = env['HOST'] || '127.0.0.1';
  // An IPv4 or IPv6 address, or a host name (letters, digits and hyphens, dot-separated labels).
  if (
    isIP(host) === 0 &&
    !/^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
      host,
    )
  ) {
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

  const config: Config = {
    port,
    host,
    dataDir,
    baseUrl,
    maxPasteBytes: int('MAX_PASTE_BYTES', 1_048_576, 1, 64 * 1_048_576),
    trustProxy: flag('TRUST_PROXY'),
    authFailLimitPerMinute: int('AUTH_FAIL_LIMIT_PER_MINUTE', 30, 0, 1_000_000),
    logRetentionDays: int('LOG_RETENTION_DAYS', 30, 1, 36_500),
    openRegistration: flag('OPEN_REGISTRATION'),
    sessionIdleMs: int('SESSION_IDLE_DAYS', 14, 1, 3650) * 86_400_000,
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    pasteCacheBytes: int('PASTE_CACHE_MB', 32, 0, 65_536) * 1_048_576,
    logFormat: logFormatOf(env['LOG_FORMAT'], problems),
    defaultTokenRatePerMinute: int('DEFAULT_TOKEN_RATE_PER_MINUTE', 60, 1, 1_000_000),
    metricsToken: metricsTokenOf(env['METRICS_TOKEN'], problems),
    metricsListen: listenOf(env['METRICS_LISTEN'], problems),
    maxRevisions: int('MAX_REVISIONS', 100, 1, 10_000),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
