import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Accounts } from './auth/accounts.ts';
import {
  type Args,
  type CliBase,
  type CliContext,
  CliError,
  type CliIo,
  cliActor,
  commandTable,
  findCommand,
  parseArgs,
  usage,
} from './cli/command.ts';
import { TOKEN_COMMANDS } from './cli/tokens.ts';
import { USER_COMMANDS } from './cli/users.ts';
import { ConfigError, parseConfig } from './config.ts';
import { AuditLog } from './log/audit.ts';
import { isAnonymous } from './paste/anonymous.ts';
import { openPgCli } from './pg/open.ts';
import { describeProblem } from './storage/problems.ts';
import { BackupRefused, writeBackup } from './store/backup.ts';
import { openFileCli } from './store/open.ts';
import { RestoreError, restoreBackup } from './store/restore.ts';
import { exportLine, fileLines, importPastes } from './transfer/pastes.ts';
import type { PasteFile } from './paste/files.ts';

// What tests and scripts import from the entry point.
export { CliError, type CliIo, parseOptions } from './cli/command.ts';
export { parseExpires, parseRate, parseScopes } from './cli/tokens.ts';

/** Every command, in --help's order: parsing and the help text both read these entries. */
const COMMANDS = commandTable([
  ...USER_COMMANDS,
  ...TOKEN_COMMANDS,
  { name: 'export', flags: { user: { value: 'NAME' } }, note: '> pastes.jsonl', run: exportPastes },
  { name: 'import', note: '< pastes.jsonl', run: importFrom },
  { name: 'backup', operand: 'FILE', flags: { 'with-logs': {} }, filesOnly: true, run: backup },
  // Restore fills an empty folder: nothing may be written there before it.
  { name: 'restore', operand: 'FILE', flags: { force: {} }, filesOnly: true, opensStorage: false, run: restore },
]);

/** Runs one CLI command against DATA_DIR; the running server sees the change on its next request. */
export async function runCli(argv: string[], io: CliIo): Promise<void> {
  // Help needs no configuration and touches nothing.
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0] as string)) {
    io.stdout(usage(COMMANDS.values()));
    return;
  }
  const config = parseConfig(io.env);
  const { command, rest } = findCommand(COMMANDS, argv);
  if (command.filesOnly === true && config.database !== null) throw new CliError(NO_BACKUP_ON_POSTGRES);
  // A mistyped command line is refused before the data is opened.
  const args = parseArgs(command, rest);
  const base = { config, io, actor: cliActor() };
  if (command.opensStorage === false) return command.run(args, base);
  const notes = { note: (m: string) => io.stderr?.(`note: ${m}`), warn: (m: string) => io.stderr?.(`warning: ${m}`) };
  // The backend the server would use, picked the same way (server.ts, openStorage).
  const storage = config.database === null ? await openFileCli(config, notes) : await openPgCli(config, notes);
  try {
    // The same rules as the web pages and the admin area: one accounts service owns them.
    const accounts = new Accounts(storage.accounts, Date.now, storage.audit);
    await command.run(args, { ...base, storage, accounts });
  } finally {
    await storage.close();
  }
}

/** backup and restore copy the data folder; a database has its own tools (README, Running on PostgreSQL). */
const NO_BACKUP_ON_POSTGRES =
  'backup and restore work on the data folder; with DATABASE_URL set, back the database up with pg_dump and ' +
  'restore it with pg_restore';

/**
 * `export [--user NAME]`: every stored paste (or one user's), oldest first, one JSON line each
 * (README, Export and import).
 */
async function exportPastes(args: Args, { storage, accounts, actor, io }: CliContext): Promise<void> {
  const only = args.value('user');
  const onlyUser = only === undefined ? undefined : accounts.userByName(only);
  if (only !== undefined && onlyUser === undefined) throw new CliError(`no user named "${only}"`);
  // First the order (creation time), then each paste read again: only one paste's text is held at a time.
  const order: [number, string][] = [];
  for await (const p of storage.listPastes())
    if (onlyUser === undefined || p.owner_id === onlyUser.id) order.push([p.created_at, p.hash]);
  order.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
  let count = 0;
  // The files' bytes each go once, before the first paste that names them (docs/files.md).
  const written = new Set<string>();
  for (const [, hash] of order) {
    const p = await storage.pastes.get(hash).catch(() => null);
    if (p === null) continue; // Deleted (or damaged) since the first pass.
    const missing = (f: PasteFile): void =>
      io.stderr?.(
        `paste ${p.hash}: the bytes of its file "${f.name}" (${f.sha256}) are not stored; import will refuse it`,
      );
    for (const line of await fileLines(p, storage.fileBytes, written, missing)) io.stdout(line);
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
async function importFrom(_args: Args, { config, storage, accounts, actor, io }: CliContext): Promise<void> {
  const lines = io.stdinLines?.() ?? (await io.readStdin()).split('\n');
  const report = await importPastes(lines, {
    maxPasteBytes: config.maxPasteBytes,
    store: storage.pastes,
    owners: storage.owners,
    accounts,
    actor,
    files: storage.fileBytes,
    now: Date.now,
  });
  for (const name of report.usersAdded)
    io.stdout(`added user ${name} (no password yet: set one with "user passwd ${name}")`);
  for (const [from, to] of report.renamed) io.stdout(`renamed ${from} -> ${to} (the hash was taken here)`);
  for (const [line, why] of report.refused) io.stderr?.(`line ${line} refused: ${why}`);
  io.stdout(
    `imported ${report.imported}, renamed ${report.renamed.length}, already here ${report.unchanged}, refused ` +
      `${report.refused.length}`,
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
      `${report.refused.length} line${report.refused.length === 1 ? '' : 's'} refused (see above); the others ` +
        'were imported',
    );
}

/**
 * `backup FILE [--with-logs]`: a consistent snapshot of the data folder, the server running or
 * not (README, Backup and restore).
 */
async function backup(args: Args, { config, accounts, actor, io }: CliContext): Promise<void> {
  const file = resolve(args.operand);
  let done;
  try {
    done = await writeBackup(config.dataDir, file, { withLogs: args.has('with-logs') });
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
    after: { files: done.manifest.files.length, pastes: done.pastes, with_logs: args.has('with-logs') },
  });
}

/** `restore FILE [--force]`: into an empty data folder (or, with --force, replacing it), the server stopped. */
async function restore(args: Args, { config, actor, io }: CliBase): Promise<void> {
  const file = resolve(args.operand);
  const { dataDir } = config;
  let done;
  try {
    done = await restoreBackup(file, dataDir, { force: args.has('force'), maxPasteBytes: config.maxPasteBytes });
  } catch (err) {
    if (err instanceof RestoreError) throw new CliError(err.message);
    throw err;
  }
  io.stdout(
    `restored ${done.files} files (${done.pastes} pastes) from a backup made ${done.manifest.created_at} into ` +
      `${dataDir}`,
  );
  if (done.keptIn !== null) io.stdout(`what ${dataDir} held before is kept in ${done.keptIn}`);
  if (done.orphans > 0) io.stderr?.(`warning: ${done.orphans} pastes name an owner the backup's accounts.json lacks`);
  await new AuditLog(join(dataDir, 'logs'), Date.now, (m) => io.stderr?.(`warning: ${m}`)).record(actor, {
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
