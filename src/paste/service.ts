import { hashPassword, verifyPassword } from '../auth/passwords.ts';
import { HttpError, notFound } from '../http/errors.ts';
import type { OwnerIndex } from '../store/owner-index.ts';
import { TOMBSTONE_MS, type PasteStore } from '../store/pastes.ts';
import type { RecentPastes } from '../store/recent.ts';
import type { ViewCounter } from '../store/views.ts';
import { expireAt } from './expiry.ts';
import { detectLanguage } from './language.ts';
import { isExpired, type Paste } from './paste.ts';
import type { CreateInput, EditInput } from './validate.ts';

/**
 * Proof, other than the password itself, that this reader gave the password of this very
 * paste (e.g. the web's signed unlock grant); checked against the paste as it is now.
 */
export type PasswordProof = (p: Paste) => boolean;

/** A read's result: the stored paste object, and its view count including this read. */
export interface Counted {
  paste: Paste;
  viewCount: number;
}

/** Who is asking: a user (through a token or a web session), or nobody. */
export interface Viewer {
  userId: number;
  isAdmin: boolean;
}

const owns = (v: Viewer | null, p: Paste): boolean => v !== null && (v.isAdmin || v.userId === p.owner_id);

/** A private paste that is not yours looks exactly like one that does not exist. */
export const canSee = (v: Viewer | null, p: Paste): boolean => p.privacy !== 'private' || owns(v, p);

export const burnedError = (): HttpError => new HttpError('gone', 'This paste was already burned (it was a one-time view)');
export const expiredError = (): HttpError => new HttpError('gone', 'This paste has expired');

/** The paste operations shared by the API and the web pages. Throws HttpError for refusals. */
export class PasteService {
  constructor(
    private readonly store: PasteStore,
    private readonly views: ViewCounter,
    private readonly owners: OwnerIndex,
    private readonly recent: RecentPastes,
    private readonly now: () => number,
  ) {}

  /** A paste the viewer may see, without counting a view or checking its password. */
  async peek(hash: string, viewer: Viewer | null): Promise<Paste> {
    return this.#visible(await this.#lookup(hash), viewer);
  }

  /** The stored paste, from the cache without a detour through the disk's promises when it is there. */
  #lookup(hash: string): Paste | null | Promise<Paste | null> {
    const cached = this.store.cached(hash);
    return cached !== undefined ? cached : this.store.get(hash);
  }

  #visible(p: Paste | null, viewer: Viewer | null): Paste {
    if (p === null || !canSee(viewer, p)) throw notFound();
    if (isExpired(p, this.now())) throw expiredError();
    if (p.burned) throw burnedError();
    return p;
  }

  /** True when this viewer must supply the paste's password to read it. */
  needsPassword = (p: Paste, viewer: Viewer | null): boolean => p.password !== null && !owns(viewer, p);

  /**
   * A successful read: checks the password, counts the view, and burns a one-time paste
   * in the same step (durably, before the content is returned), so that of any number of
   * concurrent readers exactly one gets it. The returned view_count includes this read.
   * With `consume` false (HEAD) the same checks run but nothing is counted or burned;
   * `passwordOk` may stand in for the password.
   */
  async read(hash: string, viewer: Viewer | null, password: string | undefined, consume = true, passwordOk?: PasswordProof): Promise<Paste> {
    const { paste, viewCount } = await this.readCounted(hash, viewer, password, consume, passwordOk);
    return paste.view_count === viewCount ? paste : { ...paste, view_count: viewCount };
  }

  /**
   * `read`, answering the stored paste object itself (never to be changed) and the view
   * count apart, so callers can reuse what they rendered from that object before.
   * The common read (a cached paste, no password to check, nothing to burn) is answered
   * at once rather than through promises, for which every caller awaits all the same.
   * Refusals always come as a rejected promise, never thrown.
   */
  readCounted(
    hash: string,
    viewer: Viewer | null,
    password: string | undefined,
    consume = true,
    passwordOk?: PasswordProof,
  ): Counted | Promise<Counted> {
    const cached = this.store.cached(hash);
    if (cached === undefined) return this.store.get(hash).then((p) => this.#readFound(hash, p, viewer, password, consume, passwordOk));
    try {
      return this.#readFound(hash, cached, viewer, password, consume, passwordOk);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  #readFound(
    hash: string,
    found: Paste | null,
    viewer: Viewer | null,
    password: string | undefined,
    consume: boolean,
    passwordOk: PasswordProof | undefined,
  ): Counted | Promise<Counted> {
    const p = this.#visible(found, viewer);
    if (this.needsPassword(p, viewer) && passwordOk?.(p) !== true) return this.#unlock(p, password).then(() => this.#count(hash, p, consume));
    return this.#count(hash, p, consume);
  }

  async #unlock(p: Paste, password: string | undefined): Promise<void> {
    if (password === undefined || password === '') throw new HttpError('password_required', 'Password required');
    if (!(await verifyPassword(password, p.password as string))) throw new HttpError('invalid_password', 'Invalid password');
  }

  /** Counts the view, or burns a one-time paste; a HEAD (`consume` false) does neither. */
  #count(hash: string, p: Paste, consume: boolean): Counted | Promise<Counted> {
    // A HEAD asks what a read would answer without being one: no view, no burn.
    if (!consume) return { paste: p, viewCount: p.view_count + this.views.pending(hash) };
    if (p.burn_after_read === 0) return { paste: p, viewCount: p.view_count + this.views.add(hash) };
    return this.store.transact(hash, (cur) => {
      if (cur === null) throw notFound();
      if (cur.burned) throw burnedError();
      const shown = { ...cur, view_count: cur.view_count + this.views.pending(hash) + 1 };
      const now = this.now();
      return {
        result: { paste: shown, viewCount: shown.view_count },
        next: { ...shown, content: '', burned: true, updated_at: now },
        sweepAt: now + TOMBSTONE_MS,
      };
    });
  }

  async create(input: CreateInput, ownerId: number): Promise<Paste> {
    const now = this.now();
    const password = input.password === null ? null : await hashPassword(input.password);
    const paste = await this.store.create(
      (hash) => ({
      v: 1,
      hash,
      title: input.title,
      content: input.content,
      language: input.language === 'auto' ? detectLanguage(input.content) : input.language,
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
      }),
      (p) => this.owners.add(ownerId, p.hash),
    );
    if (paste.privacy === 'public' && paste.burn_after_read === 0) this.recent.add(paste.hash);
    return paste;
  }

  /** The user's own pastes, newest first, that still exist (any state). */
  async listOwned(userId: number, offset: number, limit: number): Promise<{ pastes: Paste[]; total: number }> {
    const hashes = await this.owners.list(userId);
    const pastes: Paste[] = [];
    for (const hash of hashes.slice(offset, offset + limit)) {
      const p = await this.store.get(hash);
      if (p !== null) pastes.push({ ...p, view_count: p.view_count + this.views.pending(hash) });
    }
    return { pastes, total: hashes.length };
  }

  /** Recent public pastes that are still public, readable and unexpired. */
  async listRecent(limit: number): Promise<Paste[]> {
    const out: Paste[] = [];
    for (const hash of this.recent.list()) {
      const p = await this.store.get(hash);
      if (p !== null && p.privacy === 'public' && !p.burned && p.password === null && !isExpired(p, this.now())) out.push(p);
      if (out.length === limit) break;
    }
    return out;
  }

  /** Applies an edit: omitted fields keep their value (CONTRACT §5). */
  async edit(hash: string, input: EditInput, viewer: Viewer): Promise<Paste> {
    const password = input.password === undefined ? undefined : await hashPassword(input.password);
    const edited = await this.store.transact(hash, (p) => {
      const now = this.now();
      this.#checkOwner(p, viewer);
      if (p.burned) throw burnedError();
      if (isExpired(p, now)) throw expiredError();
      const next: Paste = { ...p, updated_at: now };
      if (input.title !== undefined) next.title = input.title;
      if (input.content !== undefined) next.content = input.content;
      if (input.privacy !== undefined) next.privacy = input.privacy;
      if (input.language !== undefined) {
        next.language = input.language === 'auto' ? detectLanguage(next.content) : input.language;
      }
      if (input.expiry !== 'keep') next.expire_at = expireAt(input.expiry, now);
      if (input.clear_password === 1) next.password = null;
      if (password !== undefined) next.password = password;
      return { result: next, next };
    });
    // A paste made public now belongs on the recent list (listRecent re-checks the rest).
    if (edited.privacy === 'public' && edited.burn_after_read === 0) this.recent.add(hash);
    return edited;
  }

  /** Deletes a paste in any state (burned and expired ones too), short link included. */
  async delete(hash: string, viewer: Viewer): Promise<void> {
    const ownerId = await this.store.transact(hash, (p) => {
      this.#checkOwner(p, viewer);
      return { result: p.owner_id, next: 'delete' };
    });
    this.recent.remove(hash);
    await this.owners.remove(ownerId, hash);
  }

  #checkOwner(p: Paste | null, viewer: Viewer): asserts p is Paste {
    if (p === null || !canSee(viewer, p)) throw notFound();
    if (!owns(viewer, p)) throw new HttpError('forbidden', 'Only the owner of this paste (or an admin) may change it');
  }
}
