import type { Actor, AuditRecord } from '../log/audit.ts';
import type { Viewer } from './access.ts';
import { Passwords } from '../crypto/passwords.ts';
import type { FailureBudget } from '../ratelimit/failure-budget.ts';
import {
  CorruptPaste,
  type FileQuota,
  quotaBytesOf,
  TOMBSTONE_MS,
  type OwnerLists,
  type PasteHead,
  type PasteRepository,
  type RecentList,
  type SearchBound,
  type Txn,
  type ViewCounts,
} from './repository.ts';
import { canSee, needsPassword, owns } from './access.ts';
import { ANONYMOUS_OWNER, deleteKeyMatches } from './anonymous.ts';
import { PasteError } from './errors.ts';
import { burnedAt } from './file-grant.ts';
import { expireAt } from './expiry.ts';
import { envelopeProblem } from './envelope.ts';
import { detectLanguage } from './language.ts';
import { isSearch, matchesOwned, type OwnedFilter, SearchGate, boundedFilter } from './owned-search.ts';
import { contentOf, encodeContent, isExpired, NO_CONTENT, type Paste } from './paste.ts';
import type { TextSize } from './literal.ts';
import type { CreateInput, EditInput } from './validate.ts';
import { RandomIds } from '../crypto/random.ts';
import {
  FILE_LIMIT_DEFAULTS,
  type FileBytes,
  type FileLimits,
  FETCHED_HOLD_MS,
  FILE_GRANT_MS,
  fileLimit,
  filesOf,
  type NewFile,
  type PasteFile,
  recordOf,
  type StoredBytes,
} from './files.ts';
import { HASH_LENGTH } from './paste.ts';

export type { OwnedFilter } from './owned-search.ts';

/** Why a one-time paste's file is refused before its read (README, Files): its reader gets it by a grant. */
const ONE_TIME_FILE =
  "A one-time paste's files are served only to the reader who burns it: read the paste (paste.php, raw.php or " +
  'its page) and use the grant that answer gives for each file';

/** A list skips a damaged paste file (already reported when found) rather than failing whole. */
const skipDamaged = (err: unknown): null => {
  if (err instanceof CorruptPaste) return null;
  throw err;
};

/**
 * How long a search of My pastes may read the owner's pastes before it stops and says how
 * far it got (README, Web pages): a user with many thousands of pastes gets an answer, and
 * the server's time and memory stay bounded. Only the page asked for is held.
 */
export const OWNED_SEARCH_MS = 1_000;

/**
 * How many matches a search of My pastes counts at most, beyond the page asked for (README,
 * Web pages): a word held by most of someone's many thousand pastes is answered from the
 * newest of them, and the page says there are more, as a search engine does, instead of
 * reading every one to give a number nobody reads.
 */
export const OWNED_COUNT_LIMIT = 1_000;

/**
 * A page of a user's own pastes; `searched` is set when a search stopped before the end for
 * want of time, `more` when it had counted enough (OWNED_COUNT_LIMIT).
 */
export interface OwnedPage {
  pastes: Paste[];
  /** Every paste listed, or every match found (so far, when `searched` or `more` is set). */
  total: number;
  searched?: { read: number; of: number };
  /** More pastes match than `total`, which is then at least OWNED_COUNT_LIMIT and the pages up to this one. */
  more?: true;
}

/** Wrong paste passwords allowed per client and paste per minute, API and web together (README). */
export const PASSWORD_GUESSES_PER_MINUTE = 10;

/**
 * Short links that lead nowhere allowed per client per minute (README, Short links and
 * health). A code is six characters where a hash is ten: unlimited, a client could walk
 * the codes until it found unlisted pastes.
 */
export const SHORT_LINK_MISSES_PER_MINUTE = 30;

/**
 * Proof, other than the password itself, that this reader gave the password of this very
 * paste (e.g. the web's signed unlock grant); checked against the paste as it is now.
 */
export type PasswordProof = (p: Paste) => boolean;

export interface ReadOptions {
  /** The password the reader gave, if any. */
  password?: string | undefined;
  proof?: PasswordProof | undefined;
  /** The client's budget key (its address, an IPv6 one's network): wrong passwords are limited per client and paste. */
  client: string;
  /**
   * The reader already holds this revision (`If-None-Match`): after every other check, a
   * paste for which this answers true is neither counted nor burned, and the read says so.
   */
  known?: ((p: Paste) => boolean) | undefined;
  /** Who reads, for a one-time paste's receipt: the web, or an API token (README, Burn receipts). */
  reader?: { via: 'web' | 'api'; tokenId: string | null } | undefined;
  /** False for HEAD: the same checks, but no view is counted and nothing burns. */
  consume: boolean;
}

/** A read's result: the stored paste object, and its view count including this read. */
export interface Counted {
  paste: Paste;
  viewCount: number;
  /** Set when the reader already held this revision: nothing was counted or burned. */
  unchanged?: true;
  /** Set when this read burned the paste: when, for its files' grants (paste/file-grant.ts). */
  burnedAt?: number;
}

/** A read for a page of the text's beginning (`readHead`): `size` is set when `paste` holds only that. */
export interface HeadCounted extends Counted {
  size?: TextSize;
}

/** A writer's condition on the paste as it is (`If-Match`): false refuses the write with `changed`. */
export type Precondition = (p: Paste) => boolean;

export interface PasteServiceDeps {
  store: PasteRepository;
  views: ViewCounts;
  owners: OwnerLists;
  recent: RecentList;
  /** Charges wrong paste passwords (ratelimit/failure-budget.ts). */
  budget: FailureBudget;
  now: () => number;
  /** Milliseconds from an arbitrary start, to bound a search's time (default: performance.now). */
  elapsed?: () => number;
  /** Where an admin's edit or delete of someone else's paste is recorded (log/audit.ts). */
  audit?: { record(actor: Actor, r: AuditRecord): Promise<void> };
  /** Hashes and checks paste passwords (the process's shared gate by default). */
  passwords?: Passwords;
  /** Earlier versions kept per paste (MAX_REVISIONS, README Revisions); 100 unless given. */
  maxRevisions?: number;
  /** Where files' bytes are kept, and the files' limits (README, Files); none: no files are taken. */
  files?: { bytes: FileBytes; limits: FileLimits };
}

/** What an edit does to a paste's files: the new ones, spooled, and the names of those to remove. */
export interface FileChanges {
  add: readonly NewFile[];
  remove: readonly string[];
}

/** One file of a paste, to be sent: its record and its bytes. */
export interface ServedFile {
  paste: Paste;
  file: PasteFile;
  bytes: StoredBytes;
}

/** An encrypted paste's files are envelopes whatever type their parts claimed (docs/encrypted-pastes.md). */
const opaque = (encrypted: 0 | 1 | undefined, files: readonly PasteFile[]): readonly PasteFile[] =>
  encrypted === 1 ? files.map((f) => ({ ...f, type: 'application/octet-stream' })) : files;

/**
 * The language to store: the one asked for, else detected from the text; an encrypted
 * paste's text cannot be read here, so `auto` is kept for its readers to detect.
 */
function languageFor(asked: string, encrypted: 0 | 1, text: string | (() => string)): string {
  if (asked !== 'auto' || encrypted === 1) return asked;
  return detectLanguage(typeof text === 'string' ? text : text());
}

/** Characters (code points) in a text, as the title limit counts them: a surrogate pair is one. */
const charactersOf = (text: string): number =>
  text.length - (text.match(/[\ud800-\udbff][\udc00-\udfff]/g)?.length ?? 0);

/** A paste as the audit log shows it: what it is, never its text or password. */
const pasteFacts = (p: Paste): Record<string, unknown> => ({
  owner_id: p.owner_id,
  title: p.title,
  language: p.language,
  privacy: p.privacy,
  expire_at: p.expire_at,
  burn_after_read: p.burn_after_read,
  password: p.password !== null,
  content_chars: charactersOf(contentOf(p)),
  revision: p.revision ?? 1,
});

/** One version of a paste as its History lists it; a kept file that cannot be read has no time or size. */
export interface VersionInfo {
  revision: number;
  savedAt: number | null;
  bytes: number | null;
}

/** A damaged kept file, to a reader already allowed to read the paste: `damaged`. */
const damagedFile = (err: unknown): never => {
  if (err instanceof CorruptPaste) throw new PasteError('damaged');
  throw err;
};

/** The paste rules shared by the API and the web pages. Refuses with PasteError. */
export class PasteService {
  readonly #store: PasteRepository;
  readonly #views: ViewCounts;
  readonly #owners: OwnerLists;
  readonly #recent: RecentList;
  readonly #budget: FailureBudget;
  readonly #now: () => number;
  readonly #elapsed: () => number;
  readonly #audit: PasteServiceDeps['audit'];
  readonly #passwords: Passwords;
  readonly #maxRevisions: number;
  readonly #files: { bytes: FileBytes; limits: FileLimits } | undefined;
  readonly #ids = new RandomIds();
  /** The searches of My pastes running, per user and in all (paste/owned-search.ts). */
  readonly #searches = new SearchGate();
  /** Pastes created, burned (read once) and deleted since start (README, Metrics). */
  readonly #counts = { created: 0, burned: 0, deleted: 0 };

  constructor(deps: PasteServiceDeps) {
    this.#store = deps.store;
    this.#views = deps.views;
    this.#owners = deps.owners;
    this.#recent = deps.recent;
    this.#budget = deps.budget;
    this.#now = deps.now;
    this.#elapsed = deps.elapsed ?? (() => performance.now());
    this.#audit = deps.audit;
    this.#passwords = deps.passwords ?? new Passwords();
    this.#maxRevisions = deps.maxRevisions ?? 100;
    this.#files = deps.files;
  }

  /** The files' limits (README, Files). */
  get fileLimits(): FileLimits {
    return this.#files?.limits ?? FILE_LIMIT_DEFAULTS;
  }

  #bytes(): FileBytes {
    if (this.#files === undefined) throw new Error('this server keeps no files');
    return this.#files.bytes;
  }

  /**
   * Refuses at once, before any bytes are stored, an owner's files past their quota: `adding`
   * bytes more than the user's pastes hold now, less `freeing`. The store checks again as it
   * writes (#quota), which is what holds when writes cross.
   */
  async #withinQuota(ownerId: number, adding: number, freeing = 0): Promise<void> {
    if (adding === 0 || ownerId === ANONYMOUS_OWNER) return;
    const used = await this.usedBytes(ownerId);
    if (used - freeing + adding > this.fileLimits.userQuotaBytes) throw new PasteError('quota_exceeded');
  }

  /** The quota a write adding files to `ownerId`'s pastes is held to in the store (FileQuota); none for anonymous ones. */
  #quota(ownerId: number): FileQuota | undefined {
    if (ownerId === ANONYMOUS_OWNER) return undefined;
    return {
      ownerId,
      limit: this.fileLimits.userQuotaBytes,
      others: (except) => this.#walkedFileBytes(ownerId, except),
    };
  }

  /** The bytes of files `ownerId`'s pastes but `except` hold, paste by paste, where no store counts them itself. */
  async #walkedFileBytes(ownerId: number, except = ''): Promise<number> {
    let used = 0;
    for (const hash of await this.#owners.list(ownerId)) {
      if (hash === except) continue;
      const p = await this.#store.get(hash).catch(skipDamaged);
      if (p !== null) used += quotaBytesOf(p);
    }
    return used;
  }

  /** The bytes of the files a user's pastes hold now (README, Files: quota), each paste's counted. */
  async usedBytes(userId: number): Promise<number> {
    return (await this.filesOwned([userId])).get(userId) ?? 0;
  }

  /**
   * Each user's stored file bytes, as the quota counts them (a burned paste's files, going,
   * are not): one query on PostgreSQL; on the data folder each of their pastes is read.
   */
  async filesOwned(userIds: readonly number[]): Promise<Map<number, number>> {
    if (this.#owners.fileBytes !== undefined) return this.#owners.fileBytes(userIds);
    const out = new Map<number, number>();
    for (const id of userIds) out.set(id, await this.#walkedFileBytes(id));
    return out;
  }

  /** Refuses a file larger than a paste, encrypted or not, may hold (paste/files.ts, fileLimit). */
  #withinFileLimit(encrypted: 0 | 1 | undefined, added: readonly PasteFile[]): void {
    const limit = fileLimit(this.fileLimits, encrypted === 1);
    if (added.some((f) => f.size > limit.bytes))
      throw new PasteError('file_too_large', undefined, undefined, limit.message);
  }

  /** A paste's file list as an edit or create leaves it: checked for count and names. */
  #fileList(files: readonly PasteFile[]): PasteFile[] | undefined {
    const most = this.fileLimits.maxFilesPerPaste;
    if (files.length > most)
      throw new PasteError(
        'too_many_files',
        undefined,
        undefined,
        `A paste holds at most ${most} files (MAX_FILES_PER_PASTE)`,
      );
    if (new Set(files.map((f) => f.name)).size !== files.length) throw new PasteError('file_name_taken');
    return files.length === 0 ? undefined : files.map(recordOf);
  }

  /** Tells the file store to look at a paste's claims (it lost files, or went): bytes nobody names go. */
  async #released(hash: string, due = this.#now()): Promise<void> {
    if (this.#files === undefined) return;
    // The change is made: a release that cannot be written only keeps the bytes longer, never too short.
    await this.#files.bytes.release(hash, due).catch(() => undefined);
  }

  /**
   * A burned paste's file, for the reader who burned it (README, Files): `live` checks the
   * grant (paste/file-grant.ts) against the record as it is, and the record marks the file
   * fetched in the same change, so a grant is good once on every instance. No paste, no
   * such file, or a grant that is not live: `grant_refused`, all alike.
   */
  async grantedFile(
    hash: string,
    name: string,
    live: (p: Paste, f: PasteFile, now: number) => boolean,
    consume = true,
  ): Promise<ServedFile> {
    const now = this.#now();
    const { paste, file, left } = await this.#store.transact(hash, (cur) => {
      const f = cur === null ? undefined : filesOf(cur).find((x) => x.name === name);
      if (cur === null || f === undefined || !live(cur, f, now)) throw new PasteError('grant_refused');
      const files = filesOf(cur).map((x) => (x === f ? { ...x, fetched: now } : x));
      const result = { paste: cur, file: f, left: files.some((x) => x.fetched === undefined) };
      // A HEAD checks the grant and spends nothing.
      return consume ? { result, next: { ...cur, files } } : { result };
    });
    if (consume) {
      // The sweep looks again once the answer is sent; a release written after it keeps the
      // unfetched files' own (a settled release takes the earlier ones with it on PostgreSQL).
      await this.#released(hash, now + FETCHED_HOLD_MS + 1);
      if (left) await this.#released(hash, burnedAt(paste) + FILE_GRANT_MS + 1);
    }
    const bytes = await this.#bytes().open(file.sha256);
    if (bytes === null) throw new PasteError('grant_refused');
    return { paste, file, bytes };
  }

  /**
   * One file of a paste, under the paste's read rules (visibility, expiry, password; nothing
   * counted). A one-time paste's files are not served: its one read is the page or paste.php.
   * With `revision`, a file of that version, as `revision()` reads it.
   */
  async file(
    hash: string,
    name: string,
    viewer: Viewer | null,
    opts: ReadOptions,
    revision?: number,
  ): Promise<ServedFile> {
    // A kept version's files stay stored while it is kept (docs/files.md, Storing them).
    const { paste } =
      revision === undefined
        ? await this.#unconsumed(hash, viewer, opts, ONE_TIME_FILE)
        : await this.revision(hash, revision, viewer, opts);
    const file = filesOf(paste).find((f) => f.name === name);
    if (file === undefined) throw new PasteError('file_not_found');
    const bytes = await this.#bytes().open(file.sha256);
    if (bytes === null) throw new PasteError('file_not_found');
    return { paste, file, bytes };
  }

  /**
   * The text of file `f` of a paste its caller has read under its rules (the paste page),
   * when its bytes are valid UTF-8 of at most `max`; else null.
   */
  async fileText(f: PasteFile, max: number): Promise<string | null> {
    if (this.#files === undefined || f.size > max) return null;
    const stored = await this.#files.bytes.open(f.sha256);
    if (stored === null || stored.size > max) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of stored.stream()) chunks.push(chunk as Buffer);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
    } catch {
      return null;
    }
  }

  /** Records an admin's change to a paste that is not theirs (README, Audit log). */
  async #audited(
    viewer: Viewer,
    actor: Actor | undefined,
    action: string,
    before: Paste,
    after: Paste | null,
  ): Promise<void> {
    if (actor === undefined || this.#audit === undefined || before.owner_id === viewer.userId) return;
    await this.#audit.record(actor, {
      action,
      target: `paste:${before.hash}`,
      before: pasteFacts(before),
      after: after === null ? null : pasteFacts(after),
    });
  }

  get counts(): { created: number; burned: number; deleted: number } {
    return { ...this.#counts };
  }

  /**
   * A paste the viewer may see, without counting a view or checking its password: at once
   * when the cache holds it, like `read`; refusals always come as a rejected promise.
   */
  peek(hash: string, viewer: Viewer | null): Paste | Promise<Paste> {
    const cached = this.#store.cached(hash);
    if (cached === undefined) {
      return this.#store.get(hash).then(
        (p) => this.#visible(p, viewer),
        (err: unknown) => this.#damaged(err, viewer),
      );
    }
    try {
      return this.#visible(cached, viewer);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /**
   * A damaged paste file, as its reader may know it: its owner and admins learn that it is
   * damaged (and may delete it); to anyone else, whose right to see it cannot be checked,
   * it is not there. Anything else is passed on.
   */
  #damaged(err: unknown, viewer: Viewer | null): never {
    if (!(err instanceof CorruptPaste)) throw err;
    if (viewer !== null && (viewer.isAdmin || viewer.userId === err.ownerId)) throw new PasteError('damaged');
    throw new PasteError('not_found');
  }

  #visible(p: Paste | null, viewer: Viewer | null): Paste {
    if (p === null || !canSee(viewer, p)) throw new PasteError('not_found');
    if (isExpired(p, this.#now())) throw new PasteError('expired');
    // The owner (and admins) learn from the refusal when and how it was read.
    if (p.burned)
      throw new PasteError(
        'burned',
        undefined,
        viewer !== null && owns(viewer, p) ? (p.receipt ?? undefined) : undefined,
      );
    return p;
  }

  /**
   * A read: checks visibility and the password, counts the view, and burns a one-time paste
   * in the same step (durably, before the content is returned), so that of any number of
   * concurrent readers exactly one gets it. The count includes this read. The common read
   * (a cached paste, no password to check, nothing to burn) is answered at once rather than
   * through promises; refusals always come as a rejected promise, never thrown.
   */
  read(hash: string, viewer: Viewer | null, opts: ReadOptions): Counted | Promise<Counted> {
    const cached = this.#store.cached(hash);
    if (cached === undefined) {
      return this.#store.get(hash).then(
        (p) => this.#readFound(hash, p, viewer, opts),
        (err: unknown) => this.#damaged(err, viewer),
      );
    }
    try {
      return this.#readFound(hash, cached, viewer, opts);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /**
   * `peek` for a page that shows at most the first `chars` characters of the text: a long
   * paste the cache does not hold is read only that far when the store can
   * (PasteRepository.head), with the whole text's size.
   */
  peekHead(hash: string, viewer: Viewer | null, chars: number): PasteHead | Promise<PasteHead> {
    if (this.#store.head === undefined || this.#store.cached(hash) !== undefined) {
      const p = this.peek(hash, viewer);
      return p instanceof Promise ? p.then((paste) => ({ paste })) : { paste: p };
    }
    return this.#store.head(hash, chars).then(
      (h) => ({ ...h, paste: this.#visible(h?.paste ?? null, viewer) }),
      (err: unknown) => this.#damaged(err, viewer),
    );
  }

  /**
   * `read` for the same page, with what `peekHead` would read: the view is counted as `read`
   * counts it. A one-time paste is read whole (its one showing shows all of it).
   */
  readHead(hash: string, viewer: Viewer | null, opts: ReadOptions, chars: number): HeadCounted | Promise<HeadCounted> {
    if (this.#store.head === undefined || this.#store.cached(hash) !== undefined) return this.read(hash, viewer, opts);
    return this.#store.head(hash, chars).then(
      (h): HeadCounted | Promise<HeadCounted> => {
        if (h?.size === undefined) return this.#readFound(hash, h?.paste ?? null, viewer, opts);
        if (h.paste.burn_after_read === 1) return this.read(hash, viewer, opts);
        const size = h.size;
        const counted = this.#readFound(hash, h.paste, viewer, opts);
        return counted instanceof Promise ? counted.then((c) => ({ ...c, size })) : { ...counted, size };
      },
      (err: unknown) => this.#damaged(err, viewer),
    );
  }

  #readFound(hash: string, found: Paste | null, viewer: Viewer | null, opts: ReadOptions): Counted | Promise<Counted> {
    const p = this.#visible(found, viewer);
    if (needsPassword(p, viewer) && opts.proof?.(p) !== true)
      return this.#unlock(p, opts).then(() => this.#count(hash, p, opts));
    return this.#count(hash, p, opts);
  }

  /** Checks a reader's password; wrong ones spend the client's budget for this paste. */
  async #unlock(p: Paste, { password, client }: ReadOptions): Promise<void> {
    if (password === undefined || password === '') throw new PasteError('password_required');
    const budget = [{ key: `paste-password:${client}:${p.hash}`, limitPerMinute: PASSWORD_GUESSES_PER_MINUTE }];
    const outcome = await this.#budget.attempt(
      budget,
      () => this.#passwords.verify(password, p.password as string, `paste ${p.hash}`),
      (ok) => !ok,
    );
    if ('refused' in outcome) {
      throw new PasteError('too_many_guesses', {
        perMinute: PASSWORD_GUESSES_PER_MINUTE,
        retryAfterSec: outcome.refused.retryAfterSec,
      });
    }
    if (!outcome.value) throw new PasteError('wrong_password');
  }

  /**
   * Counts the view, or burns a one-time paste; a HEAD (`consume` false) or a revision the
   * reader holds does neither.
   */
  #count(hash: string, p: Paste, { consume, known, reader }: ReadOptions): Counted | Promise<Counted> {
    if (known?.(p))
      return { paste: p, viewCount: p.view_count + this.#views.pending(hash, p.view_count), unchanged: true };
    if (!consume) return { paste: p, viewCount: p.view_count + this.#views.pending(hash, p.view_count) };
    if (p.burn_after_read === 0) return { paste: p, viewCount: p.view_count + this.#views.add(hash, p.view_count) };
    let held = false;
    const burned = this.#store.transact(hash, (cur): Txn<Counted> => {
      if (cur === null) throw new PasteError('not_found');
      if (cur.burned) throw new PasteError('burned');
      const shown = { ...cur, view_count: cur.view_count + this.#views.pending(hash, cur.view_count) + 1 };
      const now = this.#now();
      return {
        result: { paste: shown, viewCount: shown.view_count, burnedAt: now },
        // The files stay named, for their reader's grants, until grantHeldUntil (paste/files.ts).
        next: {
          ...shown,
          content_json: NO_CONTENT,
          burned: true,
          updated_at: now,
          receipt: { at: now, via: reader?.via ?? 'web', token_id: reader?.tokenId ?? null },
        },
        sweepAt: now + TOMBSTONE_MS,
        onCommit: () => {
          this.#counts.burned++;
          held = cur.files !== undefined;
        },
        dropRevisions: true,
      };
    });
    // The file sweep is told before the reader gets it: now (kept versions went), and when the grants end.
    return burned.then(async (c) => {
      if (held) {
        await this.#released(hash);
        await this.#released(hash, (c.burnedAt as number) + FILE_GRANT_MS + 1);
      }
      return c;
    });
  }

  /**
   * An earlier version of a paste (README, Revisions), for whoever may read the paste now:
   * the same checks as a read (visibility, expiry, password), but nothing is counted or
   * burned. Answers the current paste for its own number.
   */
  async revision(hash: string, revision: number, viewer: Viewer | null, opts: ReadOptions): Promise<Counted> {
    const current = await this.#unconsumed(hash, viewer, opts);
    const now = current.paste.revision ?? 1;
    if (revision === now) return current;
    // A kept file that cannot be read is damaged, for whoever may read the paste (README, Data on disk).
    const kept =
      revision >= 1 && revision < now ? await this.#store.getRevision(hash, revision).catch(damagedFile) : null;
    if (kept === null) throw new PasteError('no_revision');
    return { paste: kept, viewCount: current.viewCount };
  }

  /**
   * A read that counts and burns nothing, after every check a read makes. A one-time paste
   * is refused here: it is read whole and once, and that read burns it (README, Revisions).
   */
  async #unconsumed(hash: string, viewer: Viewer | null, opts: ReadOptions, why?: string): Promise<Counted> {
    const current = await this.read(hash, viewer, { ...opts, consume: false, known: undefined });
    if (current.paste.burn_after_read === 1) throw new PasteError('one_time', undefined, undefined, why);
    return current;
  }

  /**
   * The versions of a paste the viewer may read: the numbers of all of them, oldest first
   * (the kept ones, then the current one), and the number, time and size of those on one
   * page of the list, newest first (`offset` counts from the newest). Only that page's kept
   * files are looked at, each from its first few KB; one that cannot be read is listed with
   * no time or size.
   */
  async history(
    hash: string,
    viewer: Viewer | null,
    opts: ReadOptions,
    page: { offset: number; limit: number },
  ): Promise<{ current: Paste; numbers: number[]; versions: VersionInfo[] }> {
    const current = (await this.#unconsumed(hash, viewer, opts)).paste;
    const now = current.revision ?? 1;
    const numbers = [...(await this.#store.revisions(hash)).filter((n) => n < now), now];
    const shown = [...numbers].reverse().slice(page.offset, page.offset + page.limit);
    const versions = await Promise.all(
      shown.map(async (n): Promise<VersionInfo | null> => {
        if (n === now)
          return { revision: n, savedAt: current.updated_at, bytes: Buffer.byteLength(contentOf(current)) };
        const facts = await this.#store.revisionFacts(hash, n).catch((err: unknown) => {
          if (err instanceof CorruptPaste) return undefined;
          throw err;
        });
        if (facts === null) return null;
        return facts === undefined ? { revision: n, savedAt: null, bytes: null } : { revision: n, ...facts };
      }),
    );
    return { current, numbers, versions: versions.filter((v): v is VersionInfo => v !== null) };
  }

  /**
   * The paste a short code names, if the viewer may see it (in any state: its page says
   * which). A code that names nothing the viewer may see spends the client's budget of
   * misses; once it is spent, every short link from the client is refused for a while.
   * `client` is its budget key (its address, an IPv6 one's network).
   */
  async byShortcode(code: string, viewer: Viewer | null, client: string): Promise<Paste> {
    const budget = [{ key: `short-miss:${client}`, limitPerMinute: SHORT_LINK_MISSES_PER_MINUTE }];
    const find = async (): Promise<Paste | null> => {
      const p = await this.#store.getByShortcode(code).catch((err: unknown) => this.#damaged(err, viewer));
      return p !== null && canSee(viewer, p) ? p : null;
    };
    // Charged after the lookup: a crowd behind one address opening links that work is never refused.
    const outcome = await this.#budget.attemptThenCharge(budget, find, (p) => p === null);
    if ('refused' in outcome) {
      throw new PasteError('too_many_misses', {
        perMinute: SHORT_LINK_MISSES_PER_MINUTE,
        retryAfterSec: outcome.refused.retryAfterSec,
      });
    }
    if (outcome.value === null) throw new PasteError('not_found');
    return outcome.value;
  }

  /**
   * A paste the viewer may change: 404 unseen, 403 not theirs. `live` asks for a paste that
   * can still be edited (410 when expired or burned); deleting works in any state.
   */
  async owned(hash: string, viewer: Viewer, live: boolean): Promise<Paste> {
    const p = live
      ? await this.peek(hash, viewer)
      : await this.#store.get(hash).catch((err: unknown) => this.#damaged(err, viewer));
    this.#checkOwner(p, viewer);
    return p;
  }

  /**
   * Creates a paste; `hash`, when given, is tried first (a retried request's, README Safe
   * retries). An anonymous paste keeps its delete key's digest, and is on no owner's list.
   */
  async create(
    input: CreateInput,
    ownerId: number,
    hash?: string,
    deleteKey?: string,
    newFiles: readonly NewFile[] = [],
  ): Promise<Paste> {
    const now = this.#now();
    const files = this.#fileList(newFiles);
    if (files === undefined && input.content === '') throw new PasteError('nothing_left');
    this.#withinFileLimit(input.encrypted, newFiles);
    await this.#withinQuota(
      ownerId,
      newFiles.reduce((n, f) => n + f.size, 0),
    );
    const password = input.password === null ? null : await this.#passwords.hash(input.password);
    const content_json = encodeContent(input.content);
    // The bytes are stored, with the paste's claim on them, before its record names them.
    const first = hash ?? (files === undefined ? undefined : this.#ids.base62(HASH_LENGTH));
    for (const f of newFiles) await this.#bytes().keep(f, first as string, now);
    const paste = await this.#store.create(
      async (hash) => {
        // The hash tried first was taken: the bytes, kept already, are claimed under this one before its record.
        if (hash !== first) for (const f of newFiles) await this.#bytes().claim(hash, f, now);
        return this.#sealed(input.encrypted, files, {
          v: 1,
          hash,
          title: input.title,
          content_json,
          language: languageFor(input.language, input.encrypted ?? 0, input.content),
          privacy: input.privacy,
          highlight: input.highlight,
          burn_after_read: input.burn_after_read,
          burned: false,
          password,
          owner_id: ownerId,
          created_at: now,
          updated_at: now,
          expire_at: expireAt(input.expiry, now),
          view_count: 0,
          receipt: null,
          revision: 1,
          ...(deleteKey === undefined ? {} : { delete_key: deleteKey }),
        });
      },
      ownerId === ANONYMOUS_OWNER
        ? undefined
        : { add: (p) => this.#owners.add(ownerId, p.hash), withdraw: (p) => this.#owners.remove(ownerId, p.hash) },
      first,
      files === undefined ? undefined : this.#quota(ownerId),
    );
    if (paste.privacy === 'public' && paste.burn_after_read === 0) this.#recent.add(paste.hash);
    this.#counts.created++;
    return paste;
  }

  /**
   * Puts paste `hash` in its owner's list if it is not there: a create writes the paste and
   * its list entry together, and a crash between the two, followed by a retry of the create
   * that finds the paste made (README, Safe retries), must not leave it out of "My pastes".
   */
  async relist(hash: string): Promise<void> {
    const p = await this.#store.get(hash);
    if (p === null || p.owner_id === ANONYMOUS_OWNER) return;
    if (!(await this.#owners.list(p.owner_id)).includes(hash)) await this.#owners.add(p.owner_id, hash);
  }

  /**
   * `p`, flagged when its content is a client's envelope, with its files; other pastes keep the one shape they have.
   */
  #sealed(encrypted: 0 | 1 | undefined, files: readonly PasteFile[] | undefined, p: Paste): Paste {
    const sealed: Paste = encrypted === 1 ? { ...p, encrypted: 1 } : p;
    return files === undefined ? sealed : { ...sealed, files: opaque(encrypted, files) };
  }

  /** How many pastes the user owns (the admins' Users page, `cli user list`). */
  countOwned(userId: number): Promise<number> {
    return this.#owners.count(userId);
  }

  /**
   * The user's own pastes, newest first, that still exist (any state), with pending views
   * counted; with a filter, those that match, counted up to OWNED_COUNT_LIMIT or the page
   * asked for: among the candidates the store gives where it narrows the search
   * (OwnerLists.candidates), else among those read from the list in OWNED_SEARCH_MS.
   */
  async listOwned(userId: number, offset: number, limit: number, filter: OwnedFilter = {}): Promise<OwnedPage> {
    const counted = (p: Paste): Paste => ({
      ...p,
      view_count: p.view_count + this.#views.pending(p.hash, p.view_count),
    });
    const owners = this.#owners;
    if (!isSearch(filter)) {
      const [hashes, total] =
        owners.slice === undefined
          ? await owners.list(userId).then((all) => [all.slice(offset, offset + limit), all.length] as const)
          : await Promise.all([owners.slice(userId, offset, limit), owners.count(userId)]);
      return { pastes: await this.#read(hashes, counted), total };
    }
    const place = this.#searches.enter(userId);
    if (place === 'user') throw new PasteError('too_many_searches');
    if (place === 'server') throw new PasteError('searches_busy');
    try {
      return await this.#search(userId, offset, limit, boundedFilter(filter), counted);
    } finally {
      place();
    }
  }

  /** listOwned's search: bounded in time (OWNED_SEARCH_MS) and in what it counts (OWNED_COUNT_LIMIT). */
  async #search(
    userId: number,
    offset: number,
    limit: number,
    filter: OwnedFilter,
    counted: (p: Paste) => Paste,
  ): Promise<OwnedPage> {
    const owners = this.#owners;
    const enough = Math.max(OWNED_COUNT_LIMIT, offset + limit);
    const started = this.#elapsed();
    if (owners.candidates !== undefined) {
      // The store narrowed the search down; each candidate is still decided here, as below.
      const hashes: string[] = [];
      let found = 0;
      let searched: OwnedPage['searched'];
      const bound: SearchBound = {
        left: () => OWNED_SEARCH_MS - (this.#elapsed() - started),
        stopped: (read, of) => void (searched = { read, of }),
      };
      // One match past `enough` says there are more.
      for await (const batch of owners.candidates(userId, filter, enough + 1, bound))
        for (const c of batch) {
          if (!matchesOwned(filter, c)) continue;
          if (found === enough) return { pastes: await this.#read(hashes, counted), total: found, more: true };
          if (found >= offset && found < offset + limit) hashes.push(c.hash);
          found++;
        }
      const pastes = await this.#read(hashes, counted);
      return searched === undefined ? { pastes, total: found } : { pastes, total: found, searched };
    }
    const hashes = await owners.list(userId);
    const page: Paste[] = [];
    let found = 0;
    let read = 0;
    for (const hash of hashes) {
      if (read > 0 && this.#elapsed() - started > OWNED_SEARCH_MS) {
        return { pastes: page.map(counted), total: found, searched: { read, of: hashes.length } };
      }
      read++;
      const p = await this.#store.get(hash).catch(skipDamaged);
      if (p === null || !matchesOwned(filter, p)) continue;
      if (found === enough) return { pastes: page.map(counted), total: found, more: true };
      if (found >= offset && found < offset + limit) page.push(p);
      found++;
    }
    return { pastes: page.map(counted), total: found };
  }

  /**
   * The pastes of `hashes` that still exist, in that order; a damaged file costs only its own line (it was reported
   * when found).
   */
  async #read(hashes: readonly string[], counted: (p: Paste) => Paste): Promise<Paste[]> {
    const pastes: Paste[] = [];
    for (const hash of hashes) {
      const p = await this.#store.get(hash).catch(skipDamaged);
      if (p !== null) pastes.push(counted(p));
    }
    return pastes;
  }

  /** How many pastes each user owns, in one read where the store can (the admins' Users page). */
  async countsOwned(userIds: readonly number[]): Promise<Map<number, number>> {
    if (this.#owners.counts !== undefined) return this.#owners.counts(userIds);
    const out = new Map<number, number>();
    for (const id of userIds) out.set(id, await this.#owners.count(id));
    return out;
  }

  /** Recent public pastes that are still public, readable and unexpired. */
  async listRecent(limit: number, offset = 0): Promise<Paste[]> {
    const out: Paste[] = [];
    let skipped = 0;
    for (const hash of this.#recent.list()) {
      // The cache answers at once: an await per listed paste was a large share of a home page view.
      const cached = this.#store.cached(hash);
      const p = cached !== undefined ? cached : await this.#store.get(hash).catch(skipDamaged);
      if (p === null || p.privacy !== 'public' || p.burned || p.password !== null || isExpired(p, this.#now()))
        continue;
      if (skipped++ < offset) continue;
      out.push(p);
      if (out.length === limit) break;
    }
    return out;
  }

  /** Applies an edit: omitted fields keep their value (README, Edit a paste). */
  async edit(
    hash: string,
    input: EditInput,
    viewer: Viewer,
    unchangedSince?: Precondition,
    actor?: Actor,
    changes: FileChanges = { add: [], remove: [] },
  ): Promise<Paste> {
    const password = input.password === undefined ? undefined : await this.#passwords.hash(input.password);
    let quota: FileQuota | undefined;
    if (changes.add.length > 0) {
      const current = await this.owned(hash, viewer, true);
      // Checked again below, against the paste as the edit finds it.
      this.#withinFileLimit(input.encrypted ?? current.encrypted, changes.add);
      // Refused before the new bytes are stored, as it would be after.
      if (unchangedSince !== undefined && !unchangedSince(current)) throw new PasteError('changed');
      quota = this.#quota(current.owner_id);
      const freeing = filesOf(current)
        .filter((f) => changes.remove.includes(f.name))
        .reduce((n, f) => n + f.size, 0);
      await this.#withinQuota(
        current.owner_id,
        changes.add.reduce((n, f) => n + f.size, 0),
        freeing,
      );
      // Claimed before the record names them; a claim the edit then does not use is swept.
      for (const f of changes.add) await this.#bytes().keep(f, hash, this.#now());
    }
    const edited = await this.#store
      .transact(hash, (p) => {
        const now = this.#now();
        this.#checkOwner(p, viewer);
        if (p.burned) throw new PasteError('burned');
        if (isExpired(p, now)) throw new PasteError('expired');
        if (unchangedSince !== undefined && !unchangedSince(p)) throw new PasteError('changed');
        // Each edit's time is later than the last one's, so (hash, updated_at) names a revision (its ETag).
        const next: { -readonly [K in keyof Paste]: Paste[K] } = {
          ...p,
          updated_at: Math.max(now, p.updated_at + 1),
          revision: (p.revision ?? 1) + 1,
        };
        const encrypted = input.encrypted ?? p.encrypted ?? 0;
        // New content of an encrypted paste stays an envelope unless the edit says otherwise.
        const content = input.content;
        // Turning encryption on or off changes what the content is: the new content must come with it.
        if (content === undefined && encrypted !== (p.encrypted ?? 0)) throw new PasteError('encryption_needs_content');
        if (
          input.encrypted === undefined &&
          encrypted === 1 &&
          content !== undefined &&
          envelopeProblem(content) !== null
        )
          throw new PasteError('envelope_required');
        // Only an encrypted paste has the flag (paste.ts), so other pastes keep one shape.
        if (encrypted === 1 || next.encrypted !== undefined) next.encrypted = encrypted;
        if (input.title !== undefined) next.title = input.title;
        if (input.content !== undefined) next.content_json = encodeContent(input.content);
        if (input.privacy !== undefined) next.privacy = input.privacy;
        // A paste no longer encrypted whose language was left to its readers is detected now.
        const language = input.language ?? (p.language === 'auto' ? 'auto' : undefined);
        if (language !== undefined) {
          next.language = languageFor(language, encrypted, () => input.content ?? contentOf(p));
        }
        if (input.expiry !== 'keep') next.expire_at = expireAt(input.expiry, now);
        if (input.clear_password === 1) next.password = null;
        if (password !== undefined) next.password = password;
        if (changes.add.length > 0 || changes.remove.length > 0) {
          this.#withinFileLimit(encrypted, changes.add);
          const had = filesOf(p);
          for (const name of changes.remove)
            if (!had.some((f) => f.name === name)) throw new PasteError('no_such_file');
          const files = this.#fileList([...had.filter((f) => !changes.remove.includes(f.name)), ...changes.add]);
          if (files === undefined) delete next.files;
          else next.files = opaque(encrypted, files);
        }
        if (next.content_json === NO_CONTENT && next.files === undefined) throw new PasteError('nothing_left');
        // The version replaced is kept, on disk before the new one (README, Revisions); a
        // one-time paste keeps none, and loses any an earlier version of the server kept.
        if (p.burn_after_read === 1) return { result: [p, next] as const, next, dropRevisions: true, quota };
        // The oldest kept ones beyond MAX_REVISIONS go once the new version is written.
        const dropBelow = (p.revision ?? 1) + 1 - this.#maxRevisions;
        return { result: [p, next] as const, next, keep: p, quota, ...(dropBelow > 1 ? { dropBelow } : {}) };
      })
      .catch((err: unknown) => this.#damaged(err, viewer));
    const [before, after] = edited;
    // Files it no longer names, or kept versions dropped, may free bytes (README, Files).
    if (before.files !== undefined || changes.add.length > 0) await this.#released(hash);
    await this.#audited(viewer, actor, 'paste.edit', before, after);
    // A paste made public now belongs on the recent list (listRecent re-checks the rest).
    if (after.privacy === 'public' && after.burn_after_read === 0) this.#recent.add(hash);
    return after;
  }

  /** Deletes a paste in any state (burned and expired ones too), short link included. */
  async delete(hash: string, viewer: Viewer, unchangedSince?: Precondition, actor?: Actor): Promise<void> {
    let ownerId: number | null;
    try {
      const gone = await this.#store.transact(hash, (p) => {
        this.#checkOwner(p, viewer);
        if (unchangedSince !== undefined && !unchangedSince(p)) throw new PasteError('changed');
        return { result: p, next: 'delete', dropRevisions: true };
      });
      ownerId = gone.owner_id;
      await this.#released(hash);
      await this.#audited(viewer, actor, 'paste.delete', gone, null);
    } catch (err) {
      ownerId = await this.#deleteDamaged(hash, viewer, err);
    }
    this.#counts.deleted++;
    this.#recent.remove(hash);
    if (ownerId !== null && ownerId !== ANONYMOUS_OWNER) await this.#owners.remove(ownerId, hash);
  }

  /**
   * Deletes an anonymous paste with the key its maker was given (README, Anonymous pastes).
   * A wrong key, or a paste that has none, is told apart from no paste by nothing.
   */
  async deleteWithKey(hash: string, key: string): Promise<void> {
    await this.#store.transact(hash, (p) => {
      if (p === null || !deleteKeyMatches(key, p.delete_key)) throw new PasteError('not_found');
      return { result: p, next: 'delete', dropRevisions: true };
    });
    await this.#released(hash);
    this.#counts.deleted++;
    this.#recent.remove(hash);
  }

  /**
   * A damaged paste file is deleted by its owner (when the file still says who that is) or
   * an admin, without If-Match (it has no revision); anyone else is told it is not there.
   * Answers its owner's id, when known.
   */
  async #deleteDamaged(hash: string, viewer: Viewer, err: unknown): Promise<number | null> {
    if (!(err instanceof CorruptPaste)) throw err;
    if (!viewer.isAdmin && viewer.userId !== err.ownerId) this.#damaged(err, viewer);
    const removed = await this.#store.removeDamaged(hash);
    if (removed === null) throw new PasteError('changed');
    return removed.ownerId;
  }

  #checkOwner(p: Paste | null, viewer: Viewer): asserts p is Paste {
    if (p === null || !canSee(viewer, p)) throw new PasteError('not_found');
    if (!owns(viewer, p)) throw new PasteError('not_owner');
  }
}
