import { statfs } from 'node:fs/promises';
import { passwordHashProblem } from '../crypto/passwords.ts';
import { join } from 'node:path';
import { AccountStore } from './accounts.ts';
import { ArchiveError, type Manifest } from './archive.ts';
import { DurableFiles } from './files.ts';
import { readDataFormat } from './format.ts';
import { CorruptPaste } from '../paste/repository.ts';
import { PasteStore } from './pastes.ts';
import { SessionStore } from './sessions.ts';

/**
 * What a restore checks before it replaces anything (README, Backup and restore): each
 * member's place and size as the archive declares it, the members every install has, the
 * room to unpack, and the unpacked folder opened with the loaders the server starts with.
 */

/** Files at the top of a backup, and the folders whose files it holds: anything else is not ours. */
const TOP_FILES = new Set(['format.json', 'accounts.json']);
const TOP_DIRS = new Set(['pastes', 'files', 'sessions', 'state', 'idempotency', 'logs']);

/** What files/ holds (store/file-bytes.ts): bytes named by their SHA-256, claims and releases. */
export const FILE_BYTES_RE = /^files\/([0-9a-f]{2})\/(\1[0-9a-f]{62})$/;
const FILE_MARK_RE =
  /^files\/(?:[0-9a-f]{2}\/[0-9a-f]{64}@[A-Za-z0-9]+|claims\/[A-Za-z0-9]+\/[0-9a-f]{64}|due\/\d+-[A-Za-z0-9]+)$/;

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The largest file this server writes at each place. A paste file holds its text as a JSON
 * string, at worst 6 bytes (`\u0000`) for each byte sent, with its fields beside it.
 * Logs have no bound but the day's traffic: they are streamed and counted against free space.
 */
function capOf(name: string, top: string, maxPasteBytes: number): { bytes: number; what: string } | null {
  if (top === 'pastes')
    return { bytes: 6 * maxPasteBytes + 64 * KiB, what: `a paste file (MAX_PASTE_BYTES=${maxPasteBytes})` };
  if (name === 'format.json') return { bytes: 4 * KiB, what: 'format.json' };
  if (name === 'accounts.json' || top === 'state')
    return { bytes: 256 * MiB, what: `${top === 'state' ? 'a state file' : name}` };
  if (top === 'sessions' || top === 'idempotency') return { bytes: 64 * KiB, what: `a file in ${top}/` };
  // A file's bytes are streamed and counted against free space, as logs are; its claims and releases hold a
  // time and a size, or nothing.
  if (top === 'files' && !FILE_BYTES_RE.test(name)) return { bytes: 64, what: 'a claim or release in files/' };
  return null;
}

/**
 * The check `scanArchive` runs at each member's header: a place this service writes, and no
 * larger than it writes there.
 */
export function memberCheck(maxPasteBytes: number): (name: string, size: number) => void {
  return (name, size) => {
    const slash = name.indexOf('/');
    const top = slash === -1 ? name : name.slice(0, slash);
    if (slash === -1 ? !TOP_FILES.has(name) : !TOP_DIRS.has(top))
      throw new ArchiveError(`${name} is not part of a backup of this service`);
    if (top === 'files' && !FILE_BYTES_RE.test(name) && !FILE_MARK_RE.test(name))
      throw new ArchiveError(`${name} is not part of a backup of this service`);
    const cap = capOf(name, top, maxPasteBytes);
    if (cap !== null && size > cap.bytes)
      throw new ArchiveError(`${name} is ${size} bytes, more than ${cap.what} can be (${cap.bytes} bytes)`);
  };
}

/**
 * Refuses an archive without what every install that has a user holds: `accounts.json`, and
 * `format.json` unless the archive says it holds format 1 (written before that file was).
 * Restoring one would leave no users, and the next person to register would be an admin.
 */
export function requireMembers(manifest: Manifest): void {
  const names = new Set(manifest.files.map((f) => f.path));
  const missing = ['accounts.json', 'format.json'].filter(
    (n) => !names.has(n) && !(n === 'format.json' && manifest['data_format'] === 1),
  );
  if (missing.length > 0)
    throw new ArchiveError(
      `it holds no ${missing.join(' and no ')} (its manifest lists ${manifest.files.length} files): ` +
        'every backup of an install with users has them',
    );
}

/**
 * Bytes the unpacked archive takes at most: each file rounded up to 4 KiB blocks, and 1 MiB
 * for the rebuilt indexes.
 */
export const unpackedBytes = (manifest: Manifest): number =>
  manifest.files.reduce((sum, f) => sum + Math.ceil(f.size / (4 * KiB)) * 4 * KiB + 4 * KiB, MiB);

export type StatFs = (path: string) => Promise<{ bavail: number; bsize: number }>;

/** Refuses to start unpacking into a disk without room for the whole archive (the old data stays beside it). */
export async function checkFreeSpace(dataDir: string, manifest: Manifest, stat: StatFs = statfs): Promise<void> {
  const need = unpackedBytes(manifest);
  const s = await stat(dataDir);
  const free = s.bavail * s.bsize;
  const mib = (n: number): string => `${(n / MiB).toFixed(1)} MiB`;
  if (free < need)
    throw new ArchiveError(
      `it unpacks to about ${mib(need)} and ${dataDir} has ${mib(free)} free: make room, or restore elsewhere`,
    );
}

/**
 * Opens the unpacked folder as the server would at its start: the data format, the
 * accounts (with at least one user), the sessions, and a sample of the pastes through the
 * paste store. Anything that would stop the server, or an install with no users, is refused.
 */
export async function openStaged(
  staging: string,
  pasteHashes: readonly string[],
  damagedPastes: number,
): Promise<void> {
  const files = new DurableFiles(join(staging, 'tmp'));
  await files.init();
  const opened = async (what: () => Promise<unknown>): Promise<void> => {
    try {
      await what();
    } catch (err) {
      if (err instanceof ArchiveError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      // Paths name the staging folder, which is about to go: say the file by its place in the archive.
      throw new ArchiveError(`the restored data would not open: ${message.split(`${staging}/`).join('')}`);
    }
  };
  await opened(() => readDataFormat(staging));
  const accounts = new AccountStore(staging, files);
  await opened(() => accounts.load());
  if (accounts.users.length === 0)
    throw new ArchiveError('its accounts.json lists no users: restoring it would leave an install anyone could claim');
  for (const u of accounts.users) refuseHash('accounts.json', `user "${u.name}"'s password`, u.password ?? null);
  await opened(() => new SessionStore(join(staging, 'sessions'), files, 1, Date.now).load());
  const store = new PasteStore(staging, files, 0);
  await opened(() => store.init());
  // Every current paste was parsed while unpacking; a damaged one is kept for its owner,
  // but an archive of mostly unreadable pastes is not a backup of this service.
  const total = pasteHashes.length + damagedPastes;
  if (total > 0 && damagedPastes * 2 > total)
    throw new ArchiveError(`${damagedPastes} of its ${total} paste files are not pastes this service can read`);
  const step = Math.max(1, Math.floor(pasteHashes.length / 32));
  for (let i = 0; i < pasteHashes.length; i += step) {
    const hash = pasteHashes[i] as string;
    await opened(async () => {
      try {
        if ((await store.get(hash)) === null)
          throw new Error(`paste ${hash} is not where the paste store looks for it`);
      } catch (err) {
        if (!(err instanceof CorruptPaste)) throw err;
      }
    });
  }
}

/**
 * A stored password hash every check would refuse (crypto/passwords.ts) refuses the archive,
 * as `import` refuses the line: checking against it could hold a thread for minutes.
 */
export function refuseHash(name: string, what: string, hash: string | null): void {
  const problem = hash === null ? null : passwordHashProblem(hash);
  if (problem !== null) throw new ArchiveError(`${name}: ${what} is refused (${problem.message})`);
}
