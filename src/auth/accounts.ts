import { hashPassword, type PasswordHash } from '../crypto/passwords.ts';
import { RandomIds } from '../crypto/random.ts';
import type { Actor, AuditRecord } from '../log/audit.ts';
import { findUserByName, SCOPES, type AccountsDoc, type Scope, type TokenRecord, type User } from './records.ts';
import type { Privacy } from '../paste/paste.ts';
import { AccountError } from './errors.ts';
import { hashToken, newTokenSecret } from './tokens.ts';

/** 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit (never a flag). */
export const USER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
/** USER_NAME_RE's bound: a longer login name is refused before it costs anything. */
export const USER_NAME_MAX_CHARS = 32;
/** The minimum for a password set on the web or with the CLI. */
export const PASSWORD_MIN_CHARS = 8;
export const PASSWORD_MAX_CHARS = 1024;
export const TOKEN_LABEL_MAX = 100;
/** Keeps the shared accounts file small; nobody needs more live tokens than this. */
export const TOKENS_PER_USER_MAX = 50;
/** The bound for a token's rate (nine digits). */
export const RATE_MAX = 999_999_999;

/**
 * What the accounts service needs of the file that holds users and tokens (the server's and
 * the CLI's shared `accounts.json`, store/accounts.ts): reads of the copy in memory, a check
 * that the copy is current, and a read-modify-write under the file's lock.
 */
export interface AccountRecords {
  fresh(): Promise<void>;
  /** `fresh()`, checking the store even when no change was heard of (auth/account-index.ts). */
  recheck(): Promise<void>;
  readonly users: readonly User[];
  readonly tokens: readonly TokenRecord[];
  user(id: number): User | undefined;
  userByName(name: string): User | undefined;
  token(id: string): TokenRecord | undefined;
  mutate<T>(fn: (doc: AccountsDoc) => T): Promise<T>;
}

export const isAdmin = (u: User): boolean => u.role === 'admin';

/** The scopes a user's tokens may carry: `admin` only for users with the admin role. */
export const allowedScopes = (user: User): readonly Scope[] =>
  isAdmin(user) ? SCOPES : SCOPES.filter((s) => s !== 'admin');

/** What is wrong with a requested user name and password, or an empty list. */
export function checkCredentials(name: string, password: string): string[] {
  const problems: string[] = [];
  if (!USER_NAME_RE.test(name))
    problems.push('The user name must be 1 to 32 letters, digits, ".", "_" or "-", starting with a letter or digit.');
  problems.push(...checkPassword(password));
  return problems;
}

export function checkPassword(password: string): string[] {
  const problems: string[] = [];
  if ([...password].length < PASSWORD_MIN_CHARS)
    problems.push(`The password must be at least ${PASSWORD_MIN_CHARS} characters.`);
  if (password.length > PASSWORD_MAX_CHARS)
    problems.push(`The password must be at most ${PASSWORD_MAX_CHARS} characters.`);
  return problems;
}

/** What an admin may set on a token besides its scopes and rate; undefined leaves it as it is. */
export interface TokenLimits {
  maxPasteBytes?: number | null;
  privacies?: Privacy[] | null;
  expiresAt?: number | null;
}

export interface TokenSettings {
  label: string;
  scopes: Scope[];
  rate: number;
  /** When the token stops working (epoch ms), or null for never. */
  expiresAt?: number | null;
}

/** Where admin actions are recorded (log/audit.ts). */
export interface AuditSink {
  record(actor: Actor, r: AuditRecord): Promise<void>;
}

/** A user as the audit log shows it: never the password hash. */
const userFacts = (u: User): Record<string, unknown> => ({
  id: u.id,
  name: u.name,
  role: u.role,
  disabled: u.disabled === true,
});

/** A token as the audit log shows it: never its hash. */
const tokenFacts = (t: TokenRecord): Record<string, unknown> => ({
  id: t.id,
  user_id: t.user_id,
  label: t.label,
  scopes: t.scopes,
  rate_limit_per_minute: t.rate_limit_per_minute,
  expires_at: t.expires_at ?? null,
  max_paste_bytes: t.max_paste_bytes ?? null,
  privacies: t.privacies ?? null,
});

/** Admins who can still act: the last of them may be neither disabled nor demoted. */
const enabledAdmins = (doc: AccountsDoc): User[] => doc.users.filter((u) => isAdmin(u) && u.disabled !== true);

/**
 * Users and API tokens: the one owner of their rules, for the web pages, the admin area
 * and the CLI alike. Every change is one locked read-modify-write of the accounts file, so
 * the rules are checked against the file as it is, whoever else writes it. A change made
 * with an `actor` is an admin action: it is appended to the audit log once it is done.
 */
export class Accounts {
  readonly #ids = new RandomIds();

  constructor(
    private readonly records: AccountRecords,
    private readonly now: () => number,
    /** Where admin actions go; the CLI records its own (export, import, backup) there too. */
    readonly audit: AuditSink | null = null,
  ) {}

  async #audited<T>(
    actor: Actor | undefined,
    change: (doc: AccountsDoc) => { result: T; record: AuditRecord },
  ): Promise<T> {
    const { result, record } = await this.records.mutate(change);
    if (actor !== undefined && this.audit !== null) await this.audit.record(actor, record);
    return result;
  }

  #find(doc: AccountsDoc, name: string): User {
    const u = findUserByName(doc.users, name);
    if (u === undefined) throw new AccountError('no_such_user', `no user named "${name}"`);
    return u;
  }

  /** Resolves once the copy in memory reflects every write finished before this call. */
  fresh(): Promise<void> {
    return this.records.fresh();
  }
  recheck(): Promise<void> {
    return this.records.recheck();
  }
  get users(): readonly User[] {
    return this.records.users;
  }
  get tokens(): readonly TokenRecord[] {
    return this.records.tokens;
  }
  user(id: number): User | undefined {
    return this.records.user(id);
  }
  userByName(name: string): User | undefined {
    return this.records.userByName(name);
  }
  token(id: string): TokenRecord | undefined {
    return this.records.token(id);
  }

  /**
   * Adds a user as an operator does: any role, with a password hash or none (CLI `user add`, the
   * Users page). A `temporary` password must be changed at the first web sign-in.
   */
  addUser(
    name: string,
    role: User['role'],
    password: PasswordHash | null,
    actor?: Actor,
    opts: { temporary?: boolean } = {},
  ): Promise<User> {
    if (!USER_NAME_RE.test(name))
      throw new AccountError(
        'invalid_name',
        'user name must be 1-32 letters, digits, ".", "_" or "-", starting with a letter or digit',
      );
    return this.#audited(actor, (doc) => {
      if (findUserByName(doc.users, name) !== undefined)
        throw new AccountError('name_taken', `user "${name}" already exists`);
      const u: User = {
        id: doc.next_user_id++,
        name,
        role,
        password,
        created_at: this.now(),
        disabled: false,
        last_login_at: null,
      };
      if (opts.temporary === true && password !== null) u.password_temporary = true;
      doc.users.push(u);
      return { result: u, record: { action: 'user.add', target: `user:${u.name}`, before: null, after: userFacts(u) } };
    });
  }

  /**
   * Disables or enables a user (README, Users). A disabled user's tokens answer 401 and its
   * sessions end on their next request; its pastes stay. The last enabled admin cannot be disabled.
   */
  setDisabled(name: string, disabled: boolean, actor?: Actor): Promise<User> {
    return this.#audited(actor, (doc) => {
      const u = this.#find(doc, name);
      const before = userFacts(u);
      if (disabled && u.disabled !== true && isAdmin(u) && enabledAdmins(doc).length <= 1) {
        throw new AccountError('last_admin', `"${u.name}" is the only enabled admin; make another user admin first`);
      }
      u.disabled = disabled;
      return {
        result: u,
        record: {
          action: disabled ? 'user.disable' : 'user.enable',
          target: `user:${u.name}`,
          before,
          after: userFacts(u),
        },
      };
    });
  }

  /**
   * Makes a user an admin or a plain user. The last enabled admin cannot be demoted; a demoted
   * user's tokens lose the admin scope.
   */
  setRole(name: string, role: User['role'], actor?: Actor): Promise<User> {
    return this.#audited(actor, (doc) => {
      const u = this.#find(doc, name);
      const before = userFacts(u);
      if (role === 'user' && isAdmin(u) && u.disabled !== true && enabledAdmins(doc).length <= 1) {
        throw new AccountError('last_admin', `"${u.name}" is the only enabled admin; make another user admin first`);
      }
      u.role = role;
      if (role === 'user')
        for (const t of doc.tokens) if (t.user_id === u.id) t.scopes = t.scopes.filter((sc) => sc !== 'admin');
      return {
        result: u,
        record: {
          action: role === 'admin' ? 'user.admin' : 'user.unadmin',
          target: `user:${u.name}`,
          before,
          after: userFacts(u),
        },
      };
    });
  }

  /** The account linked to the OpenID provider's user `subject` at `issuer` (README, Sign-in with OpenID Connect). */
  userBySubject(issuer: string, subject: string): User | undefined {
    return this.records.users.find((u) => u.oidc_subject === subject && u.oidc_issuer === issuer);
  }

  /**
   * Links a user to the OpenID provider's user `subject` at `issuer`, at its first sign-in
   * there; checked under the lock, so two first sign-ins cannot link one account to two.
   * Refused (`linked_elsewhere`) when the account is linked to another, or the subject to another account.
   */
  linkSubject(userId: number, issuer: string, subject: string, actor: Actor): Promise<User> {
    return this.#audited(actor, (doc) => {
      const u = doc.users.find((x) => x.id === userId);
      if (u === undefined) throw new AccountError('no_such_user', 'That account no longer exists.');
      const holder = doc.users.find((x) => x.oidc_subject === subject && x.oidc_issuer === issuer);
      const linked = u.oidc_subject !== undefined && (u.oidc_subject !== subject || u.oidc_issuer !== issuer);
      if (linked || (holder !== undefined && holder.id !== u.id))
        throw new AccountError('linked_elsewhere', `"${u.name}" is linked to another user of the sign-in provider`);
      u.oidc_issuer = issuer;
      u.oidc_subject = subject;
      return {
        result: u,
        record: { action: 'user.oidc_link', target: `user:${u.name}`, before: null, after: { issuer, subject } },
      };
    });
  }

  /** Notes a successful web login, for the Users page. */
  async recordLogin(userId: number): Promise<void> {
    await this.records.mutate((doc) => {
      const u = doc.users.find((x) => x.id === userId);
      if (u !== undefined) u.last_login_at = this.now();
    });
  }

  /**
   * Registers an account from the web. The very first user becomes admin; after that
   * registration is open only when the operator allows it. Both are decided inside the
   * accounts lock, so two simultaneous first registrations cannot both become admin.
   */
  async register(name: string, password: string, open: boolean): Promise<User> {
    const hash = await hashPassword(password);
    return this.records.mutate((doc) => {
      const first = doc.users.length === 0;
      if (!first && !open)
        throw new AccountError(
          'registration_closed',
          'Registration is closed. Ask an admin to create an account for you.',
        );
      if (findUserByName(doc.users, name) !== undefined)
        throw new AccountError('name_taken', 'That user name is taken.');
      // Registering logs the new user in: that is their first login.
      const user: User = {
        id: doc.next_user_id++,
        name,
        role: first ? 'admin' : 'user',
        password: hash,
        created_at: this.now(),
        disabled: false,
        last_login_at: this.now(),
      };
      doc.users.push(user);
      return user;
    });
  }

  /**
   * Sets a user's web password (CLI `user passwd`, an admin's reset on the Users page). One the
   * operator hands out as `temporary` must be changed at the next web sign-in; any other clears that.
   */
  async setPassword(
    name: string,
    password: PasswordHash,
    actor?: Actor,
    opts: { temporary?: boolean } = {},
  ): Promise<User> {
    return this.#audited(actor, (doc) => {
      const u = this.#find(doc, name);
      const before = { temporary: u.password_temporary === true };
      u.password = password;
      if (opts.temporary === true) u.password_temporary = true;
      else delete u.password_temporary;
      return {
        result: u,
        record: {
          action: 'user.passwd',
          target: `user:${u.name}`,
          before,
          after: { temporary: opts.temporary === true },
        },
      };
    });
  }

  /**
   * A user's change of their own password on the web, once the current one was checked: it
   * is no longer temporary. Audited with the user as the actor; the hash never is.
   */
  async changeOwnPassword(userId: number, password: PasswordHash, actor: Actor): Promise<void> {
    await this.#audited(actor, (doc) => {
      const u = doc.users.find((x) => x.id === userId);
      if (u === undefined) throw new AccountError('no_such_user', 'That account no longer exists.');
      const before = { temporary: u.password_temporary === true };
      u.password = password;
      delete u.password_temporary;
      return {
        result: undefined,
        record: { action: 'user.password_change', target: `user:${u.name}`, before, after: { temporary: false } },
      };
    });
  }

  /**
   * Creates a token for a user and returns its secret, which exists only in this return
   * value: the file keeps its SHA-256 (README, Command line).
   */
  async createToken(userId: number, s: TokenSettings, actor?: Actor): Promise<{ record: TokenRecord; secret: string }> {
    const { id, secret } = newTokenSecret(this.#ids);
    const record = await this.#audited(actor, (doc) => {
      const user = doc.users.find((u) => u.id === userId);
      if (user === undefined) throw new AccountError('no_such_user', 'That account no longer exists.');
      if (s.scopes.some((sc) => !allowedScopes(user).includes(sc)))
        throw new AccountError('scope_not_allowed', 'Only admins may hold the admin scope.');
      if (doc.tokens.filter((t) => t.user_id === userId).length >= TOKENS_PER_USER_MAX) {
        throw new AccountError('too_many_tokens', `You already have ${TOKENS_PER_USER_MAX} tokens; revoke one first.`);
      }
      const r: TokenRecord = {
        id,
        user_id: userId,
        label: s.label,
        scopes: s.scopes,
        rate_limit_per_minute: s.rate,
        hash: hashToken(secret),
        created_at: this.now(),
        expires_at: s.expiresAt ?? null,
      };
      doc.tokens.push(r);
      return {
        result: r,
        record: {
          action: 'token.create',
          target: `token:${r.id}`,
          before: null,
          after: { ...tokenFacts(r), user: user.name },
        },
      };
    });
    return { record, secret };
  }

  /** Revokes a token; with `ownerId`, only one of that user's own (someone else's looks missing). */
  async revokeToken(tokenId: string, ownerId?: number, actor?: Actor): Promise<void> {
    await this.#audited(actor, (doc) => {
      const i = doc.tokens.findIndex((t) => t.id === tokenId && (ownerId === undefined || t.user_id === ownerId));
      if (i === -1) throw new AccountError('no_such_token', 'There is no such token.');
      const [gone] = doc.tokens.splice(i, 1) as [TokenRecord];
      doc.revoked_tokens = [...(doc.revoked_tokens ?? []), tokenId].slice(-1_000);
      return {
        result: undefined,
        record: { action: 'token.revoke', target: `token:${tokenId}`, before: tokenFacts(gone), after: null },
      };
    });
  }

  /** An admin's change of a token's scopes and rate limit (the admin area's API Tokens). */
  updateToken(
    tokenId: string,
    scopes: Scope[],
    rate: number,
    limits: TokenLimits = {},
    actor?: Actor,
  ): Promise<TokenRecord> {
    return this.#audited(actor, (doc) => {
      const t = doc.tokens.find((x) => x.id === tokenId);
      if (t === undefined) throw new AccountError('no_such_token', 'There is no such token.');
      const owner = doc.users.find((u) => u.id === t.user_id);
      if (owner === undefined || scopes.some((sc) => !allowedScopes(owner).includes(sc))) {
        throw new AccountError('scope_not_allowed', 'The admin scope can only be given to a token of an admin user.');
      }
      const before = tokenFacts(t);
      t.scopes = scopes;
      t.rate_limit_per_minute = rate;
      if (limits.maxPasteBytes !== undefined) t.max_paste_bytes = limits.maxPasteBytes;
      if (limits.privacies !== undefined) t.privacies = limits.privacies;
      if (limits.expiresAt !== undefined) t.expires_at = limits.expiresAt;
      return { result: t, record: { action: 'token.update', target: `token:${t.id}`, before, after: tokenFacts(t) } };
    });
  }
}
