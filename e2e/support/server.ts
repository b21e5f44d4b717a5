/** The scraper token the e2e server runs with (playwright.config.ts sets it, e2e/metrics.spec.ts uses it). */
export const E2E_METRICS_TOKEN = 'e2e-metrics-token-7f3a9c1d2b4e6f80a1b2';
