import { defineConfig } from '@playwright/test';
import { E2E_OIDC, e2eOidcIssuer } from './e2e/support/oidc';
import { E2E_METRICS_TOKEN, E2E_WEBHOOK } from './e2e/support/server';
import { E2E_DEEP_LINKS } from './e2e/support/deep-links';

const PORT = Number(process.env.KEEL_E2E_PORT ?? 3100);
// Its own home and database port, so two runs on one machine never share a database.
const E2E_HOME = process.env.KEEL_E2E_HOME ?? '.keel/e2e';
const PG_PORT = process.env.KEEL_EMBEDDED_PG_PORT ?? '54339';
/**
 * Specs that start servers and databases of their own (on the build the e2e server made): they
 * run on a second worker beside the rest, which share the e2e server and its database and run
 * one at a time (the access matrix and the hostile-input suite watch that whole database).
 */
const OWN_SERVERS =
  /\/(export-stall|first-start-clone|http-processes|launcher|prometheus-alerts|two-instances)\.spec\.ts$/;

/**
 * End-to-end tests in Debian's Chromium against a production build, started the way
 * a user starts Keel, on its own embedded database with fresh demo data.
 */
export default defineConfig({
  testDir: 'e2e',
  // The OpenID provider e2e/sso.spec.ts signs in through; it also stops it afterwards.
  globalSetup: './e2e/oidc-setup.ts',
  workers: 2,
  fullyParallel: false,
  projects: [
    { name: 'console', testIgnore: OWN_SERVERS, workers: 1 },
    { name: 'own servers', testMatch: OWN_SERVERS, workers: 1 },
  ],
  // No retry, in CI either: live updates are event-driven and the live-update specs
  // (refresh control, Back/Forward, a change by another client) pass 10 runs in a row.
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list'], ['json', { outputFile: '.keel/reports/e2e.json' }]],
  outputDir: '.keel/e2e-results',
  use: {
    baseURL: `http://localhost:${PORT}`,
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  webServer: {
    command: 'node --import tsx --conditions=react-server bin/keel.ts start --fresh',
    url: `http://127.0.0.1:${PORT}/api/health`,
    env: {
      PORT: String(PORT),
      KEEL_HOME: E2E_HOME,
      KEEL_DEMO_RUNTIME: '0',
      // Many sign-ins from one address in a short run; the limit itself is tested in the integration tier.
      KEEL_SIGNIN_RATE_LIMIT: '1000',
      KEEL_METRICS_TOKEN: E2E_METRICS_TOKEN,
      KEEL_WEBHOOK_URLS: `${E2E_WEBHOOK.name}=http://127.0.0.1:${E2E_WEBHOOK.port}/hook`,
      KEEL_WEBHOOK_SECRET_E2E: E2E_WEBHOOK.secret,
      KEEL_EMBEDDED_PG_PORT: PG_PORT,
      // Single sign-on beside local passwords (which the other specs use).
      KEEL_OIDC_ISSUER: e2eOidcIssuer(),
      KEEL_OIDC_CLIENT_ID: E2E_OIDC.clientId,
      KEEL_OIDC_CLIENT_SECRET: E2E_OIDC.clientSecret,
      KEEL_OIDC_ROLE_MAP: E2E_OIDC.roleMap,
      KEEL_OIDC_NAME: E2E_OIDC.name,
      // Links to the team's logs and traces, per kind of id (e2e/failure-detail.spec.ts).
      ...E2E_DEEP_LINKS,
    },
    timeout: 600_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 20_000 },
  },
});
