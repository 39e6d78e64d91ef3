import { isIPv4, isIPv6 } from 'node:net';

// AUTH_PROXY_* (README, Sign-in by a proxy); config.ts reports their problems with every other
// variable's.

/** AUTH_PROXY_*: who may vouch for a user, in which header, and what follows from it. */
export interface AuthProxyConfig {
  /** The header naming the user, lower-case as Node gives headers (`remote-user`). */
  header: string;
  /** The proxies' networks: only a connection from one of them is believed. */
  trusted: Cidr[];
  /** Unknown users are created on first sight (without a password). */
  create: boolean;
  /** Members of this group (in `groupsHeader`) are admins, and others are not; null: roles are kept here. */
  adminGroup: string | null;
  groupsHeader: string;
  /** Where Log out goes (the proxy's own sign-out); null: this site's home page. */
  logoutUrl: string | null;
}

/** One network of a CIDR list: `10.0.0.0/8`, `fd00::/8`, or a single address. */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * Parses a comma- or space-separated CIDR list (AUTH_PROXY_TRUSTED). A bare address is a
 * network of one. Returns the networks, or the problems with the entries that are not one.
 */
export function parseCidrList(raw: string): { cidrs: Cidr[]; problems: string[] } {
  const cidrs: Cidr[] = [];
  const problems: string[] = [];
  for (const entry of raw.split(/[\s,]+/).filter((e) => e !== '')) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    const max = family === 'ipv4' ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
    if (family === null || extra !== undefined || !(prefix >= 0 && prefix <= max))
      problems.push(`"${entry}" is not an address or a network (10.0.0.0/8, fd00::/8)`);
    // Everyone, trusted to name any user: never what an operator means.
    else if (prefix === 0) problems.push(`"${entry}" would trust every address; name the proxy's own`);
    else cidrs.push({ address, prefix, family });
  }
  return { cidrs, problems };
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_RE = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

/** AUTH_PROXY_*: off unless AUTH_PROXY_HEADER is set, and then AUTH_PROXY_TRUSTED must say who may send it. */
export function authProxyOf(
  env: NodeJS.ProcessEnv,
  problems: string[],
  flag: (name: string) => boolean,
): AuthProxyConfig | null {
  const value = (name: string): string | null =>
    env[name] === undefined || env[name] === '' ? null : (env[name] as string);
  const header = value('AUTH_PROXY_HEADER');
  const create = flag('AUTH_PROXY_CREATE');
  if (header === null) {
    const stray = ['AUTH_PROXY_TRUSTED', 'AUTH_PROXY_ADMIN_GROUP', 'AUTH_PROXY_LOGOUT_URL'].filter(
      (n) => value(n) !== null,
    );
    if (create) stray.unshift('AUTH_PROXY_CREATE');
    if (stray.length > 0) problems.push(`${stray.join(', ')} mean nothing without AUTH_PROXY_HEADER`);
    return null;
  }
  const groupsHeader = value('AUTH_PROXY_GROUPS_HEADER') ?? 'Remote-Groups';
  for (const [name, h] of [
    ['AUTH_PROXY_HEADER', header],
    ['AUTH_PROXY_GROUPS_HEADER', groupsHeader],
  ] as const)
    if (!HEADER_RE.test(h)) problems.push(`${name} must be a header name (e.g. Remote-User), got "${h}"`);
  const trustedRaw = value('AUTH_PROXY_TRUSTED');
  const { cidrs, problems: bad } = parseCidrList(trustedRaw ?? '');
  if (trustedRaw === null || (cidrs.length === 0 && bad.length === 0))
    problems.push("AUTH_PROXY_HEADER needs AUTH_PROXY_TRUSTED: the proxy's addresses (e.g. 127.0.0.1/32,::1/128)");
  for (const b of bad) problems.push(`AUTH_PROXY_TRUSTED: ${b}`);
  const logoutUrl = value('AUTH_PROXY_LOGOUT_URL');
  if (logoutUrl !== null && !/^(?:https?:\/\/[^\s]+|\/(?![/\\])[\x21-\x7e]*)$/.test(logoutUrl))
    problems.push(`AUTH_PROXY_LOGOUT_URL must be an http(s) URL or a path on this site, got "${logoutUrl}"`);
  return {
    header: header.toLowerCase(),
    trusted: cidrs,
    create,
    adminGroup: value('AUTH_PROXY_ADMIN_GROUP'),
    groupsHeader: groupsHeader.toLowerCase(),
    logoutUrl,
  };
}
