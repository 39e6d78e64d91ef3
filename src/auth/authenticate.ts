import { Passwords, type PasswordHash } from '../crypto/passwords.ts';
import type { Budget, FailureBudget, Outcome } from '../ratelimit/failure-budget.ts';
import { type Maybe, whenReady } from '../ratelimit/limiter.ts';
import type { TokenRecord, User } from './records.ts';
import type { AccountRecords } from './accounts.ts';
import { PASSWORD_MAX_CHARS, USER_NAME_MAX_CHARS } from './accounts.ts';
import { AuthError } from './errors.ts';
import { sameSecret, secretBytes, tokenIdOf, tokenMatches } from './tokens.ts';
import type { Principal } from './viewer.ts';

/** Failed logins allowed per client and account per minute (README, Web pages). */
export const LOGIN_USER_LIMIT_PER_MINUTE = 10;

export interface AuthenticatorOptions {
  accounts: Pick<AccountRecords, 'token' | 'user' | 'userByName' | 'fresh' | 'recheck'> & {
    knownTokenId?(id: string): boolean;
  };
  budget: FailureBudget;
  /** Failed authentications allowed per client per minute (AUTH_FAIL_LIMIT_PER_MINUTE; 0: no limit). */
  failLimitPerMinute: number;
  /** Records a token's use ("last used", and from which address). */
  touch: (tokenId: string, client: string) => void;
  /**
   * The rate-limit key part for a client's attempts at one typed user name: a keyed hash, as
   * the buckets are saved to disk and a password typed into the name box must not land
   * there in clear, nor be cheap to test guesses against.
   */
  loginKey: (client: string, name: string) => string;
  /** Told of each failed authentication, refused ones included (README, Metrics). */
  failed?: (kind: 'token' | 'login') => void;
  /** The clock tokens expire by. */
  now?: () => number;
  /** Hashes and checks web passwords (the process's shared gate by default). */
  passwords?: Passwords;
}

/** Who presents a credential: their address, and the key their per-IP budgets are kept under (http/client-ip.ts). */
export interface Caller {
  ip: string;
  clientKey: string;
}

export type LoginOutcome =
  | { user: User }
  | { wrong: true }
  | { disabled: true }
  | { refused: { retryAfterSec: number } };

/**
 * Checks credentials: API tokens and web logins. Failures spend budgets, through the one
 * failure-budget rule (ratelimit/failure-budget.ts); successes cost nothing.
 */
export class Authenticator {
  /** A hash to check unknown users' passwords against, so time does not tell which names exist. */
  #dummy: Promise<PasswordHash> | null = null;
  /** The secret that last matched on each connection, with its token's record (see #record). */
  readonly #verified = new WeakMap<object, { secret: Buffer; record: TokenRecord }>();

  readonly #passwords: Passwords;

  constructor(private readonly o: AuthenticatorOptions) {
    this.#passwords = o.passwords ?? new Passwords();
  }

  /**
   * Resolves once the accounts are current enough to judge `secret`: fresh, and when its id
   * is one the copy has never held, checked against the store as well, so a token just made
   * by the CLI or another instance authenticates on the next request even when the notice of
   * it is still on its way (auth/account-index.ts, `recheck`). A made-up id costs at most
   * one version check per turn of the event loop, shared by every request of that turn.
   */
  async current(secret: string | null): Promise<void> {
    await this.o.accounts.fresh();
    const id = secret === null ? null : tokenIdOf(secret);
    if (id !== null && this.o.accounts.knownTokenId?.(id) === false) await this.o.accounts.recheck();
  }

  /**
   * The caller behind a presented API token secret, against the accounts as they are now
   * (the caller awaits `current(secret)` first). Failures spend the client's failed-auth budget;
   * once it is spent every attempt from the client gets 429, a valid token included, so a
   * guesser learns nothing from the answers until the budget refills. `connection` (the
   * request's socket) remembers the secret that last matched on it (see #record). Answers
   * at once when the budgets are in memory, a promise when they are in the database.
   */
  token(secret: string | null, caller: Caller, connection?: object): Maybe<Principal> {
    const budgets: Budget[] = [{ key: `authfail:${caller.clientKey}`, limitPerMinute: this.o.failLimitPerMinute }];
    // An expired token is a failed attempt like a revoked one: it spends the client's budget.
    const outcome = this.o.budget.attemptNow(
      budgets,
      () => this.#principal(secret, connection),
      (p) => p === null || 'expired' in p || 'disabled' in p,
    );
    return whenReady(outcome, (o) => this.#answer(o, secret, caller));
  }

  /** The principal of a token `attemptNow` let through, or the refusal, thrown. */
  #answer(
    outcome: Outcome<Principal | { expired: number } | { disabled: true } | null>,
    secret: string | null,
    caller: Caller,
  ): Principal {
    if ('refused' in outcome || outcome.value === null) this.o.failed?.('token');
    if ('refused' in outcome) {
      throw new AuthError(
        'too_many_failures',
        'Too many failed authentication attempts from this address; try again later',
        {
          perMinute: outcome.refused.limitPerMinute,
          retryAfterSec: Math.max(1, outcome.refused.retryAfterSec),
        },
      );
    }
    if (outcome.value === null) {
      throw secret === null || secret === ''
        ? new AuthError('token_required', 'API token required')
        : new AuthError('token_invalid', 'Invalid or revoked API token', undefined, this.#knownId(secret));
    }
    if ('expired' in outcome.value) {
      throw new AuthError(
        'token_expired',
        'This API token expired on ' +
          `${new Date(outcome.value.expired).toISOString().slice(0, 16).replace('T', ' ')} UTC; create a new one`,
        undefined,
        this.#knownId(secret),
      );
    }
    if ('disabled' in outcome.value) {
      throw new AuthError(
        'account_disabled',
        "This API token's account is disabled; ask an admin",
        undefined,
        this.#knownId(secret),
      );
    }
    this.o.touch(outcome.value.tokenId, caller.ip);
    return outcome.value;
  }

  /** A refused secret's id for the log, when that id is (or was) one of ours; a made-up one names none. */
  #knownId(secret: string | null): string | undefined {
    const id = secret === null ? null : tokenIdOf(secret);
    return id !== null && this.o.accounts.knownTokenId?.(id) === true ? id : undefined;
  }

  /** The token's principal, null for no such token, or when it expired (its secret being right). */
  #principal(
    secret: string | null,
    connection: object | undefined,
  ): Principal | { expired: number } | { disabled: true } | null {
    const record = this.#record(secret, connection);
    const user = record === undefined ? undefined : this.o.accounts.user(record.user_id);
    if (record === undefined || user === undefined) return null;
    if (user.disabled === true) return { disabled: true };
    const expires = record.expires_at ?? null;
    if (expires !== null && (this.o.now ?? Date.now)() >= expires) return { expired: expires };
    return {
      tokenId: record.id,
      userId: user.id,
      scopes: record.scopes,
      rateLimit: record.rate_limit_per_minute,
      maxPasteBytes: record.max_paste_bytes ?? null,
      privacies: record.privacies ?? null,
    };
  }

  /**
   * The token record a presented secret is for, if any. A connection remembers the last
   * secret that matched on it, with its record: the same secret again on that connection,
   * while that record is still the accounts' current one, is not hashed again (any change
   * to the accounts file, a revocation included, makes every record anew, so a change counts
   * at once). The secret is kept with the connection, never in a table by secret, so it
   * lives no longer than the connection that sent it, and is compared in constant time.
   */
  #record(secret: string | null, connection: object | undefined): TokenRecord | undefined {
    if (secret === null) return undefined;
    // A request whose socket is gone (null at run time, whatever its type says) has no connection to remember by.
    const known = connection ? this.#verified.get(connection) : undefined;
    if (
      known !== undefined &&
      sameSecret(secret, known.secret) &&
      this.o.accounts.token(known.record.id) === known.record
    )
      return known.record;
    const id = tokenIdOf(secret);
    const record = id === null ? undefined : this.o.accounts.token(id);
    if (record === undefined || !tokenMatches(secret, record.hash)) return undefined;
    const bytes = connection ? secretBytes(secret) : null;
    if (connection && bytes !== null) this.#verified.set(connection, { secret: bytes, record });
    return record;
  }

  /**
   * A web login. Limited per client (AUTH_FAIL_LIMIT_PER_MINUTE) and per client and account
   * together (LOGIN_USER_LIMIT_PER_MINUTE), so guessing from one address stops soon, and no
   * one can lock an account's owner out from somewhere else. `client` is the caller's
   * budget key (Caller.clientKey).
   */
  async login(name: string, password: string, client: string): Promise<LoginOutcome> {
    // No account has such a name: refuse before any hashing or bucket.
    if (name === '' || name.length > USER_NAME_MAX_CHARS || password.length > PASSWORD_MAX_CHARS)
      return { wrong: true };
    const budgets: Budget[] = [
      { key: `login-ip:${client}`, limitPerMinute: this.o.failLimitPerMinute },
      { key: `login-user:${this.o.loginKey(client, name.toLowerCase())}`, limitPerMinute: LOGIN_USER_LIMIT_PER_MINUTE },
    ];
    const outcome = await this.o.budget.attempt(
      budgets,
      () => this.#verify(name, password),
      (u) => u === null,
    );
    if ('refused' in outcome || outcome.value === null) this.o.failed?.('login');
    if ('refused' in outcome) return { refused: { retryAfterSec: outcome.refused.retryAfterSec } };
    if (outcome.value === null) return { wrong: true };
    // Told only to someone who knows the password: a disabled account is not a secret to them.
    return outcome.value.disabled === true ? { disabled: true } : { user: outcome.value };
  }

  /** The user these credentials belong to, or null; an unknown name still costs one scrypt. */
  async #verify(name: string, password: string): Promise<User | null> {
    await this.o.accounts.fresh();
    let user = this.o.accounts.userByName(name);
    // A user just added elsewhere may not have been heard of yet (see `current`).
    if (user === undefined) {
      await this.o.accounts.recheck();
      user = this.o.accounts.userByName(name);
    }
    if (user === undefined || user.password === null) {
      await this.#passwords.verify(password, await this.#dummyHash());
      return null;
    }
    return (await this.#passwords.verify(password, user.password, `user "${user.name}"`)) ? user : null;
  }

  /** The dummy hash, made once; a refused attempt (the gate was full) is tried again next time. */
  #dummyHash(): Promise<PasswordHash> {
    if (this.#dummy === null) {
      this.#dummy = this.#passwords.hash('not a real password');
      this.#dummy.catch(() => (this.#dummy = null));
    }
    return this.#dummy;
  }
}
