import type { Signer } from '../crypto/signature.ts';
import { hostCookieName, serializeCookie } from '../http/cookies.ts';
import type { Paste } from '../paste/paste.ts';

/** How long a browser that gave a paste's password may read it again without asking. */
export const UNLOCK_GRANT_MS = 10 * 60_000;

const PURPOSE = 'unlock';
const VALUE_RE = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/** One cookie per unlocked paste, so that each grant expires on its own. */
export const unlockCookieName = (hash: string, secure: boolean): string =>
  hostCookieName(`paste_unlock_${hash}`, secure);

/*
 * The signature covers the stored password hash too: changing or removing the password
 * voids every grant handed out for the old one, without the server keeping a list.
 */
const signed = (p: Pick<Paste, 'hash' | 'password'>, expSec: number): string =>
  `${p.hash}\0${expSec}\0${p.password ?? ''}`;

/**
 * The Set-Cookie for a short-lived grant to read `p` without its password, handed out when
 * the password was given. It holds only an expiry and an HMAC, never the password, so the
 * page's Raw link can stay a plain link and the page itself carries no secret.
 */
export function unlockCookie(
  signer: Signer,
  p: Pick<Paste, 'hash' | 'password'>,
  now: number,
  secure: boolean,
): string {
  const expSec = Math.floor((now + UNLOCK_GRANT_MS) / 1000);
  const value = `${expSec}.${signer.sign(PURPOSE, signed(p, expSec))}`;
  return serializeCookie(unlockCookieName(p.hash, secure), value, {
    maxAge: UNLOCK_GRANT_MS / 1000,
    httpOnly: true,
    secure,
    sameSite: 'Lax',
  });
}

/** Whether a presented cookie value is a live grant for `p` as it is now. */
export function hasUnlockGrant(
  signer: Signer,
  p: Pick<Paste, 'hash' | 'password'>,
  value: string | undefined,
  now: number,
): boolean {
  const m = VALUE_RE.exec(value ?? '');
  if (m === null) return false;
  const expSec = Number(m[1]);
  return expSec * 1000 > now && signer.verify(PURPOSE, signed(p, expSec), m[2] as string);
}
