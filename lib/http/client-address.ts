import { BlockList, isIP } from 'node:net';

/**
 * The header Keel's server writes with the client address it derived; any copy a
 * client sends is replaced, so better-auth's rate limit can key on it.
 */
export const CLIENT_ADDRESS_HEADER = 'x-keel-client-address';

/** One address in one spelling: IPv4-mapped IPv6 as IPv4, IPv6 lower-cased, no brackets. */
export function normalizeAddress(value: string): string | null {
  let address = value.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  address = address.toLowerCase();
  if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) address = address.slice(7);
  return isIP(address) === 0 ? null : address;
}

export interface TrustedProxies {
  has(address: string): boolean;
}

/** KEEL_TRUSTED_PROXIES entries (addresses and CIDR ranges); an invalid entry is reported, never guessed. */
export function parseTrustedProxies(entries: readonly string[]): { proxies: TrustedProxies; invalid: string[] } {
  const list = new BlockList();
  const invalid: string[] = [];
  for (const entry of entries) {
    const [base, prefix, extra] = entry.split('/');
    const address = base === undefined ? null : normalizeAddress(base);
    const family = address ? isIP(address) : 0;
    if (!address || extra !== undefined) {
      invalid.push(entry);
      continue;
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (bits < 0 || bits > (family === 6 ? 128 : 32)) {
      invalid.push(entry);
      continue;
    }
    list.addSubnet(address, bits, type);
  }
  return {
    proxies: { has: (address) => list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4') },
    invalid,
  };
}

/**
 * The client's address: the socket peer, unless that peer is a trusted proxy; then
 * the X-Forwarded-For chain is read from the right, skipping trusted proxies, and
 * the first untrusted hop is the client. A malformed hop ends the walk at the last
 * trusted address, so a client can never choose its own address.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: TrustedProxies,
): string {
  let address = (socketAddress && normalizeAddress(socketAddress)) || 'unknown';
  if (address === 'unknown' || !trusted.has(address)) return address;
  const chain = (typeof forwardedFor === 'string' ? forwardedFor : (forwardedFor ?? []).join(',')).split(',');
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    const hop = normalizeAddress(chain[i] ?? '');
    if (!hop) return address;
    address = hop;
    if (!trusted.has(hop)) return hop;
  }
  return address;
}

/** Writes the derived address into CLIENT_ADDRESS_HEADER, replacing any copy the client sent. */
export function stampClientAddress(request: import('node:http').IncomingMessage, trusted: TrustedProxies): void {
  request.headers[CLIENT_ADDRESS_HEADER] = clientAddress(
    request.socket.remoteAddress,
    request.headers['x-forwarded-for'],
    trusted,
  );
}
