import type { Readable } from 'node:stream';
import type { Paste, PasteFile } from './paste.ts';
import { FILE_LIMIT_DEFAULTS, type FileLimits } from '../config.ts';
import { sealedFileBytes } from './envelope.ts';

export { FILE_LIMIT_DEFAULTS, type FileLimits, type PasteFile };

/**
 * A paste's files (README, Files): what the paste record keeps of each (name, size, type,
 * SHA-256), the port the bytes are stored through (`FileBytes`, content-addressed, one copy
 * however many pastes hold them), and the sweep that removes bytes no paste holds any more.
 */

/** A file a request brought, spooled to a temporary file (http/multipart.ts). */
export interface NewFile extends PasteFile {
  readonly path: string;
}

/**
 * The most bytes a file of a paste may hold as stored, and why past it (413): MAX_FILE_BYTES,
 * or for an encrypted paste the largest envelope of a file that size (paste/envelope.ts),
 * so the limit is the file's as its author chose it, not its envelope's.
 */
export function fileLimit(limits: Pick<FileLimits, 'maxFileBytes'>, encrypted: boolean): FileLimit {
  const max = limits.maxFileBytes;
  if (!encrypted) return { bytes: max, message: `A file may hold at most ${max} bytes (MAX_FILE_BYTES)` };
  const sealed = sealedFileBytes(max);
  return {
    bytes: sealed,
    message:
      `A file of an encrypted paste may hold at most ${max} bytes (MAX_FILE_BYTES) before it is encrypted, ` +
      `so its envelope at most ${sealed}`,
  };
}

export interface FileLimit {
  bytes: number;
  message: string;
}

/** A file name's bound in UTF-8 bytes, as most filesystems have it. */
export const MAX_FILE_NAME_BYTES = 255;

/**
 * Why a file name cannot be kept, or null: any UTF-8 shown as given, but never a path (no
 * `/`, not `.` or `..`), no control characters, at most MAX_FILE_NAME_BYTES bytes.
 */
export function fileNameProblem(name: string): string | null {
  if (name === '') return 'a file needs a name';
  if (Buffer.byteLength(name) > MAX_FILE_NAME_BYTES) return `a file name may be at most ${MAX_FILE_NAME_BYTES} bytes`;
  if (name.includes('/')) return 'a file name may not contain "/"';
  if (name === '.' || name === '..') return 'a file name may not be "." or ".."';
  // C0, DEL and C1 controls; a lone surrogate cannot have come from valid UTF-8.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'a file name may not contain control characters';
  return null;
}

/** The files a paste holds now (none for a paste stored before files were taken). */
export const filesOf = (p: Pick<Paste, 'files'>): readonly PasteFile[] => p.files ?? [];

/** A paste without its files (burned or wiped: they go with its text). */
export function withoutFiles(p: Paste): Paste {
  if (p.files === undefined) return p;
  const { files: _gone, ...rest } = p;
  return rest;
}

/** A file's record without its temporary path (a burned paste's file keeps when its grant was used). */
export const recordOf = (f: PasteFile): PasteFile =>
  typeof f.fetched === 'number'
    ? { name: f.name, size: f.size, type: f.type, sha256: f.sha256, fetched: f.fetched }
    : { name: f.name, size: f.size, type: f.type, sha256: f.sha256 };

/** How long the reader who burns a one-time paste may fetch each of its files, once (paste/file-grant.ts). */
export const FILE_GRANT_MS = 10 * 60_000;

/** How long a file fetched through its grant stays stored, so the answer that sends it is not cut short. */
export const FETCHED_HOLD_MS = 30_000;

/** When a burned paste's file stops being named: its grant's end, or a while after it was fetched. */
export function grantHeldUntil(p: Paste, f: PasteFile): number {
  if (f.fetched !== undefined) return f.fetched + FETCHED_HOLD_MS;
  return (p.receipt?.at ?? p.updated_at) + FILE_GRANT_MS;
}

/**
 * The image types served inline, by their leading bytes: a file is shown in the page only
 * when its bytes are one of these, whatever type it claims (README, Files).
 */
const INLINE_IMAGES: readonly { type: string; test: (b: Buffer) => boolean }[] = [
  {
    type: 'image/png',
    test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { type: 'image/jpeg', test: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  {
    type: 'image/gif',
    test: (b) => ['GIF87a', 'GIF89a'].includes(b.subarray(0, 6).toString('latin1')),
  },
  {
    type: 'image/webp',
    test: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
];

/** The inline image type the bytes begin as, or null (every other file is an attachment). */
export function inlineImageType(head: Buffer): string | null {
  return INLINE_IMAGES.find((i) => i.test(head))?.type ?? null;
}

/** How many leading bytes inlineImageType needs. */
export const SNIFF_BYTES = 12;

/**
 * Where the bytes are stored, content-addressed: the paste's own store keeps the claims
 * (`FileClaims`), and a `FileBlobs` the bytes (README, Files). Each paste that holds bytes has
 * a claim on them, made before its record names them; a claim is dropped only by the sweep,
 * once the paste (every kept version of it) no longer names them, and the bytes go with their
 * last claim.
 */
export interface FileBytes {
  /**
   * Stores a spooled file's bytes under its SHA-256 (once, however many pastes hold them),
   * durably, with `holder`'s claim on them; the temporary file is moved or removed. The
   * claim is looked at again by the sweep after CLAIM_GRACE_MS, in case no record names it.
   */
  keep(file: NewFile, holder: string, now: number): Promise<void>;
  /** Adds `holder`'s claim on bytes already kept (a create whose first hash was taken claims them again). */
  claim(holder: string, file: ClaimedBytes, now: number): Promise<void>;
  /** The bytes, as a stream, or null when the store has none under that hash. */
  open(sha256: string): Promise<StoredBytes | null>;
  /** Asks the sweep to look at `holder`'s claims from `due` on (its paste was deleted, edited, burned, wiped). */
  release(holder: string, due: number): Promise<void>;
  /** Up to `limit` pastes whose claims are due to be looked at by `now`, with the releases seen. */
  due(now: number, limit: number): Promise<Due[]>;
  /** The bytes `holder` has claims on. */
  claims(holder: string): Promise<string[]>;
  /**
   * Drops `holder`'s claim on `sha256` unless it was made after `claimedBefore` (then
   * `young`), and the bytes with it when it was the last (then `removed`).
   */
  drop(holder: string, sha256: string, claimedBefore: number): Promise<Dropped>;
  /**
   * The releases `due` saw were looked at: they go, but not one made since (a paste wiped
   * while the sweep read it), which the next round looks at.
   */
  settled(due: Due): Promise<void>;
  /**
   * The distinct bytes stored and their size together (README, Metrics), counted from the
   * claims alone, wherever the bytes are: never by listing where they are.
   */
  stored(): Promise<{ files: number; bytes: number }>;
  /** Where uploads are spooled before `keep`. */
  readonly tmpDir: string;
}

/**
 * What a paste holds and when the sweep looks at it, kept in the paste's own store
 * (store/file-bytes.ts, pg/file-bytes.ts), never found by listing where the bytes are.
 * A claim made and the last one dropped take the hash's lock, so they never cross.
 */
export interface FileClaims extends Omit<FileBytes, 'keep' | 'open' | 'drop'> {
  /** Makes `holder`'s claim on the bytes, noting their size, with a release due once its grace is over. */
  claim(holder: string, file: ClaimedBytes, now: number): Promise<void>;
  /** As FileBytes.drop; when the claim was the last, `last` runs under the hash's lock before `removed`. */
  drop(holder: string, sha256: string, claimedBefore: number, last: () => Promise<void>): Promise<Dropped>;
}

/** Bytes a claim is on: their SHA-256 and their size. */
export type ClaimedBytes = Pick<PasteFile, 'sha256' | 'size'>;

/**
 * Where the bytes go, by SHA-256: the data folder, PostgreSQL's chunks, or an S3 bucket
 * (FILE_STORE, files/s3.ts).
 */
export interface FileBlobs {
  /** Stores a spooled file's bytes durably (a put of bytes already there may be skipped); the spooled file goes. */
  put(file: NewFile): Promise<void>;
  /** The bytes, or null when there are none under that hash. */
  open(sha256: string): Promise<StoredBytes | null>;
  /** Removes the bytes; none there is no error. */
  remove(sha256: string): Promise<void>;
}

/**
 * The claims and the bytes as one FileBytes. The claim comes first: bytes are never there
 * without one, and the sweep removes bytes only under the lock, after their last claim went.
 */
export class ClaimedFiles implements FileBytes {
  constructor(
    private readonly held: FileClaims,
    private readonly blobs: FileBlobs,
  ) {}

  get tmpDir(): string {
    return this.held.tmpDir;
  }

  async keep(file: NewFile, holder: string, now: number): Promise<void> {
    await this.held.claim(holder, file, now);
    await this.blobs.put(file);
  }

  claim(holder: string, file: ClaimedBytes, now: number): Promise<void> {
    return this.held.claim(holder, file, now);
  }

  stored(): Promise<{ files: number; bytes: number }> {
    return this.held.stored();
  }

  open(sha256: string): Promise<StoredBytes | null> {
    return this.blobs.open(sha256);
  }

  release(holder: string, due: number): Promise<void> {
    return this.held.release(holder, due);
  }

  due(now: number, limit: number): Promise<Due[]> {
    return this.held.due(now, limit);
  }

  claims(holder: string): Promise<string[]> {
    return this.held.claims(holder);
  }

  drop(holder: string, sha256: string, claimedBefore: number): Promise<Dropped> {
    return this.held.drop(holder, sha256, claimedBefore, () => this.blobs.remove(sha256));
  }

  settled(due: Due): Promise<void> {
    return this.held.settled(due);
  }
}

/** What a drop did: removed the bytes with the last claim, dropped the claim alone, or left a claim too new to judge. */
export type Dropped = 'removed' | 'dropped' | 'young';

/** A paste whose claims are due, and which of its releases were seen (the store's own mark). */
export interface Due {
  readonly holder: string;
  readonly seen: string;
}

/** Stored bytes: their size, their first bytes (to tell an image), and a stream of all of them. */
export interface StoredBytes {
  readonly size: number;
  readonly head: Buffer;
  /** All of them, when they are held in memory (files/cached.ts). */
  readonly whole?: Buffer;
  stream(): Readable;
}

/**
 * How long a new claim is safe from the sweep: a create or edit makes its claims before it
 * writes the record that names them, and the sweep must not take the bytes in between.
 */
export const CLAIM_GRACE_MS = 30_000;

/** What the sweep reads of a paste to decide whether it still names some bytes. */
export interface Holders {
  get(hash: string): Promise<Paste | null>;
  revisions(hash: string): Promise<number[]>;
  getRevision(hash: string, revision: number): Promise<Paste | null>;
}

/**
 * The bytes paste `hash` names, in its current version and every kept one; a burned paste
 * names its files only while its reader's grant holds them (grantHeldUntil).
 */
async function namedBy(pastes: Holders, hash: string, now: number): Promise<Set<string>> {
  const named = new Set<string>();
  const add = (p: Paste | null): void => {
    if (p !== null) for (const f of filesOf(p)) if (!p.burned || now < grantHeldUntil(p, f)) named.add(f.sha256);
  };
  add(await pastes.get(hash));
  for (const n of await pastes.revisions(hash)) add(await pastes.getRevision(hash, n));
  return named;
}

/**
 * One round of the file sweep (with the upkeep, once per cluster): the claims of every
 * released paste are checked against what it names, and bytes nobody names any more are
 * removed. Answers how many were.
 */
export async function sweepFiles(bytes: FileBytes, pastes: Holders, now: number, limit = 200): Promise<number> {
  let removed = 0;
  for (const due of await bytes.due(now, limit)) {
    const holder = due.holder;
    const claims = await bytes.claims(holder);
    const named = claims.length === 0 ? new Set<string>() : await namedBy(pastes, holder, now);
    let young = false;
    for (const sha of claims) {
      if (named.has(sha)) continue;
      const done = await bytes.drop(holder, sha, now - CLAIM_GRACE_MS);
      if (done === 'removed') removed++;
      young ||= done === 'young';
    }
    // A claim too new to judge is looked at again next round.
    if (!young) await bytes.settled(due);
  }
  return removed;
}

/** The bytes a change stopped naming: in `before`'s files and not in `after`'s. */
export function lostBytes(before: Paste | null, after: Paste | null): string[] {
  if (before === null) return [];
  const kept = new Set(after === null ? [] : filesOf(after).map((f) => f.sha256));
  return [...new Set(filesOf(before).map((f) => f.sha256))].filter((s) => !kept.has(s));
}
