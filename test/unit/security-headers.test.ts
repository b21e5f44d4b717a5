import { describe, expect, it } from 'vitest';
import {
  BASELINE_HEADERS,
  contentSecurityPolicy,
  createNonce,
  PERMISSIONS_POLICY,
  STATIC_CONTENT_SECURITY_POLICY,
} from '../../lib/http/security-headers';
import * as nextConfig from '../../next.config';

describe('security headers', () => {
  it('allows scripts only by nonce, never inline, and forbids framing, plugins and foreign forms', () => {
    const policy = contentSecurityPolicy('abc123==');
    const directives = Object.fromEntries(policy.split('; ').map((d) => [d.split(' ')[0], d]));
    expect(directives['script-src']).toBe("script-src 'self' 'nonce-abc123==' 'strict-dynamic'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe-(inline|eval)/);
    expect(directives['frame-ancestors']).toBe("frame-ancestors 'none'");
    expect(directives['object-src']).toBe("object-src 'none'");
    expect(directives['base-uri']).toBe("base-uri 'self'");
    expect(directives['form-action']).toBe("form-action 'self'");
    expect(contentSecurityPolicy('n', true)).toContain("'unsafe-eval'");
  });

  it('makes a fresh, unguessable nonce each time', () => {
    const nonces = new Set(Array.from({ length: 100 }, () => createNonce()));
    expect(nonces.size).toBe(100);
    for (const nonce of nonces) expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  });

  it('denies the browser features a console never uses', () => {
    for (const feature of ['camera', 'microphone', 'geolocation', 'payment', 'usb'])
      expect(PERMISSIONS_POLICY).toContain(`${feature}=()`);
  });

  it('next.config.ts spells the same values as lib/http/security-headers.ts', () => {
    expect(nextConfig.PERMISSIONS_POLICY).toBe(PERMISSIONS_POLICY);
    expect(nextConfig.STATIC_CONTENT_SECURITY_POLICY).toBe(STATIC_CONTENT_SECURITY_POLICY);
    expect(Object.fromEntries(nextConfig.BASELINE_HEADERS.map(({ key, value }) => [key, value]))).toEqual(
      BASELINE_HEADERS,
    );
  });
});
