import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { defaultGateLimits, PasswordGate } from './password-gate.ts';

/** A salted slow hash, `scrypt$N$r$p$salt$key`, salt and key in base64url. Parameters travel with the hash. */
export type PasswordHash = string;

/** scrypt's cost parameters, as a stored hash carries them. */
export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** What this server writes. */
const WRITTEN: ScryptParams = { N: 16_384, r: 8, p: 1 };
const KEY_LEN = 32;

/**
 * The parameters a stored hash may carry (README, Security and durability): what this
 * server writes, up to twice its cost in N or p, so every check stays a bounded computation
 * within scrypt's memory limit below.
 */
export const ACCEPTED = { N: [16_384, 32_768], r: [8], p: [1, 2] } as const;
const MAXMEM = 64 * 1024 * 1024;

const HASH_RE = /^scrypt\$([1-9]\d{0,9})\$([1-9]\d{0,9})\$([1-9]\d{0,9})\$([A-Za-z0-9_-]{22,86})\$([A-Za-z0-9_-]{43})$/;

/** Why a stored hash is refused: not the shape `hashPassword` gives, or parameters outside ACCEPTED. */
export interface HashProblem {
  kind: 'shape' | 'parameters';
  message: string;
}

/** What is wrong with `s` as a stored password hash, or null. Import, restore and every check use it. */
export function passwordHashProblem(s: string): HashProblem | null {
  const m = HASH_RE.exec(s);
  if (m === null)
    return {
      kind: 'shape',
      message: 'not a salted hash scrypt$N$r$p$salt$key (a 16 to 64 byte salt and a 32 byte key, in base64url)',
    };
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const outside: string[] = [];
  if (!(ACCEPTED.N as readonly number[]).includes(n)) outside.push(`N is ${n}, not ${ACCEPTED.N.join(' or ')}`);
  if (!(ACCEPTED.r as readonly number[]).includes(r)) outside.push(`r is ${r}, not ${ACCEPTED.r.join(' or ')}`);
  if (!(ACCEPTED.p as readonly number[]).includes(p)) outside.push(`p is ${p}, not ${ACCEPTED.p.join(' or ')}`);
  if (outside.length === 0) return null;
  return { kind: 'parameters', message: `scrypt parameters this server does not accept: ${outside.join(', ')}` };
}

/** Whether `s` is a stored hash this server accepts (so a password in clear is never taken for one). */
export const isPasswordHash = (s: string): boolean => passwordHashProblem(s) === null;

/** Derives the key; a stand-in in tests. */
export type Derive = (password: string, salt: Buffer, params: ScryptParams) => Promise<Buffer>;

const scryptDerive: Derive = (password, salt, { N, r, p }) =>
  new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LEN, { N, r, p, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });

/** Every password computation of the process waits here: libuv's pool is one per process. */
export const PASSWORD_GATE = new PasswordGate(defaultGateLimits(process.env['UV_THREADPOOL_SIZE']));

export interface PasswordsOptions {
  gate?: PasswordGate;
  derive?: Derive;
  /** Told once per subject whose stored hash is refused (the server's log). */
  refused?: (subject: string, problem: string) => void;
}

/**
 * Hashes and checks passwords, each computation through the gate (so a full queue rejects
 * with PasswordChecksBusy). A stored hash outside ACCEPTED verifies nothing, at once.
 */
export class Passwords {
  readonly #gate: PasswordGate;
  readonly #derive: Derive;
  readonly #refused: ((subject: string, problem: string) => void) | undefined;
  /** Subjects already reported, so a refused hash is one log line, not one a request. */
  readonly #reported = new Set<string>();

  constructor(o: PasswordsOptions = {}) {
    this.#gate = o.gate ?? PASSWORD_GATE;
    this.#derive = o.derive ?? scryptDerive;
    this.#refused = o.refused;
  }

  async hash(password: string): Promise<PasswordHash> {
    const salt = randomBytes(16);
    const key = await this.#gate.run(() => this.#derive(password, salt, WRITTEN));
    return ['scrypt', WRITTEN.N, WRITTEN.r, WRITTEN.p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  /** Constant-time check; `subject` (say `paste abc123`) names the hash's owner in the log line of a refused one. */
  async verify(password: string, stored: PasswordHash, subject = 'a stored password'): Promise<boolean> {
    const problem = passwordHashProblem(stored);
    if (problem !== null) {
      this.#report(subject, problem.message);
      return false;
    }
    const [, n, r, p, salt, key] = stored.split('$') as [string, string, string, string, string, string];
    const expected = Buffer.from(key, 'base64url');
    const params = { N: Number(n), r: Number(r), p: Number(p) };
    const actual = await this.#gate.run(() => this.#derive(password, Buffer.from(salt, 'base64url'), params));
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  #report(subject: string, problem: string): void {
    if (this.#reported.has(subject)) return;
    if (this.#reported.size >= 1_000) this.#reported.clear();
    this.#reported.add(subject);
    this.#refused?.(subject, problem);
  }
}

/** The process's default, for callers that have none injected. */
const DEFAULT = new Passwords();

export const hashPassword = (password: string): Promise<PasswordHash> => DEFAULT.hash(password);

/** A malformed or refused stored hash verifies nothing rather than throwing. */
export const verifyPassword = (password: string, stored: PasswordHash): Promise<boolean> =>
  DEFAULT.verify(password, stored);
