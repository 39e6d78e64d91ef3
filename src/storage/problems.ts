import { StorageProblem } from './errors.ts';

const ERRNO_WORDS: Record<string, string> = {
  EACCES: 'permission denied: the data folder and everything in it must be writable by the user the service runs as',
  EPERM:
    'operation not permitted: the data folder and everything in it must be writable by the user the service runs as',
  EROFS: 'read-only file system: the data folder must be on a writable disk',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  ENOTDIR: 'a file is in the way where a folder should be',
  EISDIR: 'a folder is in the way where a file should be',
  ENOENT: 'it does not exist',
  EMFILE: 'too many open files: raise the limit (ulimit -n)',
};

/**
 * What went wrong, in one line that names the file or folder (README, Run it): for the
 * server's "cannot start:" and the CLI's "error:", which used to print a raw error object
 * or a stack that named neither.
 */
export function describeProblem(err: unknown): string {
  if (err instanceof StorageProblem) return err.message;
  if (err instanceof Error) {
    const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
    if (e.code === 'EADDRINUSE')
      return `port ${e.port ?? ''} on ${e.address ?? ''} is already in use by another program (EADDRINUSE)`;
    if (e.code === 'EADDRNOTAVAIL') return `${e.address ?? 'HOST'} is not an address of this machine (EADDRNOTAVAIL)`;
    if ((e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') && e.syscall === 'getaddrinfo')
      return `HOST ${(e as { hostname?: string }).hostname ?? ''} is not a name this machine can resolve (${e.code})`;
    if (e.code === 'EEXIST' && e.syscall === 'mkdir' && e.path !== undefined)
      return `${e.path}: a file is in the way where a folder should be (EEXIST)`;
    if (e.syscall === 'listen' && e.code === 'EACCES')
      return `port ${e.port ?? ''} needs privileges to listen on (EACCES); use a port above 1023`;
    const words = e.code === undefined ? undefined : ERRNO_WORDS[e.code];
    if (words !== undefined && e.path !== undefined) return `${e.path}: ${words} (${e.code})`;
    return (err.message.split('\n')[0] ?? '').trim() || err.name;
  }
  return String(err);
}
