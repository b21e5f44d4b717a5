// The container image's HEALTHCHECK: exit 0 when /api/health answers 200, 1 otherwise.
// Plain JavaScript, so a probe every few seconds does not start a TypeScript loader.
const port = process.env.PORT || '3000';
const host = process.env.KEEL_HOST?.trim();
// KEEL_HOST unset or a wildcard: the server listens on every interface, loopback included.
const address = !host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
try {
  const response = await fetch(`http://${address}:${port}/api/health`, { signal: AbortSignal.timeout(4_000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
