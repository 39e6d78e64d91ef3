// OIDC_* (README, Sign-in with OpenID Connect); config.ts reports their problems with every
// other variable's.

/** OIDC_*: the provider, this server's client there, and what its claims decide. */
export interface OidcConfig {
  /**
   * The provider's issuer URL exactly as it names itself (Authentik's ends in `/`); discovery reads
   * `/.well-known/openid-configuration` under it.
   */
  issuer: string;
  clientId: string;
  /** Null: a public client (PKCE alone), no secret is sent. */
  clientSecret: string | null;
  scopes: string;
  usernameClaim: string;
  groupsClaim: string;
  /** Members of this group are admins, and others are not; null: roles are kept here. */
  adminGroup: string | null;
  /** Unknown users are created on first sign-in (without a password). */
  create: boolean;
  buttonLabel: string;
}

/** Plain http is for a provider on this machine (a test provider, a sidecar); anything else must be https. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** OIDC_*: off unless OIDC_ISSUER is set, and then OIDC_CLIENT_ID must say who we are there. */
export function oidcOf(env: NodeJS.ProcessEnv, problems: string[], flag: (name: string) => boolean): OidcConfig | null {
  const value = (name: string): string | null =>
    env[name] === undefined || env[name] === '' ? null : (env[name] as string);
  const issuer = value('OIDC_ISSUER');
  if (issuer === null) return null;
  try {
    const u = new URL(issuer);
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)))
      problems.push(`OIDC_ISSUER must be an https URL (http only on this machine), got "${issuer}"`);
  } catch {
    problems.push(`OIDC_ISSUER must be an https URL, got "${issuer}"`);
  }
  const clientId = value('OIDC_CLIENT_ID');
  if (clientId === null) problems.push('OIDC_ISSUER needs OIDC_CLIENT_ID: the client registered at the provider');
  const scopes = (value('OIDC_SCOPES') ?? 'openid profile email').trim().split(/\s+/);
  if (!scopes.includes('openid')) problems.push(`OIDC_SCOPES must include "openid", got "${scopes.join(' ')}"`);
  return {
    issuer,
    clientId: clientId ?? '',
    clientSecret: value('OIDC_CLIENT_SECRET'),
    scopes: scopes.join(' '),
    usernameClaim: value('OIDC_USERNAME_CLAIM') ?? 'preferred_username',
    groupsClaim: value('OIDC_GROUPS_CLAIM') ?? 'groups',
    adminGroup: value('OIDC_ADMIN_GROUP'),
    create: flag('OIDC_CREATE'),
    buttonLabel: value('OIDC_BUTTON_LABEL') ?? 'Sign in with SSO',
  };
}
