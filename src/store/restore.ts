import { createHash } from 'node:crypto';
import { appendFile, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ArchiveError, extractArchive, type Manifest, type MemberSink, scanArchive } from './archive.ts';
import { CURRENT_RE } from './backup.ts';
import { fsyncDir, listDir, mkdirp, readText } from '../storage/fs.ts';
import { isErrno } from '../storage/errors.ts';
import { DATA_FORMAT } from './format.ts';
import { claimFolder, FolderInUse, type FolderClaim } from './instance.ts';
import { ownerIndexFile, ownerIndexText } from './owner-index.ts';
import { DamagedRecord, parseFile } from './paste-record.ts';
import { expiryEntryPath, sweepTimeOf } from './pastes.ts';
import {
  checkFreeSpace,
  FILE_BYTES_RE,
  memberCheck,
  openStaged,
  refuseHash,
  requireMembers,
  type StatFs,
} from './restore-check.ts';
import { BACKUPS, finishRestore, READY, type Ready, STAGING, STAYS } from './restore-swap.ts';

/** A restore that cannot go ahead; the data folder was not changed. */
export class RestoreError extends Error {}

export interface RestoreSummary {
  manifest: Manifest;
  files: number;
  pastes: number;
  /** Pastes whose owner the archive's accounts.json does not know (should be none). */
  orphans: number;
  /** The folder what the data folder held was moved to (`--force`), or null when it held nothing. */
  keptIn: string | null;
}

export interface RestoreOptions {
  force: boolean;
  /** The server's MAX_PASTE_BYTES: no paste file in the archive may be larger than it could write. */
  maxPasteBytes: number;
  /** How free space is asked for (tests give a full disk). */
  statfs?: StatFs;
}

/** Writes one small file durably (the restore's staging folder is fsynced as a whole at the end). */
async function writeDurably(path: string, data: Buffer | string): Promise<void> {
  const sink = await createDurably(path);
  await sink.write(Buffer.from(data));
  await sink.end();
}

/** A new file in staging, written a chunk at a time and fsynced at its end. */
async function createDurably(path: string): Promise<MemberSink> {
  await mkdirp(dirname(path));
  const fh = await open(path, 'wx', 0o600);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await fh.close();
  };
  return {
    write: async (chunk) => {
      try {
        await fh.write(chunk);
      } catch (err) {
        await close();
        throw err;
      }
    },
    end: async () => {
      try {
        await fh.sync();
      } finally {
        await close();
      }
    },
  };
}

/** Every folder under `dir` (itself included), deepest first: the order to fsync them in. */
async function foldersOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => join(e.parentPath ?? e.path, e.name));
  return [...dirs.sort((a, b) => b.length - a.length), dir];
}

/**
 * Restores an archive into `dataDir`, which must be empty (or missing) unless `force`.
 * The archive is read twice: first to check its manifest against every member's name and
 * size (and each size against what this server writes there) and the free space, writing
 * nothing; then each member is streamed into a staging folder inside `dataDir`, its SHA-256
 * checked on the way. The staged folder must open as the server opens one; only then does
 * it replace anything, and with `force` what it replaces is kept in `backups/`.
 */
export async function restoreBackup(file: string, dataDir: string, opts: RestoreOptions): Promise<RestoreSummary> {
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
        `the ${err.what} with pid ${err.pid} on ${err.host} is using ${dataDir}; ` +
          'stop it before restoring (nothing was changed)',
      );
    throw err;
  }
  const refresh = setInterval(() => void claim.refresh(), 5_000);
  refresh.unref();
  try {
    return await restoreHeld(file, dataDir, opts);
  } finally {
    clearInterval(refresh);
    await claim.release();
  }
}

async function restoreHeld(file: string, dataDir: string, opts: RestoreOptions): Promise<RestoreSummary> {
  // A restore cut short before is finished (or, its archive never checked out, forgotten) first.
  await finishRestore(dataDir);
  const staging = join(dataDir, STAGING);
  const present = (await listDir(dataDir)).filter((n) => !STAYS.has(n));
  if (present.length > 0 && !opts.force) {
    throw new RestoreError(
      `${dataDir} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}); ` +
        'restore into an empty folder, or add --force to replace what is there',
    );
  }
  await rm(staging, { recursive: true, force: true });
  let files = 0;
  // What the indexes need of each paste, not the paste: a large backup's texts are never held.
  const pastes: IndexFacts[] = [];
  let damaged = 0;
  // The bytes the current pastes name, each looked for once the archive is unpacked.
  const named = new Set<string>();
  let manifest: Manifest;
  try {
    const scanned = await scanArchive(file, memberCheck(opts.maxPasteBytes));
    manifest = scanned.manifest;
    const format = manifest['data_format'];
    if (typeof format === 'number' && format > DATA_FORMAT) {
      throw new ArchiveError(
        `the archive holds data format ${format}; this version reads format ${DATA_FORMAT} and older. ` +
          'Restore it with a newer version',
      );
    }
    requireMembers(manifest);
    await checkFreeSpace(dataDir, manifest, opts.statfs);
    await mkdirp(staging);
    await extractArchive(file, scanned, async (name) => {
      const path = join(staging, name);
      const out = await createDurably(path);
      files++;
      const sha = FILE_BYTES_RE.exec(name)?.[2];
      if (sha !== undefined) return checkedBytes(name, sha, out);
      if (!name.startsWith('pastes/') || !CURRENT_RE.test(name.split('/').at(-1) ?? '')) return out;
      return {
        write: (chunk) => out.write(chunk),
        end: async () => {
          await out.end();
          // Read back from the disk: a paste file is bounded by MAX_PASTE_BYTES (memberCheck).
          try {
            const p = parseFile(await readFile(path, 'utf8'));
            refuseHash(name, 'its password', p.password);
            for (const f of p.files ?? []) named.add(f.sha256);
            pastes.push({ hash: p.hash, owner_id: p.owner_id, created_at: p.created_at, sweepAt: sweepTimeOf(p) });
          } catch (err) {
            if (!(err instanceof DamagedRecord)) throw err;
            damaged++;
          }
        },
      };
    });
    await mkdirp(join(staging, 'tmp'));
    const missing = await missingBytes(staging, named);
    if (missing.length > 0)
      throw new ArchiveError(
        `it lacks the bytes of ${missing.length} file${missing.length === 1 ? '' : 's'} its pastes name ` +
          `(${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''})`,
      );
    await openStaged(
      staging,
      pastes.map((p) => p.hash),
      damaged,
    );
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    if (err instanceof ArchiveError) throw new RestoreError(`${file}: ${err.message}; nothing was changed`);
    throw err;
  }
  const orphans = await rebuildIndexes(staging, pastes);
  const names = await listDir(staging);
  // The folder's logs stay when the archive brings none; when it does, the audit lines the
  // folder holds are added to the restored ones: the record of what admins did outlives a restore.
  const keepLogs = !names.includes('logs');
  if (!keepLogs) await keepAuditLines(join(dataDir, 'logs'), join(staging, 'logs'));
  for (const dir of await foldersOf(staging)) await fsyncDir(dir);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const keepAs = present.length > 0 ? join(BACKUPS, `before-restore-${stamp}`) : null;
  const ready: Ready = { names, keepLogs, keepAs };
  await writeDurably(join(staging, READY), JSON.stringify(ready));
  await fsyncDir(staging);
  await finishRestore(dataDir);
  return { manifest, files, pastes: pastes.length, orphans, keptIn: keepAs === null ? null : join(dataDir, keepAs) };
}

/**
 * A file's bytes written to staging while their SHA-256 is computed: bytes that are not the
 * ones their name says refuse the archive, as a member the manifest does not match does.
 */
function checkedBytes(name: string, sha256: string, out: MemberSink): MemberSink {
  const hash = createHash('sha256');
  return {
    write: (chunk) => {
      hash.update(chunk);
      return out.write(chunk);
    },
    end: async () => {
      await out.end();
      if (hash.digest('hex') !== sha256) throw new ArchiveError(`${name} does not hold the bytes its SHA-256 names`);
    },
  };
}

/** The hashes in `named` with no bytes under `staging/files/`. */
async function missingBytes(staging: string, named: Set<string>): Promise<string[]> {
  const missing: string[] = [];
  for (const sha of [...named].sort())
    if ((await stat(join(staging, 'files', sha.slice(0, 2), sha)).catch(() => null)) === null) missing.push(sha);
  return missing;
}

/** The audit log's daily files (log/audit.ts names them; the store may not import it). */
const AUDIT_RE = /^audit-\d{4}-\d{2}-\d{2}\.jsonl$/;

/**
 * Adds to each restored audit file the lines the folder's own file of that day holds and
 * it lacks: after the restored lines, behind one marking line (an audit entry of its own,
 * so the log's readers show it). When the restored file is the start of the folder's (the
 * archive was made from this log), only the lines written since are added.
 */
async function keepAuditLines(ownLogs: string, stagedLogs: string): Promise<void> {
  for (const name of (await listDir(ownLogs)).filter((n) => AUDIT_RE.test(n)).sort()) {
    let own = await readText(join(ownLogs, name));
    own = own.slice(0, own.lastIndexOf('\n') + 1);
    const restored = await readText(join(stagedLogs, name)).catch((err: unknown) => {
      if (isErrno(err, 'ENOENT')) return '';
      throw err;
    });
    const whole = restored.slice(0, restored.lastIndexOf('\n') + 1);
    const added = own.startsWith(whole) ? own.slice(whole.length) : own;
    if (added === '') continue;
    const mark = {
      time: new Date().toISOString(),
      via: 'cli',
      user_id: null,
      user: null,
      ip: null,
      action: 'restore.kept_lines',
      target: name,
      before: null,
      after: {
        lines: added.split('\n').length - 1,
        note: 'the lines after this one were in the log before the restore',
      },
    };
    // A restored file cut mid-line is ended first, so the mark starts a line of its own.
    const gap = restored.length > whole.length ? '\n' : '';
    await mkdirp(stagedLogs);
    await appendFile(join(stagedLogs, name), `${gap}${JSON.stringify(mark)}\n${added}`, { mode: 0o600 });
  }
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
