// Keel's HTTP server: Next.js behind a plain Node server (Next's documented custom
// server), so the client address is derived from the socket, never from what the
// client says. Started by lib/cli/start.ts as `node lib/cli/server.mjs <start|dev> <port>`.
// Plain JavaScript so Next's own modules load without a TypeScript loader; only Keel's
// own modules it needs (settings, the provider check, the HTTP processes' parent, the client
// address, the request id and the front door) go through tsx.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { tsImport } from 'tsx/esm/api';

const [mode, portArgument] = process.argv.slice(2);
const port = Number(portArgument);
const dev = mode === 'dev';

// The settings this process needs (start.ts has refused bad ones already).
const { parseSettings } = await tsImport('../config/settings.ts', import.meta.url);
const parsed = parseSettings(process.env);

// Run directly rather than by `keel start` (which checks it before anything starts): a
// wrong single sign-on issuer stops the server before it serves.
if (cluster.isPrimary && process.env.KEEL_LAUNCHED !== '1' && parsed.ok && parsed.value.signIn.oidc) {
  const { checkProviderAtStart } = await tsImport('../auth/oidc-discovery.ts', import.meta.url);
  const refusal = await checkProviderAtStart(parsed.value.signIn.oidc, (line) =>
    process.stdout.write(`[keel] ${line}\n`),
  );
  if (refusal) {
    process.stderr.write(`${refusal}\n`);
    process.exit(1);
  }
}

// KEEL_HTTP_PROCESSES above 1 (production only): this process becomes the parent of that
// many copies of itself sharing the port (lib/cli/http-primary.ts) and serves nothing.
let supervising = false;
if (cluster.isPrimary && !dev) {
  const processes = parsed.ok ? parsed.value.httpProcesses : 1;
  if (processes > 1) {
    const { runHttpPrimary } = await tsImport('./http-primary.ts', import.meta.url);
    runHttpPrimary({
      processes,
      instanceId: process.env.KEEL_INSTANCE_ID?.trim() || undefined,
      launched: process.env.KEEL_LAUNCHED === '1',
      log: (line) => process.stdout.write(`[keel] ${line}\n`),
    });
    supervising = true;
  }
}
if (!supervising) await serve();

async function serve() {
  const { parseTrustedProxies, stampClientAddress } = await tsImport('../http/client-address.ts', import.meta.url);
  const { stampRequestId } = await tsImport('../http/request-id.ts', import.meta.url);
  const { openFrontDoor } = await tsImport('../http/front-door.ts', import.meta.url);
  const { consoleOrigins } = await tsImport('../http/console-origins.ts', import.meta.url);
  const { readRouteMethods } = await tsImport('../http/route-methods.ts', import.meta.url);
  const dir = fileURLToPath(new URL('../..', import.meta.url));
  const frontDoor = openFrontDoor({
    development: dev,
    origins: consoleOrigins({ port, baseUrl: parsed.ok ? parsed.value.baseUrl : undefined }),
    routes: readRouteMethods(dir),
  });
  // KEEL_HOST: loopback in demo mode (lib/config/settings.ts).
  const host = parsed.ok ? parsed.value.host : '127.0.0.1';

  const { proxies, invalid } = parseTrustedProxies(
    (process.env.KEEL_TRUSTED_PROXIES ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  );
  if (invalid.length > 0) {
    process.stderr.write(`[keel] KEEL_TRUSTED_PROXIES: not an address or CIDR range: ${invalid.join(', ')}\n`);
    process.exit(1);
  }

  const app = next({ dev, dir, hostname: 'localhost', port });
  const handle = app.getRequestHandler();
  await app.prepare();

  const server = createServer((request, response) => {
    stampClientAddress(request, proxies);
    stampRequestId(request);
    // The session gate, the request guards and the nonce policy, before Next.js routes the request.
    frontDoor(request, response).then(
      (answered) => {
        if (!answered) void handle(request, response);
      },
      () => {
        // A fault of Keel's own answers this request with 500, never passes it on unchecked, and keeps the process up.
        if (!response.headersSent)
          response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
        response.end('Internal error');
      },
    );
  });
  if (dev) server.on('upgrade', app.getUpgradeHandler());

  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    server.close();
    server.closeIdleConnections();
    // Open streams (live events) do not hold the exit up for long.
    setTimeout(() => server.closeAllConnections(), 2_000).unref();
    void app.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  server.listen(port, host, () => {
    const which =
      process.env.KEEL_HTTP_PROCESS_INDEX === undefined ? '' : ` (HTTP process ${process.env.KEEL_HTTP_PROCESS_INDEX})`;
    const where = host === undefined ? '' : ` of ${host}`;
    process.stdout.write(
      `[keel] ${dev ? 'development' : 'production'} server listening on port ${port}${where}${which}\n`,
    );
  });
}
