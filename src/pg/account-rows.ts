import type { Sql, TransactionSql } from 'postgres';
import type { AccountsDoc, Scope, TokenRecord, User } from '../auth/records.ts';
import type { Privacy } from '../paste/paste.ts';

/**
 * The accounts document (auth/records.ts) as rows of `users`, `tokens`, `revoked_tokens`
 * and `accounts_state` (migrations/001-initial.sql): read whole, and written back as the
 * rows one change touched. Times are epoch ms in the document, timestamptz in the rows.
 */

type Query = Sql | TransactionSql;
type Row = Record<string, unknown>;

/** Rows per statement when many change at once (an import): far below the 65,535 bound parameters. */
const CHUNK = 1_000;

const ms = (d: unknown): number => (d as Date).getTime();
const msOrNull = (d: unknown): number | null => (d === null ? null : ms(d));
const date = (n: number | null | undefined): Date | null => (n === null || n === undefined ? null : new Date(n));

/** A user as the accounts make it: `password_temporary` appears only when true, as in the file. */
const userFrom = (r: Row): User => {
  const u: User = {
    id: r['id'] as number,
    name: r['name'] as string,
    role: r['role'] as User['role'],
    password: r['password'] as string | null,
    created_at: ms(r['created_at']),
    disabled: r['disabled'] as boolean,
    last_login_at: msOrNull(r['last_login_at']),
  };
  if (r['password_temporary'] === true) u.password_temporary = true;
  if (r['oidc_subject'] !== null) {
    u.oidc_issuer = r['oidc_issuer'] as string;
    u.oidc_subject = r['oidc_subject'] as string;
  }
  return u;
};

/** A token as createToken makes it: the optional limits appear only once set. */
const tokenFrom = (r: Row): TokenRecord => {
  const t: TokenRecord = {
    id: r['id'] as string,
    user_id: r['user_id'] as number,
    label: r['label'] as string,
    scopes: r['scopes'] as Scope[],
    rate_limit_per_minute: r['rate_limit_per_minute'] as number,
    hash: r['hash'] as string,
    created_at: ms(r['created_at']),
    expires_at: msOrNull(r['expires_at']),
  };
  if (r['max_paste_bytes'] !== null) t.max_paste_bytes = r['max_paste_bytes'] as number;
  if (r['privacies'] !== null) t.privacies = r['privacies'] as Privacy[];
  return t;
};

const userRow = (u: User) => ({
  id: u.id,
  name: u.name,
  role: u.role,
  password: u.password ?? null,
  created_at: new Date(u.created_at),
  disabled: u.disabled === true,
  last_login_at: date(u.last_login_at),
  password_temporary: u.password_temporary === true,
  oidc_issuer: u.oidc_issuer ?? null,
  oidc_subject: u.oidc_subject ?? null,
});

const tokenRow = (t: TokenRecord) => ({
  id: t.id,
  user_id: t.user_id,
  label: t.label,
  scopes: t.scopes,
  rate_limit_per_minute: t.rate_limit_per_minute,
  hash: t.hash,
  created_at: new Date(t.created_at),
  expires_at: date(t.expires_at),
  max_paste_bytes: t.max_paste_bytes ?? null,
  privacies: t.privacies ?? null,
});

/** The document and its version. Read in one snapshot, or under the accounts lock. */
export async function readAccounts(tx: Query): Promise<{ doc: AccountsDoc; version: number }> {
  const [state, users, tokens, revoked] = await Promise.all([
    tx`select version, next_user_id from accounts_state`,
    tx`select id, name, role, password, created_at, disabled, last_login_at, password_temporary,
       oidc_issuer, oidc_subject
       from users order by id`,
    tx`select id, user_id, label, scopes, rate_limit_per_minute, hash, created_at, expires_at, max_paste_bytes,
       privacies
       from tokens order by seq`,
    tx`select id from revoked_tokens order by seq`,
  ]);
  const row = state[0];
  if (row === undefined)
    throw new Error('the accounts_state row is missing: the schema was not migrated, or was edited');
  return {
    version: Number(row['version']),
    doc: {
      version: 1,
      next_user_id: row['next_user_id'] as number,
      users: users.map(userFrom),
      tokens: tokens.map(tokenFrom),
      revoked_tokens: revoked.map((r) => r['id'] as string),
    },
  };
}

/** Whether two records would be stored alike (absent and null are the same column). */
const same = <T>(a: T | undefined, b: T, row: (x: T) => object): boolean =>
  a !== undefined && JSON.stringify(row(a)) === JSON.stringify(row(b));

/** The records of `after` that are new or differ from `before`, and the keys `after` no longer holds. */
function changes<K, T>(before: readonly T[], after: readonly T[], key: (x: T) => K, row: (x: T) => object) {
  const old = new Map(before.map((x) => [key(x), x]));
  const kept = new Set(after.map(key));
  return {
    upserts: after.filter((x) => !same(old.get(key(x)), x, row)),
    gone: [...old.keys()].filter((k) => !kept.has(k)),
  };
}

const chunks = <T>(xs: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

/**
 * Writes what `after` changed since `before` (the rows as they are, under the accounts lock):
 * removals first (a token before its user, so the references hold), then the new and
 * changed users, tokens and revoked ids in the document's order. False when nothing changed.
 */
export async function writeChanges(tx: TransactionSql, before: AccountsDoc, after: AccountsDoc): Promise<boolean> {
  const users = changes(before.users, after.users, (u) => u.id, userRow);
  const tokens = changes(before.tokens, after.tokens, (t) => t.id, tokenRow);
  const oldRevoked = new Set(before.revoked_tokens ?? []);
  const newRevoked = [...new Set(after.revoked_tokens ?? [])];
  const revokedAdded = newRevoked.filter((id) => !oldRevoked.has(id));
  const keptRevoked = new Set(newRevoked);
  const revokedGone = [...oldRevoked].filter((id) => !keptRevoked.has(id));
  const changed =
    users.upserts.length + users.gone.length + tokens.upserts.length + tokens.gone.length > 0 ||
    revokedAdded.length + revokedGone.length > 0 ||
    before.next_user_id !== after.next_user_id;
  if (!changed) return false;

  for (const ids of chunks(tokens.gone)) await tx`delete from tokens where id in ${tx(ids)}`;
  for (const ids of chunks(users.gone)) {
    // A user's sessions go with it: a session of nobody must not outlive its user.
    await tx`delete from sessions where user_id in ${tx(ids)}`;
    await tx`delete from users where id in ${tx(ids)}`;
  }
  for (const ids of chunks(revokedGone)) await tx`delete from revoked_tokens where id in ${tx(ids)}`;
  for (const part of chunks(users.upserts.map(userRow))) {
    await tx`insert into users ${tx(part)} on conflict (id) do update set
      name = excluded.name, role = excluded.role, password = excluded.password, created_at = excluded.created_at,
      disabled = excluded.disabled, last_login_at = excluded.last_login_at,
      password_temporary = excluded.password_temporary, oidc_issuer = excluded.oidc_issuer,
      oidc_subject = excluded.oidc_subject`;
  }
  for (const part of chunks(tokens.upserts.map(tokenRow))) {
    await tx`insert into tokens ${tx(part)} on conflict (id) do update set
      user_id = excluded.user_id, label = excluded.label, scopes = excluded.scopes,
      rate_limit_per_minute = excluded.rate_limit_per_minute, hash = excluded.hash, created_at = excluded.created_at,
      expires_at = excluded.expires_at, max_paste_bytes = excluded.max_paste_bytes, privacies = excluded.privacies`;
  }
  // In the list's order, so seq orders them as the list does.
  for (const ids of chunks(revokedAdded))
    await tx`insert into revoked_tokens (id)
      select id from unnest(${ids}::text[]) with ordinality as r(id, n) order by n`;
  return true;
}
