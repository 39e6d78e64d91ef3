import { seal, unseal } from '../crypto/seal.ts';
import { hostCookieName, serializeCookie } from '../http/cookies.ts';

/** How long a sign-in at the provider may take, from /login/oidc to the callback. */
export const OIDC_FLOW_MS = 10 * 60_000;

const CONTEXT = 'oidc-flow';

/** What a sign-in started here must find again at the callback: the checks openid-client makes. */
export interface OidcFlow {
  state: string;
  nonce: string;
  verifier: string;
  /** Where to go once signed in (a path on this site). */
  next: string;
  /** When the flow ends (epoch ms). */
  exp: number;
}

export const oidcFlowCookieName = (secure: boolean): string => hostCookieName('paste_oidc_flow', secure);

/**
 * The flow's secrets ride in the browser, sealed (AES-GCM) under the server key every
 * instance shares, so a flow started on one instance finishes on another and nothing is
 * stored. SameSite=Lax: the provider's redirect back is a top-level GET, which carries it.
 */
export function oidcFlowCookie(key: Buffer, flow: OidcFlow, secure: boolean): string {
  const value = seal(key.toString('base64'), CONTEXT, JSON.stringify(flow)).toString('base64url');
  return laxCookie(oidcFlowCookieName(secure), value, OIDC_FLOW_MS, secure);
}

/** HttpOnly, SameSite=Lax, for `ms` (0: deleted). */
const laxCookie = (name: string, value: string, ms: number, secure: boolean): string =>
  serializeCookie(name, value, { maxAge: ms / 1000, httpOnly: true, secure, sameSite: 'Lax' });

/** Deleted at the callback whatever its outcome: a second use of the same callback finds no flow. */
export const clearOidcFlowCookie = (secure: boolean): string => laxCookie(oidcFlowCookieName(secure), '', 0, secure);

/** The live flow a cookie holds, or null for none, an altered one, another key's, or an ended one. */
export function openOidcFlow(key: Buffer, value: string | undefined, now: number): OidcFlow | null {
  if (value === undefined || !/^[A-Za-z0-9_-]{1,4096}$/.test(value)) return null;
  const text = unseal(key.toString('base64'), CONTEXT, Buffer.from(value, 'base64url'));
  if (text === null) return null;
  const flow = JSON.parse(text) as OidcFlow;
  return flow.exp > now ? flow : null;
}

/** Says a session was begun at the provider, so Log out goes through its sign-out too. */
const SIGNED_IN = 'paste_oidc';

export const oidcSignedInCookieName = (secure: boolean): string => hostCookieName(SIGNED_IN, secure);

export const oidcSignedInCookie = (idleMs: number, secure: boolean): string =>
  laxCookie(oidcSignedInCookieName(secure), '1', idleMs, secure);

export const clearOidcSignedInCookie = (secure: boolean): string =>
  laxCookie(oidcSignedInCookieName(secure), '', 0, secure);
