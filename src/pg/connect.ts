import type { Options, PostgresType, Sql } from 'postgres';
import type { Config } from '../config.ts';
import type { DatabaseTarget } from '../config/database.ts';
import { driverProblem } from './driver.ts';

/** The connections one server holds at most: a request finding them all busy waits its turn, bounded by the timeout. */
export const POOL_SIZE = 10;

/** The pool, and where it points (for messages: never the password). */
export interface Database {
  readonly sql: Sql<Record<string, PostgresType>>;
  readonly describe: string;
  readonly timeoutMs: number;
  /** The API log's connection beside the pool (`logDriverOptions`). */
  readonly logSql: Sql<Record<string, PostgresType>>;
  /** The background probe's connection beside the pool (`probeDriverOptions`). */
  readonly probeSql: Sql<Record<string, PostgresType>>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Told why each attempt failed while start keeps waiting (the server's log). */
  onWait?: (reason: string) => void;
  /** How long between attempts at start. */
  retryMs?: number;
  /** The driver's module to check before it is used (`driver.ts`); tests point it at an unpatched copy. */
  driverEntry?: string;
}

/** Why a server cannot start: one line for the operator, in the words of CONTRACT's "cannot start". */
export class DatabaseStartError extends Error {
  override readonly name = 'DatabaseStartError';
}

/** SQLSTATE classes no waiting mends: a wrong password or user (28), a database that is not there (3D000). */
const refusedForGood = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('28') || code === '3D000');
};

/** The driver's reason on one line, with the password cut out should the server have echoed it. */
export function reasonOf(err: unknown, password: string | null): string {
  const code = (err as { code?: unknown } | null)?.code;
  // A failed connect to every address of a name is an AggregateError: no message, a code.
  const message = (err instanceof Error ? err.message : String(err)) || (typeof code === 'string' ? code : '');
  const line = message.replace(/\s+/g, ' ').trim() || 'no reason given';
  return password ? line.split(password).join('***') : line;
}

/**
 * Opens a bounded pool on DATABASE_URL and waits, up to DATABASE_WAIT_SECONDS, for the
 * database to answer (containers start together). The driver is imported here and only here,
 * so a server on the filesystem never loads it.
 */
export async function openDatabase(
  config: Pick<Config, 'database' | 'databaseWaitSeconds' | 'databaseTimeoutMs'>,
  opts: OpenOptions = {},
): Promise<Database> {
  const target = config.database;
  if (target === null) throw new DatabaseStartError('cannot start: DATABASE_URL is not set');
  // A driver without the fixes ends the process at the first lost connection: refuse it now.
  const problem = driverProblem(opts.driverEntry);
  if (problem !== null) throw new DatabaseStartError(`cannot start: ${problem}`);
  const { default: postgres } = await import('postgres');
  const deadline = Date.now() + config.databaseWaitSeconds * 1000;
  for (;;) {
    const sql = postgres(driverOptions(target, config.databaseTimeoutMs));
    try {
      // A query, not only a connection: the server may accept connections while still starting up.
      await sql`select 1`;
      const logSql = postgres(logDriverOptions(target, config.databaseTimeoutMs));
      const probeSql = postgres(probeDriverOptions(target, config.databaseTimeoutMs));
      return {
        sql,
        logSql,
        probeSql,
        describe: target.describe,
        timeoutMs: config.databaseTimeoutMs,
        close: async () => {
          await Promise.all([sql.end({ timeout: 1 }), logSql.end({ timeout: 1 }), probeSql.end({ timeout: 0 })]);
        },
      };
    } catch (err) {
      await sql.end({ timeout: 0 });
      const reason = reasonOf(err, target.password);
      if (refusedForGood(err))
        throw new DatabaseStartError(`cannot start: the database at ${target.describe} refused us (${reason})`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new DatabaseStartError(`cannot start: the database at ${target.describe} does not answer (${reason})`);
      opts.onWait?.(reason);
      await new Promise((resolve) => setTimeout(resolve, Math.min(opts.retryMs ?? 250, left)));
    }
  }
}

/**
 * The driver's options, every one given, so neither the PG* environment nor the URL can
 * change them behind our back. The session settings go in the startup packet, which
 * outranks `ALTER DATABASE/ROLE ... SET`: a commit is durable before it is acknowledged
 * (synchronous_commit on), and no statement outlives the request that asked for it.
 */
export function driverOptions(target: DatabaseTarget, timeoutMs: number): Options<Record<string, PostgresType>> {
  const options: Options<Record<string, PostgresType>> = {
    port: target.port,
    ssl: target.ssl === 'disable' ? false : target.ssl,
    max: POOL_SIZE,
    // Whole seconds in the driver; never less than the timeout asked for.
    connect_timeout: Math.ceil(timeoutMs / 1000),
    // Idle connections go after a minute, so a pool that grew for a burst gives them back.
    idle_timeout: 60,
    // Notices (an IF NOT EXISTS that found the table) are not the operator's business.
    onnotice: () => undefined,
    connection: {
      application_name: 'pastebin',
      synchronous_commit: 'on',
      statement_timeout: timeoutMs,
      idle_in_transaction_session_timeout: timeoutMs,
    },
  };
  if (target.socketDir !== null) options.path = `${target.socketDir}/.s.PGSQL.${target.port}`;
  else if (target.host !== null) options.host = target.host;
  if (target.user !== null) options.username = target.user;
  if (target.password !== null) options.password = target.password;
  if (target.database !== null) options.database = target.database;
  return options;
}

/**
 * The API log's one connection beside the pool, which inserts its chunks (pg/api-log.ts).
 * Its commits do not wait for the disk: log lines are not acknowledged writes, and the file
 * log does not fsync them either (log/appender.ts), so a crash of the database may lose its
 * last fraction of a second of lines, as one of the machine may lose the file log's. Every
 * chunk committed so no longer asks for a flush of the WAL of its own, and none waits for a
 * place in the pool the requests use. Named, so an operator tells it apart.
 */
export function logDriverOptions(target: DatabaseTarget, timeoutMs: number): Options<Record<string, PostgresType>> {
  const options = driverOptions(target, timeoutMs);
  return {
    ...options,
    max: 1,
    connection: { ...options.connection, application_name: 'pastebin api log', synchronous_commit: 'off' },
  };
}

/**
 * The background probe's one connection beside the pool (pg/open.ts): it asks whether the
 * database answers, so it must not wait behind the requests' statements for a connection,
 * nor take one from them. Named, so an operator tells it apart.
 */
export function probeDriverOptions(target: DatabaseTarget, timeoutMs: number): Options<Record<string, PostgresType>> {
  const options = driverOptions(target, timeoutMs);
  return { ...options, max: 1, connection: { ...options.connection, application_name: 'pastebin probe' } };
}
