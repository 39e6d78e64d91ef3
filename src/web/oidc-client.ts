import type * as OpenId from 'openid-client';
import type { OidcConfig } from '../config/oidc.ts';
import { OIDC_FLOW_MS, type OidcFlow } from './oidc-flow.ts';

type Lib = typeof OpenId;

/** Why a callback was refused, for its page and its audit line; `detail` never holds a secret. */
export class OidcRefusal extends Error {
  constructor(
    readonly reason: 'provider_error' | 'no_flow' | 'state' | 'token' | 'unreachable',
    message: string,
    readonly detail = '',
  ) {
    super(message);
  }
}

/**
 * The relying party (README, Sign-in with OpenID Connect), through openid-client: the
 * authorization code flow with PKCE, state and nonce; the ID token's issuer, audience,
 * expiry, nonce and signature (keys fetched from the provider's jwks_uri at each sign-in)
 * are checked there. The library is imported on first use, so a server without
 * OIDC_ISSUER never loads it; discovery is done once, and again after a failure.
 */
export class OidcClient {
  #lib: Promise<Lib> | null = null;
  #server: Promise<OpenId.ServerMetadata> | null = null;

  constructor(
    readonly config: OidcConfig,
    /** BASE_URL/login/oidc/callback, as registered at the provider. */
    readonly redirectUri: string,
    /** The server key, which seals each flow's cookie (web/oidc-flow.ts). */
    readonly key: Buffer,
    private readonly now: () => number,
  ) {}

  #load(): Promise<Lib> {
    this.#lib ??= import('openid-client');
    return this.#lib;
  }

  async #configuration(): Promise<{ lib: Lib; conf: OpenId.Configuration }> {
    const lib = await this.#load();
    const insecure = this.config.issuer.startsWith('http:');
    this.#server ??= lib
      .discovery(new URL(this.config.issuer), this.config.clientId, undefined, undefined, {
        ...(insecure ? { execute: [lib.allowInsecureRequests] } : {}),
      })
      .then((c) => c.serverMetadata());
    const server = await this.#server.catch((err: unknown) => {
      this.#server = null;
      throw new OidcRefusal(
        'unreachable',
        'The sign-in provider cannot be reached now. Try again later, or log in with a password.',
        String(err instanceof Error ? err.message : err),
      );
    });
    // Made per use with this server's clock, which the ID token's expiry is checked against.
    const skew = Math.round((this.now() - Date.now()) / 1000);
    const secret = this.config.clientSecret;
    const conf = new lib.Configuration(
      server,
      this.config.clientId,
      { [lib.clockSkew]: skew },
      secret === null ? lib.None() : lib.ClientSecretBasic(secret),
    );
    if (insecure) lib.allowInsecureRequests(conf);
    // No JWKS is carried from one sign-in to the next: with a kept set, openid-client refetches on an
    // unknown key id only after its cooldown, so a sign-in just after a key rotation would be refused.
    lib.enableNonRepudiationChecks(conf);
    return { lib, conf };
  }

  /** The provider's authorization URL for a new flow, and the flow to keep for its callback. */
  async start(next: string): Promise<{ url: string; flow: OidcFlow }> {
    const { lib, conf } = await this.#configuration();
    const flow: OidcFlow = {
      state: lib.randomState(),
      nonce: lib.randomNonce(),
      verifier: lib.randomPKCECodeVerifier(),
      next,
      exp: this.now() + OIDC_FLOW_MS,
    };
    const url = lib.buildAuthorizationUrl(conf, {
      redirect_uri: this.redirectUri,
      scope: this.config.scopes,
      code_challenge: await lib.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url: url.href, flow };
  }

  /**
   * The checked claims of the callback at `url` for `flow`: the ID token's, completed from the
   * userinfo endpoint when it lacks the user name or the groups (Authelia sends them only there).
   */
  async finish(url: URL, flow: OidcFlow): Promise<Record<string, unknown>> {
    const { lib, conf } = await this.#configuration();
    let claims: Record<string, unknown>;
    let accessToken: string;
    try {
      const tokens = await lib.authorizationCodeGrant(conf, url, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      claims = { ...(tokens.claims() ?? {}) };
      accessToken = tokens.access_token;
    } catch (err) {
      throw refusalOf(lib, err);
    }
    const { usernameClaim, groupsClaim, adminGroup } = this.config;
    const lacking = claims[usernameClaim] === undefined || (adminGroup !== null && claims[groupsClaim] === undefined);
    if (lacking && conf.serverMetadata().userinfo_endpoint !== undefined) {
      try {
        const info = await lib.fetchUserInfo(conf, accessToken, claims['sub'] as string);
        claims = { ...info, ...claims, [usernameClaim]: claims[usernameClaim] ?? info[usernameClaim] };
        if (claims[groupsClaim] === undefined && info[groupsClaim] !== undefined)
          claims[groupsClaim] = info[groupsClaim];
      } catch (err) {
        throw refusalOf(lib, err);
      }
    }
    return claims;
  }

  /** The provider's sign-out (its end_session_endpoint) returning to `back`, or null when it has none. */
  async endSessionUrl(back: string): Promise<string | null> {
    try {
      const { lib, conf } = await this.#configuration();
      if (conf.serverMetadata().end_session_endpoint === undefined) return null;
      return lib.buildEndSessionUrl(conf, { client_id: this.config.clientId, post_logout_redirect_uri: back }).href;
    } catch {
      // The provider is down: this site's own log out still happens.
      return null;
    }
  }
}

/** What openid-client refused, worded for the page; the library's own words go to the audit line. */
function refusalOf(lib: Lib, err: unknown): OidcRefusal {
  if (err instanceof OidcRefusal) return err;
  const detail = err instanceof Error ? `${err.message}${codeOf(err)}` : String(err);
  if (err instanceof lib.AuthorizationResponseError)
    return new OidcRefusal('provider_error', 'The sign-in provider refused the sign-in.', detail);
  if (/state/i.test(detail))
    return new OidcRefusal('state', 'This sign-in does not match the one started here. Start again.', detail);
  if (err instanceof lib.ClientError || err instanceof lib.ResponseBodyError)
    return new OidcRefusal(
      'token',
      'The sign-in provider\u2019s answer failed its checks (ID token issuer, audience, expiry, nonce or signature).',
      detail,
    );
  return new OidcRefusal(
    'unreachable',
    'The sign-in provider cannot be reached now. Try again later, or log in with a password.',
    detail,
  );
}

/** The library's code, and what its cause says (the claim that failed, the error under it). */
const codeOf = (err: Error): string => {
  const code = (err as { code?: unknown }).code;
  const cause = err.cause as { claim?: unknown; message?: unknown } | undefined;
  const claim = typeof cause?.claim === 'string' ? `; claim ${cause.claim}` : '';
  const under = cause instanceof Error ? `; ${cause.message}${codeOf(cause)}` : '';
  return `${typeof code === 'string' ? ` (${code})` : ''}${claim}${under}`;
};
