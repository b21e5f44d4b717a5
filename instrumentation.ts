/** Runs once when the Next.js server starts. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  if (process.env.KEEL_LAUNCHED === '1') {
    const { exitWhenOrphaned } = await import('./lib/server/parent-watch');
    exitWhenOrphaned();
  }
  await startBackgroundWorkers();
}

const started = globalThis as typeof globalThis & { __keelWorkersStarted?: boolean };

/**
 * The server's own workers: the bulk replay worker and the metric sampler always, and
 * the demo runtime in demo mode unless KEEL_DEMO_RUNTIME=0. Imported lazily so the
 * edge runtime and the build never load them; started once per process even if a
 * development reload calls register again.
 */
async function startBackgroundWorkers() {
  if (started.__keelWorkersStarted || process.env.NEXT_PHASE === 'phase-production-build') return;
  started.__keelWorkersStarted = true;
  const { logger } = await import('./lib/server/logger');
  try {
    const [{ runtime }, { startBulkReplayWorker }, { startMetricSampler }] = await Promise.all([
      import('./lib/server/runtime'),
      import('./lib/workers/bulk-replay-worker'),
      import('./lib/workers/metric-sampler'),
    ]);
    const { db, settings } = runtime();
    const log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) =>
      logger[level](fields ?? {}, message);
    startBulkReplayWorker({ db, log });
    startMetricSampler({ db, log, staleThresholdMs: settings.staleThresholdMs });
    if (settings.demo && settings.demoRuntime) {
      const { startDemoRuntime } = await import('./lib/demo/runtime');
      startDemoRuntime({ db, settings, log });
    }
  } catch (error) {
    // The pages report a missing database themselves; the server still comes up.
    logger.error({ err: error }, 'background workers did not start');
  }
}
