import { watch, type FSWatcher } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { basename } from 'node:path';

/**
 * Filesystems (statfs f_type) whose every change goes through this kernel, so inotify sees
 * the CLI's writes: ext2-4, xfs, btrfs, tmpfs, overlayfs (Docker's layers), zfs, f2fs.
 * On anything else (NFS, SMB, 9p, virtiofs, FUSE: a Docker Desktop bind mount, say) another
 * kernel may write, unseen.
 */
const LOCAL_FILESYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010]);

/**
 * Watches `dir` (not its subfolders) for changes to the entry `name`: the kernel (inotify)
 * queues the event before the writer's call returns, so it is read no later than in the poll
 * that delivers any request the write precedes. `changed` is told of each (and of a lost
 * one: the kernel's queue overflowed); `ended` once the watch is gone (the folder moved or
 * deleted, or an error). Null where a watch cannot be trusted or had: the folder is on a
 * filesystem another kernel may write to, or it cannot be watched at all.
 */
export async function watchEntry(
  dir: string,
  name: string,
  on: { changed: () => void; ended: () => void },
): Promise<FSWatcher | null> {
  let watcher: FSWatcher;
  try {
    if (!LOCAL_FILESYSTEMS.has((await statfs(dir)).type)) return null;
    const self = basename(dir);
    watcher = watch(dir, { persistent: false }, (_event, entry) => {
      if (entry === self) end();
      else if (entry === null || entry === name) on.changed();
    });
  } catch {
    return null;
  }
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    watcher.close();
    on.ended();
  };
  watcher.on('error', end);
  return watcher;
}
