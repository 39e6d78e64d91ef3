import { open } from 'node:fs/promises';
import { unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql, TransactionSql } from 'postgres';
import {
  CLAIM_GRACE_MS,
  type ClaimedBytes,
  type Dropped,
  type Due,
  type FileBlobs,
  type FileClaims,
  type NewFile,
  type StoredBytes,
  SNIFF_BYTES,
} from '../paste/files.ts';
import { checkSpooled } from '../storage/fs.ts';

/** Bytes per row of `file_chunks`: no row is large, and a read streams one at a time. */
export const CHUNK_BYTES = 256 * 1024;

/** The advisory lock class of one hash's bytes (with the hash's hashtext as the other key). */
const FILE_LOCK = 0x6669_6c65;

/** The longest pause of a claim between tries of a hash's lock held by the sweep. */
const MAX_CLAIM_PAUSE_MS = 50;

/**
 * Files' bytes in PostgreSQL (migrations/016-paste-files.sql): `file_blobs` (size and first
 * bytes) and their `file_chunks`, written in one transaction, committed (synchronous_commit)
 * before the paste row names them.
 */
export class PgFileBlobs implements FileBlobs {
  constructor(private readonly sql: Sql) {}

  async put(file: NewFile): Promise<void> {
    const sha = file.sha256;
    await checkSpooled(file);
    const fh = await open(file.path, 'r');
    try {
      await this.sql.begin(async (tx: TransactionSql) => {
        const head = Buffer.alloc(Math.min(SNIFF_BYTES, file.size));
        await fh.read(head, 0, head.length, 0);
        // A second put of the same bytes waits for the first's row, then adds nothing.
        const made = await tx`
          insert into file_blobs (sha256, size, head) values (${sha}, ${file.size}, ${head})
          on conflict do nothing returning sha256`;
        if (made.length === 0) return;
        const buf = Buffer.alloc(CHUNK_BYTES);
        for (let n = 0, at = 0; at < file.size; n++) {
          const { bytesRead } = await fh.read(buf, 0, CHUNK_BYTES, at);
          if (bytesRead === 0) throw new Error(`the upload ${file.path} is shorter than its size`);
          await tx`insert into file_chunks (sha256, n, data) values (${sha}, ${n}, ${buf.subarray(0, bytesRead)})`;
          at += bytesRead;
        }
      });
    } finally {
      await fh.close();
      await unlink(file.path).catch(() => undefined);
    }
  }

  async open(sha256: string): Promise<StoredBytes | null> {
    const rows = await this.sql<{ size: string; head: Buffer }[]>`
      select size, head from file_blobs where sha256 = ${sha256}`;
    const row = rows[0];
    if (row === undefined) return null;
    const sql = this.sql;
    const size = Number(row.size);
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let n = 0, sent = 0; sent < size; n++) {
        const [c] = await sql<{ data: Buffer }[]>`select data from file_chunks where sha256 = ${sha256} and n = ${n}`;
        // Removed meanwhile (the paste went): the answer is cut short rather than padded.
        if (c === undefined) throw new Error(`the bytes ${sha256} were removed while being sent`);
        sent += c.data.length;
        yield c.data;
      }
    }
    return { size, head: row.head, stream: () => Readable.from(chunks(), { objectMode: false }) };
  }

  async remove(sha256: string): Promise<void> {
    await this.sql`delete from file_blobs where sha256 = ${sha256}`;
  }
}

/**
 * Files' claims in PostgreSQL, whatever holds the bytes (FILE_STORE): each paste's
 * `file_claims`, and the `file_releases` the sweep reads. A new claim and the sweep's removal
 * of the last one take the hash's advisory lock, so they never cross.
 */
export class PgFileClaims implements FileClaims {
  constructor(
    private readonly sql: Sql,
    readonly tmpDir: string,
  ) {}

  /**
   * The hash's lock is tried, never waited for with a transaction open: a claim waiting would
   * hold a place on the pool, and the sweep holding the lock needs one more to remove the bytes
   * (`last` of drop), so enough claims of the same bytes at once would stall both until their
   * requests ran out of time. Refused, the claim lets its place go, pauses and tries again.
   */
  async claim(holder: string, { sha256, size }: ClaimedBytes, now: number): Promise<void> {
    for (let pause = 1; ; pause = Math.min(pause * 2, MAX_CLAIM_PAUSE_MS)) {
      const made = await this.sql.begin(async (tx: TransactionSql) => {
        const [lock] = await tx<{ got: boolean }[]>`
          select pg_try_advisory_xact_lock(${FILE_LOCK}, hashtext(${sha256})) as got`;
        if (lock?.got !== true) return false;
        await tx`
          insert into file_claims (sha256, holder, claimed_at, size)
          values (${sha256}, ${holder}, ${new Date(now)}, ${size})
          on conflict (holder, sha256) do update set claimed_at = excluded.claimed_at, size = excluded.size`;
        // Looked at once its grace is over, in case no paste ever names it (a create that failed).
        await tx`insert into file_releases (holder, due) values (${holder}, ${new Date(now + CLAIM_GRACE_MS + 1)})`;
        return true;
      });
      if (made) return;
      await sleep(pause);
    }
  }

  /** One pass over the claims (migration 20 gave each its size), the bytes' rows and the bucket left alone. */
  async stored(): Promise<{ files: number; bytes: number }> {
    const [r] = await this.sql<{ files: string; bytes: string }[]>`
      select count(*)::text as files, coalesce(sum(size), 0)::text as bytes
      from (select sha256, max(size) as size from file_claims group by sha256) c`;
    return { files: Number(r?.files ?? 0), bytes: Number(r?.bytes ?? 0) };
  }

  async release(holder: string, due: number): Promise<void> {
    await this.sql`insert into file_releases (holder, due) values (${holder}, ${new Date(due)})`;
  }

  async due(now: number, limit: number): Promise<Due[]> {
    // The mark is the newest release seen: one made since has a larger id, and stays.
    const rows = await this.sql<{ holder: string; seen: string }[]>`
      select holder, max(id)::text as seen from file_releases where due <= ${new Date(now)}
      group by holder limit ${limit}`;
    return rows.map((r) => ({ holder: r.holder, seen: r.seen }));
  }

  async claims(holder: string): Promise<string[]> {
    const rows = await this.sql<{ sha256: string }[]>`select sha256 from file_claims where holder = ${holder}`;
    return rows.map((r) => r.sha256);
  }

  drop(holder: string, sha256: string, claimedBefore: number, last: () => Promise<void>): Promise<Dropped> {
    return this.sql.begin(async (tx: TransactionSql) => {
      await tx`select pg_advisory_xact_lock(${FILE_LOCK}, hashtext(${sha256}))`;
      const gone = await tx`
        delete from file_claims
        where holder = ${holder} and sha256 = ${sha256} and claimed_at <= ${new Date(claimedBefore)}
        returning 1`;
      if (gone.length === 0) {
        const there = await tx`select 1 from file_claims where holder = ${holder} and sha256 = ${sha256}`;
        return there.length > 0 ? 'young' : 'dropped';
      }
      const left = await tx`select 1 from file_claims where sha256 = ${sha256} limit 1`;
      if (left.length > 0) return 'dropped';
      // Under the lock, and undone with the claim's removal should it fail.
      await last();
      return 'removed';
    }) as Promise<Dropped>;
  }

  async settled({ holder, seen }: Due): Promise<void> {
    await this.sql`delete from file_releases where holder = ${holder} and id <= ${seen}::bigint`;
  }
}
