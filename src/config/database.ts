// DATABASE_URL, read as libpq reads it (README, Configuration); config.ts reports its problems
// with every other variable's.

/** SSL as `sslmode` asks: off, tried, or required (with the certificate checked for `verify-full`). */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** Where the database is and who to be there; `describe` never holds the password. */
export interface DatabaseTarget {
  /** A host name or address; null when `socketDir` is set. */
  host: string | null;
  port: number;
  /** The folder of a unix socket (`?host=/run/postgresql`, or a percent-encoded path as the host). */
  socketDir: string | null;
  /** null: the driver's default (PGUSER, then the user running the server), as libpq does. */
  user: string | null;
  password: string | null;
  database: string | null;
  ssl: SslMode;
  /** `host:port` or the socket's path, for messages. */
  describe: string;
}

/** The libpq URL shapes: `postgres://user:pass@host:5432/db?sslmode=require`, `postgres:///db?host=/run/postgresql`. */
export function databaseTargetOf(raw: string | undefined, problems: string[]): DatabaseTarget | null {
  if (raw === undefined || raw === '') return null;
  // The value is never echoed: it may carry a password.
  const bad = (why: string): null => {
    problems.push(`DATABASE_URL ${why}`);
    return null;
  };
  let url: URL;
  try {
    // libpq allows `user@/db?host=/socket`, an empty host WHATWG URLs refuse; `host=` replaces it below.
    url = new URL(raw.replace(/^(postgres(?:ql)?:\/\/[^/?#]*@)(?=[/?]|$)/, '$1localhost'));
  } catch {
    // URL throws a TypeError for anything unparseable.
    return bad('must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    return bad('must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database)');
  // libpq's default: SSL when the server offers it.
  let ssl: SslMode = 'prefer';
  let socketDir: string | null = null;
  for (const [key, value] of url.searchParams) {
    if (key === 'sslmode' && (SSL_MODES as readonly string[]).includes(value)) ssl = value as SslMode;
    else if (key === 'sslmode') return bad(`sslmode must be one of ${SSL_MODES.join(', ')}, got "${value}"`);
    else if (key === 'host' && value.startsWith('/')) socketDir = value;
    else if (key === 'host') return bad('host= must be the absolute path of a unix socket folder');
    // Anything else would reach the server as a session setting (synchronous_commit=off, say).
    else return bad(`has an unsupported parameter "${key}" (only sslmode and host are read)`);
  }
  let malformed = false;
  const decode = (s: string): string | null => {
    try {
      return s === '' ? null : decodeURIComponent(s);
    } catch {
      // decodeURIComponent throws URIError only: a `%` not followed by two hex digits.
      malformed = true;
      return null;
    }
  };
  const hostname = decode(url.hostname) ?? '';
  if (socketDir === null && hostname.startsWith('/')) socketDir = hostname;
  const port = url.port === '' ? 5432 : Number(url.port);
  const database = decode(url.pathname.replace(/^\//, ''));
  const user = decode(url.username);
  const password = decode(url.password);
  if (malformed) return bad('has a % that is not followed by two hex digits');
  if (database?.includes('/')) return bad('must name one database after the host');
  const host = socketDir === null ? hostname.replace(/^\[(.*)\]$/, '$1') : null;
  return {
    host,
    port,
    socketDir,
    user,
    password,
    database,
    ssl,
    describe: socketDir === null ? `${url.hostname}:${port}` : `${socketDir}/.s.PGSQL.${port}`,
  };
}
