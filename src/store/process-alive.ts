import { readFileSync } from 'node:fs';
import { isErrno } from '../storage/errors.ts';

/** The fields of `/proc/<pid>/stat` after the command name (state first), or null off Linux or when gone. */
function procStat(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces and parentheses itself: the last `)` ends it.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    // No /proc (not Linux), or the process went meanwhile: nothing more to learn here.
    return null;
  }
}

/**
 * Whether process `pid` on this host may still hold something: it exists and is not a
 * zombie. A server killed under an init that reaps no orphans stays a zombie (state Z in
 * `/proc/<pid>/stat`, Linux), and a zombie holds no file, port or folder.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: a process of another user has that pid, so it is alive.
    if (isErrno(err, 'ESRCH')) return false;
  }
  const state = procStat(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/**
 * Whether process `pid` began after `ms` (epoch ms), as far as Linux tells (false when it
 * cannot tell): then it is not whoever last touched a file at `ms`, only a reuse of its pid.
 * Start times are boot time plus clock ticks (USER_HZ, 100 on Linux); a second of slack.
 */
export function startedAfter(pid: number, ms: number): boolean {
  const ticks = Number(procStat(pid)?.[19]);
  let boot = Number.NaN;
  try {
    boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
  } catch {
    // No /proc/stat: the start time cannot be known.
  }
  if (!Number.isFinite(ticks) || !Number.isFinite(boot)) return false;
  return boot * 1000 + ticks * 10 > ms + 1000;
}
