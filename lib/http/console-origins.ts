/**
 * The origins the console is served from: scheme, host and port, exactly. A
 * state-changing request (a server action, sign-in, sign-out) is accepted only from
 * these (lib/http/request-guards.ts, and better-auth's trusted origins). With
 * KEEL_BASE_URL set, its origin; the loopback names of the listening port stay
 * accepted, since only Keel's own pages can be served from them on this machine.
 */
export function consoleOrigins(options: { port: number; baseUrl?: string }): string[] {
  const loopback = [`http://localhost:${options.port}`, `http://127.0.0.1:${options.port}`];
  return options.baseUrl ? [...new Set([new URL(options.baseUrl).origin, ...loopback])] : loopback;
}
