import { logger } from './logger';
import { exitWhenOrphaned } from './parent-watch';
import { runtime } from './runtime';
import { loggableError } from './safe-error';
import { recoveryDeps, settlementTransactions } from './services';
import { singleton } from './singletons';

/**
 * The server's own work besides answering requests: the bulk replay worker, the
 * metric sampler, the proposal deadline sweep and (with endpoints configured) the webhook worker always, the demo runtime in demo mode unless KEEL_DEMO_RUNTIME=0,
 * and, under `keel start`, exiting when the launcher is gone. Started once per
 * process even if a development reload calls register again; with several HTTP
 * processes (KEEL_HTTP_PROCESSES), by the first of them only.
 */
export async function startBackground(): Promise<void> {
  if (process.env.KEEL_LAUNCHED === '1') exitWhenOrphaned();
  const httpProcess = process.env.KEEL_HTTP_PROCESS_INDEX;
  if (httpProcess !== undefined && httpProcess !== '0') return;
  const workers = singleton('background-workers', () => ({ started: false }));
  if (workers.started || process.env.NEXT_PHASE === 'phase-production-build') return;
  workers.started = true;
  try {
    const [
      { startBulkReplayWorker },
      { startMetricSampler },
      { startWebhookWorker, syncWebhookEndpoints },
      { startProposalExpiry },
    ] = await Promise.all([
      import('../workers/bulk-replay-worker'),
      import('../workers/metric-sampler'),
      import('../workers/webhook-worker'),
      import('../workers/proposal-expiry'),
    ]);
    const { db, settings } = runtime();
    const log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) =>
      logger[level](fields ?? {}, message);
    startBulkReplayWorker({
      transactions: settlementTransactions(),
      log,
      worker: { instance: settings.instanceId, leaseMs: settings.workerLeaseMs },
    });
    startMetricSampler({ db, log, staleThresholdMs: settings.staleThresholdMs });
    startProposalExpiry({ deps: recoveryDeps(), log });
    await syncWebhookEndpoints(db, settings.webhooks.endpoints);
    if (settings.webhooks.endpoints.length > 0) {
      startWebhookWorker({
        db,
        log,
        settings: settings.webhooks,
        baseUrl: settings.baseUrl ?? `http://localhost:${settings.port}`,
      });
    }
    if (settings.demo && settings.demoRuntime) {
      const { startDemoRuntime } = await import('../demo/runtime');
      startDemoRuntime({ db, settings, log });
    }
  } catch (error) {
    // The pages report a missing database themselves; the server still comes up.
    logger.error({ error: loggableError(error) }, 'background workers did not start');
  }
}
