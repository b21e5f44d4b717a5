/** Runs once when the Next.js server starts; everything it starts is Node-only. */
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    // First, so nothing the server prints later bypasses the log sanitizer.
    const { routeConsoleToLogger } = await import('./lib/observability/console-logger');
    routeConsoleToLogger();
    const { answerMetricsCollection } = await import('./lib/observability/metrics');
    answerMetricsCollection();
    const { startBackground } = await import('./lib/server/composition-root');
    await startBackground();
  }
}
