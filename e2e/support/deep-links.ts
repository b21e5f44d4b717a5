/**
 * The log and trace URL templates the e2e server starts with (playwright.config.ts): receipts
 * have logs only, executions logs and traces, so a page shows exactly the links that are set.
 */
export const E2E_DEEP_LINKS = {
  KEEL_LOG_URL_TEMPLATE_RECEIPT: 'https://logs.example.test/search?query=receipt_id%3D%22{id}%22',
  KEEL_LOG_URL_TEMPLATE_EXECUTION: 'https://logs.example.test/search?query=execution_id%3D{id}',
  KEEL_TRACE_URL_TEMPLATE_EXECUTION: 'https://traces.example.test/search?tags=execution.id%3D{id}',
} as const;
