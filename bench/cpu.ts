import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of processes from /proc (Linux): where the cores went during a measurement, so a
 * result says whether the server, the load generator, the database or the proxy was the limit.
 */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

interface ProcStat {
  ppid: number;
  /** utime + stime: its own threads. */
  own: number;
  /** cutime + cstime: its children that ended and were waited for. */
  reaped: number;
}

/** /proc/<pid>/stat, or null once the process is gone. The name may hold spaces and parentheses. */
function stat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // The process ended between the listing and the read (ENOENT, ESRCH).
    return null;
  }
  const f = text
    .slice(text.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // Fields after the name: state ppid ... utime(14) stime(15) cutime(16) cstime(17), 1-based in proc(5).
  return { ppid: f[1] ?? 0, own: (f[11] ?? 0) + (f[12] ?? 0), reaped: (f[13] ?? 0) + (f[14] ?? 0) };
}

function table(): Map<number, ProcStat> {
  const all = new Map<number, ProcStat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s !== null) all.set(Number(name), s);
  }
  return all;
}

/** CPU ticks of `root` and every process under it, those that ended included (counted in their parents). */
function treeTicks(all: Map<number, ProcStat>, root: number): number {
  let ticks = 0;
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    const s = all.get(pid);
    if (s === undefined) continue;
    ticks += s.own + s.reaped;
    for (const [child, c] of all) if (c.ppid === pid) queue.push(child);
  }
  return ticks;
}

/**
 * The processes whose command line holds `arg` (a cluster's socket folder, say) and whose
 * parent's does not: the roots of their trees, so that none is counted twice.
 */
export function processesWith(arg: string): number[] {
  const pids = new Set<number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(arg)) pids.add(Number(name));
    } catch {
      // Ended meanwhile.
    }
  }
  return [...pids].filter((pid) => !pids.has(stat(pid)?.ppid ?? 0));
}

/** The machine's busy and total ticks, all cores, from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
  // idle and iowait are not work.
  return { busy: total - (cpu[3] ?? 0) - (cpu[4] ?? 0), total };
}

export interface CpuSnapshot {
  at: number;
  groups: Record<string, number>;
  /** This process's waited-for children: the load generator, which ends with its run. */
  reaped: number;
  machine: { busy: number; total: number };
}

/** CPU so far of each group of process trees (by root pid), of the children this process reaped, and of the machine. */
export function cpuSnapshot(groups: Record<string, readonly number[]>): CpuSnapshot {
  const all = table();
  const out: Record<string, number> = {};
  for (const [name, roots] of Object.entries(groups)) out[name] = roots.reduce((a, r) => a + treeTicks(all, r), 0);
  return { at: performance.now(), groups: out, reaped: stat(process.pid)?.reaped ?? 0, machine: machineTicks() };
}

/**
 * Cores used by each group between two snapshots (1.00 = one core busy the whole time):
 * the groups, `load generator` (children reaped meanwhile) and `rest of the machine`
 * (everything else that ran, other users included).
 */
export function coresUsed(before: CpuSnapshot, after: CpuSnapshot): Record<string, number> {
  const seconds = (after.at - before.at) / 1000;
  const cores = (ticks: number): number => ticks / TICKS_PER_SECOND / seconds;
  const out: Record<string, number> = {};
  let ours = 0;
  for (const name of Object.keys(after.groups)) {
    const ticks = (after.groups[name] ?? 0) - (before.groups[name] ?? 0);
    out[name] = cores(ticks);
    ours += ticks;
  }
  const generator = after.reaped - before.reaped;
  out['load generator'] = cores(generator);
  out['rest of the machine'] = Math.max(0, cores(after.machine.busy - before.machine.busy - ours - generator));
  return out;
}
