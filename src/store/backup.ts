import { type FileHandle, open, readdir, readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { ArchiveWriter, type Manifest } from './archive.ts';
import { isErrno } from '../storage/errors.ts';
import { listDir, openIfThere } from '../storage/fs.ts';
import { DamagedRecord, parseFile } from './paste-record.ts';

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

/** A current paste file's name (not a kept revision's), with its shortcode. */
export const CURRENT_RE = /^([A-Za-z0-9]{6})\.json$/;

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
 * Refuses an archive written into the data folder but for `backups/` (where the format
 * migration and `restore --force` keep theirs, and which no backup reads): elsewhere it
 * could be read into itself as its own `.part`, or replace a file of the data.
 */
async function refuseInside(dataDir: string, file: string): Promise<void> {
  // A folder that does not exist holds nothing: ArchiveWriter.create names it.
  const folder = await realpath(dirname(resolve(file))).catch(() => null);
  if (folder === null) return;
  const data = await realpath(dataDir).catch(() => resolve(dataDir));
  const where = join(folder, basename(file));
  const inside = (dir: string): boolean => where.startsWith(`${dir}${sep}`);
  if (inside(data) && !inside(join(data, 'backups')))
    throw new BackupRefused(
      `${file} is inside DATA_DIR (${dataDir}), where a backup could archive itself or replace the data: ` +
        `write it elsewhere, or into ${join(dataDir, 'backups')}`,
    );
}

/** A backup that was not started; nothing was written. */
export class BackupRefused extends Error {}

/**
 * Adds a log cut after its last whole line, streamed from the file: a log can be far larger
 * than memory. Logs are only appended to, so the bytes up to that line stay as they are
 * while they are read. Answers the bytes added (0 for a log gone since the listing).
 */
async function addLog(archive: ArchiveWriter, name: string, path: string, at: number): Promise<number> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'EISDIR')) return 0;
    throw err;
  }
  try {
    const size = await wholeLines(fh);
    const source = size === 0 ? [] : fh.createReadStream({ start: 0, end: size - 1, autoClose: false });
    await archive.addStream(name, size, source, at);
    return size;
  } finally {
    await fh.close();
  }
}

/**
 * Adds a file of `files/` (bytes, a claim or a release), streamed: bytes are never changed
 * once written, only removed. Answers the bytes added (0 for a file gone since the listing).
 */
async function addFile(
  archive: ArchiveWriter,
  name: string,
  dataDir: string,
  at: number,
  done: Set<string>,
): Promise<number> {
  if (done.has(name)) return 0;
  const fh = await openIfThere(join(dataDir, name));
  if (fh === null) return 0;
  try {
    const { size } = await fh.stat();
    const source = size === 0 ? [] : fh.createReadStream({ start: 0, end: size - 1, autoClose: false });
    await archive.addStream(name, size, source, at);
    done.add(name);
    return size;
  } finally {
    await fh.close();
  }
}

/**
 * Adds the SHA-256 of each file a stored paste (or kept revision) names to `named`, and
 * answers its revision; a damaged file names none, and is kept as it is for its owner to
 * see and delete after a restore.
 */
function readNamed(data: Buffer, named: Set<string>): number {
  try {
    const p = parseFile(data.toString('utf8'));
    for (const f of p.files ?? []) named.add(f.sha256);
    return p.revision ?? 1;
  } catch (err) {
    if (!(err instanceof DamagedRecord)) throw err;
    return 1;
  }
}

/** The length of a file up to and including its last newline, found reading back from its end. */
async function wholeLines(fh: FileHandle): Promise<number> {
  const { size } = await fh.stat();
  const buf = Buffer.alloc(64 * 1024);
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - buf.length);
    const { bytesRead } = await fh.read(buf, 0, end - start, start);
    const nl = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (nl !== -1) return start + nl + 1;
    end = start;
  }
  return 0;
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
  await refuseInside(dataDir, file);
  const archive = await ArchiveWriter.create(file);
  let pastes = 0;
  let bytes = 0;
  // Every member is stamped with the time of the snapshot.
  const at = Date.now();
  const add = async (name: string, data: Buffer): Promise<void> => {
    await archive.add(name, data, at);
    bytes += data.length;
  };
  // The members of files/ already in the archive.
  const done = new Set<string>();
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
        const named = new Set<string>();
        const revision = readNamed(data, named);
        for (let r = 1; r < revision; r++) {
          const kept = await readIfThere(join(root, shard, `${code}.r${r}.json`));
          if (kept === null) continue;
          await add(`pastes/${shard}/${code}.r${r}.json`, kept);
          readNamed(kept, named);
        }
        // The bytes a paste names right after it: a delete and a sweep during the backup cannot take them first.
        for (const sha of named) bytes += await addFile(archive, `files/${sha.slice(0, 2)}/${sha}`, dataDir, at, done);
      }
    }
    // Then the rest of files/: the claims and releases (so the sweep goes on after a restore), and bytes no
    // paste above named.
    for (const rel of await walk(join(dataDir, 'files'))) {
      const name = `files/${rel.split('\\').join('/')}`;
      if (!done.has(name)) bytes += await addFile(archive, name, dataDir, at, done);
    }
    const dirs = opts.withLogs ? [...PLAIN_DIRS, 'logs'] : PLAIN_DIRS;
    for (const dir of dirs) {
      for (const rel of await walk(join(dataDir, dir))) {
        const name = `${dir}/${rel.split('\\').join('/')}`;
        if (dir === 'logs') {
          bytes += await addLog(archive, name, join(dataDir, dir, rel), at);
          continue;
        }
        const data = await readIfThere(join(dataDir, dir, rel));
        if (data !== null) await add(name, data);
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
