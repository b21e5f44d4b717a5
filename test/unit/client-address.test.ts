import { describe, expect, it } from 'vitest';
import { clientAddress, normalizeAddress, parseTrustedProxies } from '../../lib/http/client-address';

const none = parseTrustedProxies([]).proxies;
const proxies = parseTrustedProxies(['10.0.0.0/8', '192.168.1.5', 'fd00::/8']).proxies;

describe('clientAddress', () => {
  it('uses the socket address when the peer is not a trusted proxy, whatever the header says', () => {
    expect(clientAddress('203.0.113.9', '198.51.100.1', none)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:127.0.0.1', '1.2.3.4, 5.6.7.8', none)).toBe('127.0.0.1');
    expect(clientAddress('203.0.113.9', '198.51.100.1', proxies)).toBe('203.0.113.9');
  });

  it('reads the chain from the right through trusted proxies only', () => {
    expect(clientAddress('10.1.2.3', '198.51.100.7', proxies)).toBe('198.51.100.7');
    // The client's own "spoofed" entry sits left of its real address and is never reached.
    expect(clientAddress('10.1.2.3', '6.6.6.6, 198.51.100.7, 192.168.1.5', proxies)).toBe('198.51.100.7');
    expect(clientAddress('::ffff:10.1.2.3', ['6.6.6.6', '198.51.100.7'], proxies)).toBe('198.51.100.7');
    expect(clientAddress('fd00::1', '2001:DB8::5', proxies)).toBe('2001:db8::5');
  });

  it('stops at the last trusted address on a malformed or missing hop', () => {
    expect(clientAddress('10.1.2.3', undefined, proxies)).toBe('10.1.2.3');
    expect(clientAddress('10.1.2.3', 'not-an-ip', proxies)).toBe('10.1.2.3');
    expect(clientAddress('10.1.2.3', '198.51.100.7, garbage, 10.9.9.9', proxies)).toBe('10.9.9.9');
    // Every hop trusted: the leftmost is the best there is.
    expect(clientAddress('10.1.2.3', '10.4.4.4', proxies)).toBe('10.4.4.4');
  });

  it('has an answer without a socket address', () => {
    expect(clientAddress(undefined, '1.2.3.4', proxies)).toBe('unknown');
  });
});

describe('parseTrustedProxies', () => {
  it('reports entries that are not an address or a CIDR range', () => {
    expect(
      parseTrustedProxies(['10.0.0.0/8', 'nope', '10.0.0.0/33', '1.2.3.4/8/9', '::1/129', '::1/128']).invalid,
    ).toEqual(['nope', '10.0.0.0/33', '1.2.3.4/8/9', '::1/129']);
  });
});

describe('normalizeAddress', () => {
  it('spells one address one way', () => {
    expect(normalizeAddress('::FFFF:192.0.2.1')).toBe('192.0.2.1');
    expect(normalizeAddress('[2001:db8::1]')).toBe('2001:db8::1');
    expect(normalizeAddress(' 192.0.2.1 ')).toBe('192.0.2.1');
    expect(normalizeAddress('192.0.2.1:443')).toBeNull();
  });
});
