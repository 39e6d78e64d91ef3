import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Accounts, checkPassword, TOKEN_LABEL_MAX } from './auth/accounts.ts';
import { isScope, type Scope } from './auth/tokens.ts';
import { type Config, ConfigError, parseConfig } from './config.ts';
import { hashPassword } from './crypto/passwords.ts';
import { AuditLog, type Actor } from './log/audit.ts';
import { isAnonymous } from './paste/anonymous.ts';
import { formatTime } from './paste/paste.ts';
import { BackupRefused, writeBackup } from './store/backup.ts';
import { restoreBackup, RestoreError } from './store/restore.ts';
import { exportLine, importPastes } from './store/transfer.ts';
import { openFileCli } from './store/open.ts';
import { openPgCli } from './pg/open.ts';
import type { CliStorage } from './backend.ts';
import { describeProblem } from './storage/problems.ts';

export class CliError extends Error {}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: (line: string) => void;
  /** Warnings: the command worked, but something beside it did not (default: none shown). */
  stderr?: (line: string) => void;
  readStdin: () => Promise<string>;
  /**
   * Standard input a line at a time, for input too large to hold (`import`), as text or as
   * each line's bytes (then invalid UTF-8 is refused, not replaced); default: `readStdin` split.
   */
  stdinLines?: () => AsyncIterable<string | Uint8Array>;
}

const USAGE = `usage:
  user add NAME [--admin] [--password-stdin]
  user passwd NAME            (new password on stdin)
  user list
  user disable NAME | user enable NAME
  user admin NAME [--remove]
  token create --user NAME --scopes read,write[,admin] [--rate N] [--label TEXT] [--expires 30d]
  token list
  token revoke ID
  export [--user NAME] > pastes.jsonl
  import < pastes.jsonl
  backup FILE [--with-logs]
  restore FILE [--force]`;

/** Parses `--flag [value]` options strictly: unknown flags and missing values are errors. */
export function parseOptions(
  args: string[],
  spec: Record<string, 'bool' | 'value'>,
): { positional: string[]; opts: Map<string, string | true> } {
  const positional: string[] = [];
  const opts = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new CliError(`unknown option ${arg}`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    // An own key only: `--constructor` is no flag of any command.
    const kind = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (kind === undefined) throw new CliError(`unknown option --${name}`);
    if (opts.has(name)) throw new CliError(`option --${name} given twice`);
    if (kind === 'bool') {
      if (inline !== undefined) throw new CliError(`option --${name} takes no value`);
      opts.set(name, true);
    } else {
      const value = inline ?? args[++i];
      if (value === undefined || (inline === undefined && value.startsWith('--')))
        throw new CliError(`option --${name} needs a value`);
      opts.set(name, value);
    }
  }
  return { positional, opts };
}

/** Runs one CLI command against DATA_DIR; the running server sees the change on its next request. */
export async function runCli(argv: string[], io: CliIo): Promise<void> {
  // Help needs no configuration and touches nothing.
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0] as string)) {
    io.stdout(USAGE);
    return;
  }
  const config = parseConfig(io.env);
  // Restore fills an empty folder: nothing may be written there before it.
  if (argv[0] === 'restore') {
    if (config.database !== null) throw new CliError(NO_BACKUP_ON_POSTGRES);
    return restoreCommand(argv.slice(1), config, io);
  }
  if (argv[0] === 'backup' && config.database !== null) throw new CliError(NO_BACKUP_ON_POSTGRES);
  const notes = { note: (m: string) => io.stderr?.(`note: ${m}`), warn: (m: string) => io.stderr?.(`warning: ${m}`) };
  // The backend the server would use, picked the same way (server.ts, openStorage).
  const storage = config.database === null ? await openFileCli(config, notes) : await openPgCli(config, notes);
  try {
    await command(argv, config, storage, io);
  } finally {
    await storage.close();
  }
}

/** backup and restore copy the data folder; a database has its own tools (README, Running on PostgreSQL). */
const NO_BACKUP_ON_POSTGRES =
  'backup and restore work on the data folder; with DATABASE_URL set, back the database up with pg_dump and restore it with pg_restore';

async function command(argv: string[], config: Config, storage: CliStorage, io: CliIo): Promise<void> {
  // The same rules as the web pages and the admin area: one accounts service owns them.
  const accounts = new Accounts(storage.accounts, Date.now, storage.audit);
  const actor = cliActor();
  const [noun, verb, ...rest] = argv;
  const command = `${noun ?? ''} ${verb ?? ''}`;
  if (noun === 'export') return exportCommand(argv.slice(1), storage, accounts, actor, io);
  if (noun === 'import') return importCommand(argv.slice(1), config.maxPasteBytes, storage, accounts, actor, io);
  if (noun === 'backup') return backupCommand(argv.slice(1), config.dataDir, accounts, actor, io);

  switch (command) {
    case 'user add': {
      const { positional, opts } = parseOptions(rest, { admin: 'bool', 'password-stdin': 'bool' });
      const name = exactlyOne(positional, 'NAME');
      const password = opts.has('password-stdin') ? await readPassword(io) : null;
      const user = await accounts.addUser(name, opts.has('admin') ? 'admin' : 'user', password, actor);
      io.stdout(String(user.id));
      // A password piped in without the flag is not read (CONTRACT §2): say what that leaves, off stdout.
      if (password === null)
        io.stderr?.(
          `note: ${user.name} has no password: they cannot sign in on the web until one is set (--password-stdin, or user passwd ${user.name})`,
        );
      return;
    }
    case 'user passwd': {
      const { positional } = parseOptions(rest, {});
      const name = exactlyOne(positional, 'NAME');
      await accounts.setPassword(name, await readPassword(io), actor);
      return;
    }
    case 'user list': {
      if (rest.length > 0) throw new CliError(`unexpected argument "${rest[0]}"`);
      const owners = storage.owners;
      // One user a line (README, Command line): id, name, role, state, created, last login, tokens, pastes.
      const rows: string[][] = [];
      for (const u of [...accounts.users].sort((a, b) => a.id - b.id)) {
        const tokens = accounts.tokens.filter((t) => t.user_id === u.id).length;
        const pastes = await owners.count(u.id);
        const login = u.last_login_at ?? null;
        rows.push([
          String(u.id),
          u.name,
          u.role,
          u.disabled === true ? 'disabled' : 'enabled',
          formatTime(u.created_at),
          login === null ? 'never' : formatTime(login),
          `${tokens} token${tokens === 1 ? '' : 's'}`,
          `${pastes} paste${pastes === 1 ? '' : 's'}`,
        ]);
      }
      for (const line of table(rows)) io.stdout(line);
      return;
    }
    case 'user disable':
    case 'user enable': {
      const { positional } = parseOptions(rest, {});
      await accounts.setDisabled(exactlyOne(positional, 'NAME'), verb === 'disable', actor);
      return;
    }
    case 'user admin': {
      const { positional, opts } = parseOptions(rest, { remove: 'bool' });
      await accounts.setRole(exactlyOne(positional, 'NAME'), opts.has('remove') ? 'user' : 'admin', actor);
      return;
    }
    case 'token create': {
      const { positional, opts } = parseOptions(rest, {
        user: 'value',
        scopes: 'value',
        rate: 'value',
        label: 'value',
        expires: 'value',
      });
      if (positional.length > 0) throw new CliError(`unexpected argument "${positional[0]}"`);
      const userName = opts.get('user');
      const scopesText = opts.get('scopes');
      if (typeof userName !== 'string') throw new CliError('--user is required');
      if (typeof scopesText !== 'string') throw new CliError('--scopes is required');
      const scopes = parseScopes(scopesText);
      const rate = parseRate(opts.get('rate'));
      const label = opts.get('label');
      if (typeof label === 'string' && label.length > TOKEN_LABEL_MAX)
        throw new CliError(`--label must be at most ${TOKEN_LABEL_MAX} characters`);
      // `token list` prints one token a line, so a label may not break a line.
      if (typeof label === 'string' && /[\u0000-\u001f\u007f]/.test(label))
        throw new CliError('--label must not contain control characters');
      const user = accounts.userByName(userName);
      if (user === undefined) throw new CliError(`no user named "${userName}"`);
      const expiresAt = parseExpires(opts.get('expires'), Date.now());
      const { secret } = await accounts.createToken(
        user.id,
        { label: typeof label === 'string' ? label : '', scopes, rate, expiresAt },
        actor,
      );
      io.stdout(secret);
      return;
    }
    case 'token list': {
      parseOptions(rest, {});
      if (rest.length > 0) throw new CliError(`unexpected argument "${rest[0]}"`);
      const used = await storage.lastUses();
      // One token a line, id first (README, Command line): no header row for scripts to skip.
      const rows: string[][] = [];
      for (const t of accounts.tokens) {
        const lastUsed = used[t.id];
        const expires =
          t.expires_at === undefined || t.expires_at === null
            ? 'never'
            : `${t.expires_at <= Date.now() ? 'expired ' : 'expires '}${formatTime(t.expires_at)}`;
        rows.push([
          t.id,
          accounts.user(t.user_id)?.name ?? '?',
          t.label || '-',
          t.scopes.join(','),
          String(t.rate_limit_per_minute),
          formatTime(t.created_at),
          lastUsed === undefined ? 'never' : formatTime(lastUsed),
          expires,
        ]);
      }
      for (const line of table(rows)) io.stdout(line);
      return;
    }
    case 'token revoke': {
      const { positional } = parseOptions(rest, {});
      const id = exactlyOne(positional, 'ID');
      await accounts.revokeToken(id, undefined, actor);
      return;
    }
    default:
      throw new CliError(`unknown command "${argv.join(' ')}"; --help lists the commands`);
  }
}

/**
 * `export [--user NAME]`: every stored paste (or one user's), oldest first, one JSON line each
 * (README, Export and import).
 */
async function exportCommand(
  args: string[],
  storage: CliStorage,
  accounts: Accounts,
  actor: Actor,
  io: CliIo,
): Promise<void> {
  const { positional, opts } = parseOptions(args, { user: 'value' });
  if (positional.length > 0) throw new CliError(`unexpected argument "${positional[0]}"`);
  const only = opts.get('user');
  const onlyUser = typeof only === 'string' ? accounts.userByName(only) : undefined;
  if (typeof only === 'string' && onlyUser === undefined) throw new CliError(`no user named "${only}"`);
  // First the order (creation time), then each paste read again: only one paste's text is held at a time.
  const order: [number, string][] = [];
  for await (const p of storage.listPastes())
    if (onlyUser === undefined || p.owner_id === onlyUser.id) order.push([p.created_at, p.hash]);
  order.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
  let count = 0;
  for (const [, hash] of order) {
    const p = await storage.pastes.get(hash).catch(() => null);
    if (p === null) continue; // Deleted (or damaged) since the first pass.
    io.stdout(
      exportLine(
        p,
        isAnonymous(p) ? null : (accounts.user(p.owner_id)?.name ?? `user-${p.owner_id}`),
        p.view_count + storage.pendingViews(p),
      ),
    );
    count++;
  }
  await accounts.audit?.record(actor, {
    action: 'export',
    target: onlyUser === undefined ? 'all pastes' : `user:${onlyUser.name}`,
    before: null,
    after: { pastes: count },
  });
}

/**
 * `import < pastes.jsonl`: adds the pastes of an export; a taken hash gets a new one, reported
 * (README, Export and import).
 */
async function importCommand(
  args: string[],
  maxPasteBytes: number,
  storage: CliStorage,
  accounts: Accounts,
  actor: Actor,
  io: CliIo,
): Promise<void> {
  if (args.length > 0) throw new CliError(`unexpected argument "${args[0]}"`);
  const lines = io.stdinLines?.() ?? (await io.readStdin()).split('\n');
  const report = await importPastes(lines, {
    maxPasteBytes,
    store: storage.pastes,
    owners: storage.owners,
    accounts,
    actor,
  });
  for (const name of report.usersAdded)
    io.stdout(`added user ${name} (no password yet: set one with "user passwd ${name}")`);
  for (const [from, to] of report.renamed) io.stdout(`renamed ${from} -> ${to} (the hash was taken here)`);
  for (const [line, why] of report.refused) io.stderr?.(`line ${line} refused: ${why}`);
  io.stdout(
    `imported ${report.imported}, renamed ${report.renamed.length}, already here ${report.unchanged}, refused ${report.refused.length}`,
  );
  await accounts.audit?.record(actor, {
    action: 'import',
    target: 'pastes',
    before: null,
    after: {
      imported: report.imported,
      renamed: report.renamed.length,
      unchanged: report.unchanged,
      refused: report.refused.length,
    },
  });
  if (report.refused.length > 0)
    throw new CliError(
      `${report.refused.length} line${report.refused.length === 1 ? '' : 's'} refused (see above); the others were imported`,
    );
}

/**
 * `backup FILE [--with-logs]`: a consistent snapshot of the data folder, the server running or
 * not (README, Backup and restore).
 */
async function backupCommand(
  args: string[],
  dataDir: string,
  accounts: Accounts,
  actor: Actor,
  io: CliIo,
): Promise<void> {
  const { positional, opts } = parseOptions(args, { 'with-logs': 'bool' });
  const file = resolve(exactlyOne(positional, 'FILE'));
  let done;
  try {
    done = await writeBackup(dataDir, file, { withLogs: opts.has('with-logs') });
  } catch (err) {
    if (err instanceof BackupRefused) throw new CliError(err.message);
    throw err;
  }
  io.stdout(
    `${file}: ${done.manifest.files.length} files (${done.pastes} pastes), ${done.bytes} bytes before compression`,
  );
  await accounts.audit?.record(actor, {
    action: 'backup',
    target: file,
    before: null,
    after: { files: done.manifest.files.length, pastes: done.pastes, with_logs: opts.has('with-logs') },
  });
}

/** `restore FILE [--force]`: into an empty data folder (or, with --force, replacing it), the server stopped. */
async function restoreCommand(args: string[], config: Config, io: CliIo): Promise<void> {
  const { positional, opts } = parseOptions(args, { force: 'bool' });
  const file = resolve(exactlyOne(positional, 'FILE'));
  const { dataDir } = config;
  let done;
  try {
    done = await restoreBackup(file, dataDir, { force: opts.has('force'), maxPasteBytes: config.maxPasteBytes });
  } catch (err) {
    if (err instanceof RestoreError) throw new CliError(err.message);
    throw err;
  }
  io.stdout(
    `restored ${done.files} files (${done.pastes} pastes) from a backup made ${done.manifest.created_at} into ${dataDir}`,
  );
  if (done.keptIn !== null) io.stdout(`what ${dataDir} held before is kept in ${done.keptIn}`);
  if (done.orphans > 0) io.stderr?.(`warning: ${done.orphans} pastes name an owner the backup's accounts.json lacks`);
  await new AuditLog(join(dataDir, 'logs'), Date.now, (m) => io.stderr?.(`warning: ${m}`)).record(cliActor(), {
    action: 'restore',
    target: file,
    before: null,
    after: {
      files: done.files,
      pastes: done.pastes,
      backup_created_at: done.manifest.created_at,
      kept_in: done.keptIn,
    },
  });
}

/** The CLI's actor in the audit log: the operating-system user who ran it. */
function cliActor(): Actor {
  let name: string | null = null;
  try {
    name = userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers): the log says "CLI" only.
  }
  return { via: 'cli', user_id: null, name, ip: null };
}

function exactlyOne(positional: string[], what: string): string {
  if (positional.length !== 1) throw new CliError(`expected exactly one ${what}`);
  return positional[0] as string;
}

export function parseScopes(text: string): Scope[] {
  const scopes = text.split(',').map((s) => s.trim());
  for (const s of scopes) if (!isScope(s)) throw new CliError(`unknown scope "${s}" (use read, write, admin)`);
  return [...new Set(scopes)] as Scope[];
}

export function parseRate(value: string | true | undefined): number {
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value))
    throw new CliError('--rate must be a whole number (0 = unlimited)');
  return Number(value);
}

async function readPassword(io: CliIo): Promise<string> {
  const text = (await io.readStdin()).replace(/\r?\n$/, '');
  const problem = checkPassword(text)[0];
  if (problem !== undefined) throw new CliError(problem);
  return hashPassword(text);
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 };

/** `--expires`: a number and h, d, w or y (`30d`), or `never`; when the token stops working. */
export function parseExpires(value: string | true | undefined, now: number): number | null {
  if (value === undefined || value === 'never') return null;
  const m = typeof value === 'string' ? /^([1-9]\d{0,4})([hdwy])$/.exec(value) : null;
  if (m === null) throw new CliError('--expires must be a number and h, d, w or y (e.g. 30d), or never');
  return now + Number(m[1]) * (UNIT_MS[m[2] as string] as number);
}

function table(rows: string[][]): string[] {
  if (rows.length === 0) return [];
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  return rows.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd(),
  );
}

/**
 * Standard input whole; from a terminal (`docker exec -it`), one line, not echoed, after a
 * prompt on stderr: a password is typed and ended with Enter, not Ctrl-D.
 */
async function readAllStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    // With terminal on, readline puts the terminal in raw mode and echoes to `output`:
    // nowhere. The prompt comes after, so nothing typed meets a terminal still echoing.
    const rl = createInterface({
      input: process.stdin,
      output: new Writable({ write: (_chunk, _enc, done) => done() }),
      terminal: true,
    });
    process.stderr.write('password: ');
    try {
      // Ctrl-C or Ctrl-D instead of Enter: nothing was typed to use.
      return await new Promise<string>((done, fail) => {
        const stop = (): void => fail(new CliError('no password given'));
        rl.once('line', done);
        rl.once('SIGINT', stop);
        rl.once('close', stop);
      });
    } finally {
      rl.close();
      process.stderr.write('\n');
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Standard input split at each newline, as bytes: `import` decodes each line itself, refusing invalid UTF-8. */
export async function* byteLines(input: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let rest: Buffer[] = [];
  for await (const chunk of input) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      rest.push(chunk.subarray(start, nl));
      yield Buffer.concat(rest);
      rest = [];
      start = nl + 1;
    }
    if (start < chunk.length) rest.push(chunk.subarray(start));
  }
  if (rest.length > 0) yield Buffer.concat(rest);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const stdinLines = (): AsyncIterable<Buffer> => byteLines(process.stdin as AsyncIterable<Buffer>);
  runCli(process.argv.slice(2), {
    env: process.env,
    stdout: (l) => console.log(l),
    stderr: (l) => console.error(l),
    readStdin: readAllStdin,
    stdinLines,
  }).catch((err: unknown) => {
    // A bad configuration names every bad variable, on the one line, and exits 2 as the server does (README, Run it).
    const config = err instanceof ConfigError;
    process.stderr.write(
      `error: ${config ? `invalid configuration: ${err.problems.join('; ')}` : describeProblem(err)}\n`,
    );
    process.exit(config ? 2 : 1);
  });
}
