import { open, readFile, stat, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isErrno } from '../storage/errors.ts';
import { processAlive } from './process-alive.ts';

const STALE_MS = 30_000;

/**
 * A cross-process lock file (the server and the CLI both write the accounts file).
 * O_EXCL creation is atomic; a lock whose owner has died, or that is older than any
 * real critical section, is stolen so a crash can never wedge the service.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fh = await open(path, 'wx', 0o600);
      await fh.writeFile(String(process.pid));
      await fh.close();
      break;
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
      if (await isStale(path)) {
        await unlink(path).catch((e: unknown) => {
          // Someone else stole it first; fine, we'll race for it on the next turn.
          if (!isErrno(e, 'ENOENT')) throw e;
        });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${path}`);
      await sleep(5 + Math.random() * 10);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(path);
  }
}

async function isStale(path: string): Promise<boolean> {
  try {
    const [info, pidText] = await Promise.all([stat(path), readFile(path, 'utf8')]);
    if (Date.now() - info.mtimeMs > STALE_MS) return true;
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 0) return Date.now() - info.mtimeMs > 1000;
    if (pid === process.pid) return false;
    // A dead owner, or a zombie one (killed, never reaped), holds nothing.
    return !processAlive(pid);
  } catch (err) {
    // ENOENT: released meanwhile, so not stale; we race for it on the next turn.
    if (isErrno(err, 'ENOENT')) return false;
    throw err;
  }
}
