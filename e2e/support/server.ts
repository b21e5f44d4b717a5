/** The scraper token the e2e server runs with (playwright.config.ts sets it, e2e/metrics.spec.ts uses it). */
export const E2E_METRICS_TOKEN = 'e2e-metrics-token-7f3a9c1d2b4e6f80a1b2';

/**
 * The webhook endpoint the e2e server posts to (playwright.config.ts), on a loopback port
 * that e2e/webhooks.spec.ts listens on; between its tests nothing listens, so deliveries
 * made by other specs are simply retried.
 */
export const E2E_WEBHOOK = {
  name: 'e2e',
  port: Number(process.env.KEEL_E2E_WEBHOOK_PORT ?? 3199),
  secret: 'e2e-webhook-secret-5b1d7c2e9f8a4b6c3d0e',
};
