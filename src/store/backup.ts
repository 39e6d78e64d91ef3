import { open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { ArchiveError, ArchiveWriter, readArchive, type Manifest } from './archive.ts';
import { fsyncDir, isErrno, listDir, mkdirp, readText } from './files.ts';
import { DATA_FORMAT } from './format.ts';
import { ownerIndexFile, ownerIndexText } from './owner-index.ts';
import { DamagedRecord, parseFile } from './paste-record.ts';
import { claimFolder, FolderInUse, type FolderClaim } from './instance.ts';
import { expiryEntryPath, sweepTimeOf } from './pastes.ts';

/**
 * Backups (README, Backup and restore): one archive, a gzip'd tar any `tar` can list, of
 * what the service cannot rebuild. Left out: `tmp/`, lock files, and the two indexes that
 * are rebuilt from the pastes on restore (`owners/`, `expiry/`), so they always agree with
 * the pastes the archive holds; the logs only when asked.
 */
export interface BackupSummary {
  manifest: Manifest;
  pastes: number;
  bytes: number;
}

/** Folders copied file by file, after the pastes and before accounts.json. */
const PLAIN_DIRS = ['sessions', 'state', 'idempotency'];

/** What a restore accepts at the top of an archive: anything else is not ours. */
const TOP_LEVEL = new Set(['format.json', 'accounts.json', 'pastes', 'logs', ...PLAIN_DIRS]);

const CURRENT_RE = /^([A-Za-z0-9]{6})\.json$/;

/** A file's bytes, or null when it went away between the listing and the read. */
async function readIfThere(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'EISDIR')) return null;
    throw err;
  }
}

/** Every file under `dir`, as paths relative to it, sorted. */
async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return out;
    throw err;
  }
  for (const e of entries) if (e.isFile()) out.push(relative(dir, join(e.parentPath ?? e.path, e.name)));
  return out.sort();
}

/**
 * Writes a consistent snapshot of a data folder, which a server may be using meanwhile.
 * Every file the service writes is replaced whole by a rename, so each file read is one
 * complete version of it. The order makes the parts agree:
 * - the pastes first, each current file and then the kept revisions it names, read by
 *   name (a kept revision never changes once written; one deleted meanwhile is left out);
 * - accounts.json last: users are never removed, so every owner of a paste in the archive
 *   is in it, and so is every token made before the backup began.
 * A write acknowledged before the backup began is in it; one made during it is in whole or
 * not at all. Logs (`withLogs`) are append-only: each is cut after its last whole line.
 */
export async function writeBackup(dataDir: string, file: string, opts: { withLogs: boolean }): Promise<BackupSummary> {
  const archive = await ArchiveWriter.create(file);
  let pastes = 0;
  let bytes = 0;
  // Every member is stamped with the time of the snapshot.
  const at = Date.now();
  const add = async (name: string, data: Buffer): Promise<void> => {
    await archive.add(name, data, at);
    bytes += data.length;
  };
  try {
    const format = await readIfThere(join(dataDir, 'format.json'));
    if (format !== null) await add('format.json', format);
    // The format the data is in (a backup before a migration holds the older one); no file: format 1.
    const dataFormat =
      format === null ? 1 : Number((JSON.parse(format.toString('utf8')) as { format?: unknown }).format);
    const root = join(dataDir, 'pastes');
    for (const shard of (await listDir(root)).sort()) {
      for (const name of (await listDir(join(root, shard))).sort()) {
        const code = CURRENT_RE.exec(name)?.[1];
        if (code === undefined) continue;
        const path = join(root, shard, name);
        const data = await readIfThere(path);
        if (data === null) continue; // Deleted since the listing: out.
        await add(`pastes/${shard}/${name}`, data);
        pastes++;
        let revision = 1;
        try {
          revision = parseFile(data.toString('utf8')).revision ?? 1;
        } catch (err) {
          // A damaged file is kept as it is, for its owner to see and delete after a restore.
          if (!(err instanceof DamagedRecord)) throw err;
        }
        for (let r = 1; r < revision; r++) {
          const kept = await readIfThere(join(root, shard, `${code}.r${r}.json`));
          if (kept !== null) await add(`pastes/${shard}/${code}.r${r}.json`, kept);
        }
      }
    }
    const dirs = opts.withLogs ? [...PLAIN_DIRS, 'logs'] : PLAIN_DIRS;
    for (const dir of dirs) {
      for (const rel of await walk(join(dataDir, dir))) {
        let data = await readIfThere(join(dataDir, dir, rel));
        if (data === null) continue;
        if (dir === 'logs') data = data.subarray(0, data.lastIndexOf(0x0a) + 1);
        await add(`${dir}/${rel.split('\\').join('/')}`, data);
      }
    }
    const accounts = await readIfThere(join(dataDir, 'accounts.json'));
    if (accounts !== null) await add('accounts.json', accounts);
    const manifest = await archive.finish({
      data_format: dataFormat,
      pastes,
      with_logs: opts.withLogs,
      created_by: 'cli backup',
    });
    return { manifest, pastes, bytes };
  } catch (err) {
    await archive.abort();
    throw err;
  }
}

/** A restore that cannot go ahead; the data folder was not changed. */
export class RestoreError extends Error {}

export interface RestoreSummary {
  manifest: Manifest;
  files: number;
  pastes: number;
  /** Pastes whose owner the archive's accounts.json does not know (should be none). */
  orphans: number;
}

/** Writes one file durably (the restore's staging folder is fsynced as a whole at the end). */
async function writeDurably(path: string, data: Buffer | string): Promise<void> {
  await mkdirp(dirname(path));
  const fh = await open(path, 'wx', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Every folder under `dir` (itself included), deepest first: the order to fsync them in. */
async function foldersOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => join(e.parentPath ?? e.path, e.name));
  return [...dirs.sort((a, b) => b.length - a.length), dir];
}

/**
 * Restores an archive into `dataDir`, which must be empty (or missing) unless `force`.
 * Everything is unpacked into a staging folder inside `dataDir` first and checked against
 * the manifest (sizes and SHA-256); only a whole, matching archive replaces anything. Then
 * the owner and expiry indexes are rebuilt from the restored pastes.
 */
export async function restoreBackup(file: string, dataDir: string, opts: { force: boolean }): Promise<RestoreSummary> {
  await stat(file).catch((err: unknown) => {
    throw isErrno(err, 'ENOENT') ? new RestoreError(`${file} does not exist`) : err;
  });
  await mkdirp(dataDir);
  // Held for the whole restore: no server starts, and no CLI command finishes or drops the
  // staging, while the archive is being checked and swapped in.
  let claim: FolderClaim;
  try {
    claim = await claimFolder(dataDir, 'restore');
  } catch (err) {
    if (err instanceof FolderInUse)
      throw new RestoreError(
        `the ${err.what} with pid ${err.pid} on ${err.host} is using ${dataDir}; stop it before restoring (nothing was changed)`,
      );
    throw err;
  }
  const refresh = setInterval(() => claim.refresh(), 5_000);
  refresh.unref();
  try {
    return await restoreHeld(file, dataDir, opts);
  } finally {
    clearInterval(refresh);
    await claim.release();
  }
}

async function restoreHeld(file: string, dataDir: string, opts: { force: boolean }): Promise<RestoreSummary> {
  // A restore cut short before is finished (or, its archive never checked out, forgotten) first.
  await finishRestore(dataDir);
  const staging = join(dataDir, STAGING);
  const present = (await listDir(dataDir)).filter((n) => !STAYS.has(n));
  if (present.length > 0 && !opts.force) {
    throw new RestoreError(
      `${dataDir} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}); restore into an empty folder, or add --force to replace what is there`,
    );
  }
  await rm(staging, { recursive: true, force: true });
  await mkdirp(staging);
  let files = 0;
  // What the indexes need of each paste, not the paste: a large backup's texts are never held.
  const pastes: IndexFacts[] = [];
  let manifest: Manifest;
  try {
    manifest = await readArchive(file, async (name, data) => {
      const top = name.split('/')[0] ?? '';
      if (!TOP_LEVEL.has(top) || (top.endsWith('.json') && name !== top))
        throw new ArchiveError(`${name} is not part of a backup of this service`);
      await writeDurably(join(staging, name), data);
      files++;
      if (top === 'pastes' && CURRENT_RE.test(name.split('/').at(-1) ?? '')) {
        try {
          const p = parseFile(data.toString('utf8'));
          pastes.push({ hash: p.hash, owner_id: p.owner_id, created_at: p.created_at, sweepAt: sweepTimeOf(p) });
        } catch (err) {
          if (!(err instanceof DamagedRecord)) throw err;
        }
      }
    });
    const format = manifest['data_format'];
    if (typeof format === 'number' && format > DATA_FORMAT) {
      throw new ArchiveError(
        `the archive holds data format ${format}; this version reads format ${DATA_FORMAT} and older. Restore it with a newer version`,
      );
    }
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    if (err instanceof ArchiveError) throw new RestoreError(`${file}: ${err.message}; nothing was changed`);
    throw err;
  }
  const orphans = await rebuildIndexes(staging, pastes);
  await mkdirp(join(staging, 'tmp'));
  for (const dir of await foldersOf(staging)) await fsyncDir(dir);
  // The archive checked out whole: only now does anything already there go, but for the
  // folder's logs when the archive brings none: the audit log is the record of what admins
  // did, and a restore is one more thing done, not a reason to forget the rest.
  const names = await listDir(staging);
  const ready: Ready = { names, keepLogs: !names.includes('logs') };
  await writeDurably(join(staging, READY), JSON.stringify(ready));
  await fsyncDir(staging);
  await finishRestore(dataDir);
  return { manifest, files, pastes: pastes.length, orphans };
}

/** The staging folder of a restore, what is moved aside from the data folder, and the mark of an archive that checked out. */
const STAGING = '.restore';
const ASIDE = '.restore-old';
const READY = '.ready';
/** Never moved aside: the claim of the server or CLI doing the work, and the accounts lock. */
const STAYS = new Set([STAGING, ASIDE, 'server.pid', 'accounts.lock']);

/** What a restore whose archive checked out swaps in: the staged names, and whether the folder keeps its logs. */
interface Ready {
  names: string[];
  keepLogs: boolean;
}

/**
 * Swaps a checked-out restore in, or finishes one a crash cut short (README, Backup and
 * restore): the server and `restore` call it first. Staging marked ready (`.restore/.ready`,
 * written durably once the archive checked out) is rolled forward: what the folder held is
 * moved aside to `.restore-old/`, then the staged entries are moved in, then both folders
 * go. Each step can be done again, so a crash at any point leaves either the old data (the
 * mark not yet written) or a swap the next call completes: never a folder with neither.
 * Staging without the mark (an archive being checked) is removed; the old data is whole.
 * Answers whether it swapped a restore in.
 */
export async function finishRestore(dataDir: string): Promise<boolean> {
  const staging = join(dataDir, STAGING);
  const aside = join(dataDir, ASIDE);
  const mark = await readFile(join(staging, READY), 'utf8').catch((err: unknown) => {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  });
  if (mark === null) {
    await rm(staging, { recursive: true, force: true });
    await rm(aside, { recursive: true, force: true });
    return false;
  }
  const ready = JSON.parse(mark) as Ready;
  const incoming = new Set(ready.names);
  const staged = new Set((await listDir(staging)).filter((n) => n !== READY));
  await mkdirp(aside);
  for (const name of await listDir(dataDir)) {
    if (STAYS.has(name) || (ready.keepLogs && name === 'logs')) continue;
    // Already moved in by the call a crash cut short.
    if (incoming.has(name) && !staged.has(name)) continue;
    await rm(join(aside, name), { recursive: true, force: true });
    await rename(join(dataDir, name), join(aside, name));
  }
  await fsyncDir(aside);
  await fsyncDir(dataDir);
  for (const name of staged) await rename(join(staging, name), join(dataDir, name));
  await fsyncDir(dataDir);
  await rm(aside, { recursive: true, force: true });
  await rm(staging, { recursive: true, force: true });
  await fsyncDir(dataDir);
  return true;
}

/** A restored paste as the owner and expiry indexes list it. */
interface IndexFacts {
  hash: string;
  owner_id: number;
  created_at: number;
  sweepAt: number | null;
}

/** Writes `owners/` and `expiry/` for these pastes; returns how many name an owner the accounts lack. */
async function rebuildIndexes(dir: string, pastes: IndexFacts[]): Promise<number> {
  const byOwner = new Map<number, IndexFacts[]>();
  for (const p of pastes) {
    const list = byOwner.get(p.owner_id);
    if (list === undefined) byOwner.set(p.owner_id, [p]);
    else list.push(p);
  }
  for (const [owner, list] of byOwner) {
    list.sort((a, b) => a.created_at - b.created_at);
    await writeDurably(ownerIndexFile(join(dir, 'owners'), owner), ownerIndexText(list.map((p) => p.hash)));
  }
  await mkdirp(join(dir, 'owners'));
  await mkdirp(join(dir, 'expiry'));
  for (const p of pastes)
    if (p.sweepAt !== null) await writeDurably(expiryEntryPath(join(dir, 'expiry'), p.sweepAt, p.hash), '');
  const accounts = await readText(join(dir, 'accounts.json')).catch(() => '{"users":[]}');
  let known = new Set<number>();
  try {
    known = new Set((JSON.parse(accounts) as { users: { id: number }[] }).users.map((u) => u.id));
  } catch {
    // The server will say the file is damaged when it starts.
  }
  return pastes.filter((p) => !known.has(p.owner_id)).length;
}
