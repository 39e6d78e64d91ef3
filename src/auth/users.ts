import { HttpError } from '../http/errors.ts';
import { findUserByName, type AccountStore, type User } from '../store/accounts.ts';
import { hashPassword, verifyPassword, type PasswordHash } from './passwords.ts';

/** 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit (never a flag). */
export const USER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
/** USER_NAME_RE's bound: a longer login name is refused before it costs anything. */
export const USER_NAME_MAX_CHARS = 32;
/** The CLI's minimum, so a password set either way obeys the same rule. */
export const PASSWORD_MIN_CHARS = 8;
export const PASSWORD_MAX_CHARS = 1024;

export const isAdmin = (u: User): boolean => u.role === 'admin';

/** What is wrong with a requested user name and password, or an empty list. */
export function checkCredentials(name: string, password: string): string[] {
  const problems: string[] = [];
  if (!USER_NAME_RE.test(name)) problems.push('The user name must be 1 to 32 letters, digits, ".", "_" or "-", starting with a letter or digit.');
  if ([...password].length < PASSWORD_MIN_CHARS) problems.push(`The password must be at least ${PASSWORD_MIN_CHARS} characters.`);
  if (password.length > PASSWORD_MAX_CHARS) problems.push(`The password must be at most ${PASSWORD_MAX_CHARS} characters.`);
  return problems;
}

/**
 * Creates an account. The very first user becomes admin; after that registration is
 * open only when the operator allows it. Both are decided inside the accounts lock, so two
 * simultaneous first registrations cannot both become admin.
 */
export async function registerUser(accounts: AccountStore, name: string, password: string, open: boolean, now: number): Promise<User> {
  const hash = await hashPassword(password);
  return accounts.mutate((doc) => {
    const first = doc.users.length === 0;
    if (!first && !open) throw new HttpError('forbidden', 'Registration is closed. Ask an admin to create an account for you.');
    if (findUserByName(doc.users, name) !== undefined) throw new HttpError('bad_request', 'That user name is taken.');
    const user: User = { id: doc.next_user_id++, name, role: first ? 'admin' : 'user', password: hash, created_at: now };
    doc.users.push(user);
    return user;
  });
}

let dummy: Promise<PasswordHash> | null = null;

/**
 * The user these credentials belong to, or null. An unknown name still costs one scrypt,
 * so response time does not tell which user names exist.
 */
export async function verifyLogin(accounts: AccountStore, name: string, password: string): Promise<User | null> {
  await accounts.fresh();
  const user = accounts.userByName(name);
  if (user === undefined || user.password === null) {
    await verifyPassword(password, await (dummy ??= hashPassword('not a real password')));
    return null;
  }
  return (await verifyPassword(password, user.password)) ? user : null;
}
