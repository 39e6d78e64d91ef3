import { hostname } from 'node:os';
import { open, readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from './files.ts';

/** A claim not refreshed for this long is a crashed server's (the upkeep refreshes it every 5 s). */
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
      `${path}: the ${what} with pid ${pid} on ${host} is using this data folder; stop it first (two servers on one folder would undo each other's writes)`,
    );
  }
}

/** What holds a data folder: a server, or a restore replacing what it holds. */
export type Holder = 'server' | 'restore';

/**
 * The server using `dataDir` now, if another than this process: its claim was refreshed
 * within STALE_MS and, on this host, its pid is alive. A crashed server's claim is stale at
 * once on this host (no such pid), and after STALE_MS on another one (a shared volume).
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
  if (!Number.isInteger(pid) || pid <= 0 || Date.now() - mtimeMs > STALE_MS) return null;
  if (host !== hostname()) return { pid, host, what };
  if (pid === process.pid) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: a process of another user has that pid; it is alive, so the claim may be.
    if (isErrno(err, 'ESRCH')) return null;
  }
  return { pid, host, what };
}

/** This server's claim on its data folder, refreshed by the upkeep and given up at shutdown. */
export interface FolderClaim {
  refresh(): Promise<void>;
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
    refresh: async () => {
      const t = new Date();
      await utimes(path, t, t).catch(() => undefined);
    },
    release: async () => {
      const now = await readFile(path, 'utf8').catch(() => '');
      if (now === mine) await unlink(path).catch(() => undefined);
    },
  };
}
