/**
 * Response headers of docs/security.md, "Headers". Scripts run only with the
 * per-request nonce (and what those scripts load, 'strict-dynamic'); styles may be
 * inline because React writes style attributes. Development adds 'unsafe-eval',
 * which React's dev build needs for its stack traces.
 */
export function contentSecurityPolicy(nonce: string, development = false): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** For responses that carry no page (static files, JSON): nothing may run or frame them. */
export const STATIC_CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; " +
  "form-action 'none'";

/** A console needs none of these browser features. */
export const PERMISSIONS_POLICY = [
  'camera=()',
  'microphone=()',
  'geolocation=()',
  'payment=()',
  'usb=()',
  'serial=()',
  'bluetooth=()',
  'hid=()',
  'midi=()',
  'magnetometer=()',
  'gyroscope=()',
  'accelerometer=()',
  'display-capture=()',
  'screen-wake-lock=()',
  'xr-spatial-tracking=()',
  'browsing-topics=()',
  'interest-cohort=()',
].join(', ');

/**
 * What every response carries; next.config.ts sets them on what
 * Next.js answers, the front door on what it answers itself.
 */
export const BASELINE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
  'Permissions-Policy': PERMISSIONS_POLICY,
});

/** A fresh nonce: 16 random bytes, base64. */
export function createNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}
