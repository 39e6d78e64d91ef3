import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** One network: what config.ts's AUTH_PROXY_TRUSTED gives (its Cidr). */
interface Network {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * Whether a connection's peer is one of the networks. An IPv4 peer on a dual-stack socket
 * shows as `::ffff:192.0.2.1`; it is matched as the IPv4 address it is.
 */
export class TrustedPeers {
  readonly #list = new BlockList();

  constructor(cidrs: readonly Network[]) {
    for (const c of cidrs) this.#list.addSubnet(c.address, c.prefix, c.family);
  }

  has(peer: string | undefined): boolean {
    if (peer === undefined) return false;
    const zone = peer.indexOf('%');
    const address = zone === -1 ? peer : peer.slice(0, zone);
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped !== undefined) return this.#list.check(mapped, 'ipv4');
    if (isIPv4(address)) return this.#list.check(address, 'ipv4');
    return isIPv6(address) && this.#list.check(address, 'ipv6');
  }
}
