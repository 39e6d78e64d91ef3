import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { open, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from '../storage/errors.ts';
import { processAlive, startedAfter } from './process-alive.ts';

/** A claim from another host not refreshed for this long is a crashed server's (it is refreshed every 5 s). */
const STALE_MS = 30_000;

/** `DATA_DIR/server.pid`: `<pid> <host>` of the server using the folder (`<pid> <host> restore` for a restore). */
export const claimFile = (dataDir: string): string => join(dataDir, 'server.pid');

/** Another server is using the data folder (README, Data on disk and durability). */
export class FolderInUse extends Error {
  constructor(
    readonly path: string,
    readonly pid: number,
    readonly host: string,
    readonly what: Holder = 'server',
  ) {
    super(
      `${path}: the ${what} with pid ${pid} on ${host} is using this data folder; stop it first (two servers on ` +
        "one folder would undo each other's writes)",
    );
  }
}

/** What holds a data folder: a server, or a restore replacing what it holds. */
export type Holder = 'server' | 'restore';

/**
 * The server using `dataDir` now, if another than this process. On this host the claim
 * holds while its pid is alive and not a zombie, however long since it was refreshed (a
 * server busy or paused still uses the folder), unless that pid now belongs to a process
 * started after the claim was last refreshed. From another host (a shared volume), where
 * the pid cannot be asked, a claim not refreshed within STALE_MS is stale.
 */
export async function folderHolder(dataDir: string): Promise<{ pid: number; host: string; what: Holder } | null> {
  const path = claimFile(dataDir);
  let text: string;
  let mtimeMs: number;
  try {
    [text, { mtimeMs }] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
  const [pidText, host = '', said] = text.trim().split(' ');
  const what: Holder = said === 'restore' ? 'restore' : 'server';
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const old = Date.now() - mtimeMs > STALE_MS;
  if (host !== hostname()) return old ? null : { pid, host, what };
  if (pid === process.pid || !processAlive(pid)) return null;
  if (old && startedAfter(pid, mtimeMs)) return null;
  return { pid, host, what };
}

/** What keeping a claim found: it was ours, it had gone (and was written again), or another holds the folder now. */
export type ClaimState = 'kept' | 'rewritten' | 'taken';

/** This server's claim on its data folder, refreshed on its own timer and given up at shutdown. */
export interface FolderClaim {
  /**
   * Touches the claim, or writes it again when it has gone. Synchronous on purpose: one
   * tiny call that never waits behind the disk work queued on libuv's threads (a long
   * sweep's fsyncs), so no slow task can let the claim go stale.
   */
  refresh(): ClaimState;
  release(): Promise<void>;
}

/** Claims `dataDir` for this process, or throws FolderInUse when a live server (or restore) holds it. */
export async function claimFolder(dataDir: string, as: Holder = 'server'): Promise<FolderClaim> {
  const path = claimFile(dataDir);
  const mine = `${process.pid} ${hostname()}${as === 'restore' ? ' restore' : ''}\n`;
  try {
    const fh = await open(path, 'wx', 0o600);
    await fh.writeFile(mine);
    await fh.close();
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
    const other = await folderHolder(dataDir);
    if (other !== null) throw new FolderInUse(path, other.pid, other.host, other.what);
    await writeFile(path, mine, { mode: 0o600 });
  }
  return {
    refresh: () => {
      let now: string;
      try {
        now = readFileSync(path, 'utf8');
      } catch (err) {
        if (!isErrno(err, 'ENOENT')) return 'kept';
        try {
          writeFileSync(path, mine, { flag: 'wx', mode: 0o600 });
          return 'rewritten';
        } catch (e) {
          // EEXIST: another process claimed it just now; anything else is tried again next time.
          return isErrno(e, 'EEXIST') ? 'taken' : 'kept';
        }
      }
      if (now !== mine) return 'taken';
      const t = new Date();
      try {
        utimesSync(path, t, t);
      } catch {
        // Gone between the read and the touch, or a passing fault: the next refresh writes it again.
      }
      return 'kept';
    },
    release: async () => {
      const now = await readFile(path, 'utf8').catch(() => '');
      if (now === mine) await unlink(path).catch(() => undefined);
    },
  };
}
