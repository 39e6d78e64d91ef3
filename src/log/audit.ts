import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { asStorageError, isErrno } from '../storage/errors.ts';
import { fsyncDir, listDir, mkdirp } from '../storage/fs.ts';
import { describeProblem } from '../storage/problems.ts';

/** Who did an admin action, and from where (README, Audit log). */
export interface Actor {
  via: 'web' | 'cli' | 'api';
  /** The admin's account; null for the CLI, which is run by whoever runs the machine. */
  user_id: number | null;
  name: string | null;
  /** The client address of a web or API action; null for the CLI. */
  ip: string | null;
}

/** One line of `logs/audit-YYYY-MM-DD.jsonl`. `before`/`after` never hold a secret or a hash of one. */
export interface AuditEntry {
  time: string;
  via: Actor['via'];
  user_id: number | null;
  user: string | null;
  ip: string | null;
  /** What was done: `user.add`, `user.disable`, `token.revoke`, `backup`, ... */
  action: string;
  /** What it was done to: `user:alice`, `token:Ab12Cd34`, a file name. */
  target: string;
  before: unknown;
  after: unknown;
}

export type AuditRecord = Omit<AuditEntry, 'time' | 'via' | 'user_id' | 'user' | 'ip'>;

const FILE_RE = /^audit-(\d{4}-\d{2}-\d{2})\.jsonl$/;

/** The audit files of a logs folder, newest day first. */
async function auditFiles(dir: string): Promise<string[]> {
  return (await listDir(dir))
    .filter((n) => FILE_RE.test(n))
    .sort()
    .reverse();
}

/**
 * The admins' record: every admin action, on the web or with the CLI, appended as one JSON
 * line to the day's file (UTC) and fsynced before the action is reported done. The server
 * and the CLI append to the same files: each line is one `write` on a file opened for
 * appending, so lines from two processes never interleave. Never pruned: the API log's
 * retention does not touch these files.
 */
export class AuditLog {
  #chain: Promise<void> = Promise.resolve();

  constructor(
    readonly dir: string,
    private readonly now: () => number = Date.now,
    /** Told when an entry cannot be written (the server's log; the CLI's stderr). */
    private readonly warn: (message: string) => void = () => undefined,
  ) {}

  /**
   * Appends one entry durably; appends from this process go in order. The action it records
   * is already done, so a failed write does not undo or fail it: it is reported to `warn`.
   */
  record(actor: Actor, r: AuditRecord): Promise<void> {
    const at = this.now();
    const entry: AuditEntry = {
      time: new Date(at).toISOString(),
      via: actor.via,
      user_id: actor.user_id,
      user: actor.name,
      ip: actor.ip,
      ...r,
    };
    const line = `${JSON.stringify(entry).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)}\n`;
    const run = this.#chain.then(() => this.#append(`audit-${entry.time.slice(0, 10)}.jsonl`, line));
    this.#chain = run.catch((err: unknown) =>
      this.warn(`audit log: ${r.action} ${r.target} was done but could not be recorded: ${describeProblem(err)}`),
    );
    return this.#chain;
  }

  async #append(name: string, line: string): Promise<void> {
    const path = join(this.dir, name);
    try {
      await mkdirp(this.dir);
      const fh = await open(path, 'a', 0o600);
      try {
        const { size } = await fh.stat();
        await fh.write(line);
        await fh.sync();
        // A new day's file: its name must survive a power cut too.
        if (size === 0) await fsyncDir(this.dir);
      } finally {
        await fh.close();
      }
    } catch (err) {
      throw asStorageError(err, path);
    }
  }

  /**
   * One page of entries, newest first, skipping `offset` of them. Files are small (one
   * line per admin action), so each is read whole; reading stops once the page is full.
   */
  async read(offset: number, limit: number): Promise<{ entries: AuditEntry[]; more: boolean }> {
    const entries: AuditEntry[] = [];
    let skip = offset;
    for (const name of await auditFiles(this.dir)) {
      let text: string;
      try {
        text = await readFile(join(this.dir, name), 'utf8');
      } catch (err) {
        if (isErrno(err, 'ENOENT')) continue;
        throw err;
      }
      const lines = text.split('\n').filter((l) => l !== '');
      for (let i = lines.length - 1; i >= 0; i--) {
        const entry = parseEntry(lines[i] as string);
        if (entry === null) continue;
        if (skip > 0) {
          skip--;
          continue;
        }
        if (entries.length === limit) return { entries, more: true };
        entries.push(entry);
      }
    }
    return { entries, more: false };
  }
}

/** A line as written by `record`, or null for a torn or foreign one (a crash mid-append). */
function parseEntry(line: string): AuditEntry | null {
  try {
    const e = JSON.parse(line) as Partial<AuditEntry>;
    return typeof e === 'object' &&
      e !== null &&
      typeof e.time === 'string' &&
      typeof e.action === 'string' &&
      typeof e.target === 'string'
      ? (e as AuditEntry)
      : null;
  } catch {
    return null;
  }
}
