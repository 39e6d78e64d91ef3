import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client's address. Behind a reverse proxy (TRUST_PROXY=1) it is the last hop of
 * X-Forwarded-For, the one our own proxy appended; earlier hops are client-supplied. A hop
 * that is not an address falls back to the peer's, so no spelling of one makes another budget.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for'];
    const last = (Array.isArray(xff) ? xff.join(',') : xff)?.split(',').at(-1);
    const ip = last === undefined ? null : addressOfHop(last);
    if (ip !== null) return normalize(ip);
  }
  return normalize(req.socket.remoteAddress ?? '');
}

const PORT = '(?::\\d{1,5})?';
const IPV4_HOP = new RegExp(`^([0-9.]+)${PORT}$`);
const BRACKETED_HOP = new RegExp(`^\\[([^\\]]+)\\]${PORT}$`);

/**
 * The address a forwarded hop names, its port and an IPv6 address's brackets left off
 * (`192.0.2.7:1000`, `[2001:db8::1]:443`), or null when the hop is no address. An IPv6
 * address carries a port only inside brackets (RFC 7239): bare, its last group is its own.
 */
export function addressOfHop(hop: string): string | null {
  const s = hop.trim();
  const v4 = IPV4_HOP.exec(s)?.[1];
  if (v4 !== undefined) return isIPv4(v4) ? v4 : null;
  const bracketed = BRACKETED_HOP.exec(s)?.[1];
  const v6 = bracketed ?? s;
  // A zone (`%eth0`) means nothing beyond the proxy's own host: left off.
  return isIPv6(v6) ? (v6.split('%')[0] as string) : null;
}

const normalize = (ip: string): string => (ip.startsWith('::ffff:') ? ip.slice(7) : ip);

/**
 * The key a client's per-IP budgets are kept under (README, Rate limits): an IPv4 address
 * as it is, an IPv6 address as its /`prefixLength` network (`2001:db8:1:2::/64`), since one
 * home line holds a whole /64 and could otherwise take a fresh address for every guess. An
 * IPv4-mapped address (`::ffff:192.0.2.1`) is its IPv4 address; anything else is itself.
 */
export function clientKey(ip: string, prefixLength: number): string {
  if (!ip.includes(':')) return ip;
  const groups = ipv6Groups(ip);
  if (groups === null) return ip;
  if (groups[5] === 0xffff && groups.slice(0, 5).every((g) => g === 0)) {
    const [hi, lo] = [groups[6] as number, groups[7] as number];
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  const masked = groups.map((g, i) => {
    const bits = Math.min(16, Math.max(0, prefixLength - 16 * i));
    return g & ((0xffff << (16 - bits)) & 0xffff);
  });
  return `${compress(masked)}/${prefixLength}`;
}

/** An IPv6 address's eight 16-bit groups (a zone, `%eth0`, left off), or null when it is not one. */
function ipv6Groups(ip: string): number[] | null {
  const zone = ip.indexOf('%');
  let s = zone === -1 ? ip : ip.slice(0, zone);
  if (!isIPv6(s)) return null;
  // A dotted IPv4 tail is the last two groups.
  const tail = s.lastIndexOf(':');
  if (s.includes('.', tail)) {
    const [a, b, c, d] = s
      .slice(tail + 1)
      .split('.')
      .map(Number) as [number, number, number, number];
    s = `${s.slice(0, tail + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const hex = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const gap = s.indexOf('::');
  if (gap === -1) return hex(s);
  const head = hex(s.slice(0, gap));
  const rest = hex(s.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

/** Groups written as RFC 5952 does: lower-case hex, the longest run of two or more zero groups as `::`. */
function compress(groups: readonly number[]): string {
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < groups.length; ) {
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > bestLength) [best, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best === -1) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`;
}
