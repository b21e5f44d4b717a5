import 'server-only';
import { BULK_REPLAY_BATCH_SIZE } from '../domain/settlement';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import { processBulkReplayBatch, type BulkReplayBatchReport } from '../services/bulk-replay-batch';
import { startWorkerLoop, type RunningWorker, type WorkerLog } from './worker-loop';

export interface BulkReplayWorkerOptions {
  /** The settlement unit of work, from the composition root (or a test's own). */
  transactions: UnitOfWork<SettlementReplayPorts>;
  log: WorkerLog;
  /** Receipts per transaction, at most 1,024. */
  batchSize?: number;
  /** How long to wait before looking again when no job is running. */
  idleMs?: number;
}

function reportFinished(log: WorkerLog, report: BulkReplayBatchReport | null): void {
  if (report?.finished) log('info', 'bulk replay completed', { job: report.jobId });
}

/**
 * The server-side bulk replay worker (DESIGN.md 5.2). Its state is all in the
 * database, so a restarted worker resumes every unfinished RUNNING job where the last
 * committed batch left it; several workers share the jobs without taking one batch twice.
 */
export function startBulkReplayWorker({ transactions, log, batchSize = BULK_REPLAY_BATCH_SIZE, idleMs = 1_000 }: BulkReplayWorkerOptions): RunningWorker {
  log('info', 'bulk replay worker started', { batchSize });
  const worker = startWorkerLoop({
    name: 'bulk replay worker',
    log,
    errorDelayMs: 5_000,
    async step() {
      const report = await processBulkReplayBatch(transactions, batchSize);
      reportFinished(log, report);
      return report ? 0 : idleMs;
    },
  });
  return {
    async stop() {
      await worker.stop();
      log('info', 'bulk replay worker stopped');
    },
  };
}

/**
 * Runs batches until no job is running, or `maxBatches` ran; returns how many ran. For
 * the CLI and tests, which want the queue drained now rather than polled.
 */
export async function runBulkReplayBatches(
  transactions: UnitOfWork<SettlementReplayPorts>,
  options: { batchSize?: number; maxBatches?: number; log?: WorkerLog } = {},
): Promise<number> {
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  let batches = 0;
  while (batches < maxBatches) {
    const report = await processBulkReplayBatch(transactions, options.batchSize ?? BULK_REPLAY_BATCH_SIZE);
    if (!report) break;
    batches += 1;
    if (options.log) reportFinished(options.log, report);
  }
  return batches;
}
