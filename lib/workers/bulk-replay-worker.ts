import 'server-only';
import { BULK_REPLAY_BATCH_SIZE } from '../domain/settlement';
import { DEFAULT_WORKER_LEASE_MS, defaultInstanceId } from '../config/settings';
import type { BulkWorkerLease } from '../ports/bulk-replay';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import { processBulkReplayBatch, type BulkReplayBatchReport } from '../services/bulk-replay-batch';
import type { SettlementServiceDeps } from '../services/settlement-action';
import { startWorkerLoop, type RunningWorker, type WorkerLog } from './worker-loop';

export interface BulkReplayWorkerOptions {
  /** The settlement unit of work, from the composition root (or a test's own). */
  unitOfWork: UnitOfWork<SettlementReplayPorts>;
  log: WorkerLog;
  /** Receipts per transaction, at most 1,024. */
  batchSize?: number;
  /** How long to wait before looking again when no job is running. */
  idleMs?: number;
  /** This instance and how long a job stays with it after a batch (KEEL_INSTANCE_ID, KEEL_WORKER_LEASE_MS). */
  worker?: BulkWorkerLease;
}

/** A worker of this process when none is named: the default instance id and lease. */
const processWorker = (): BulkWorkerLease => ({ instance: defaultInstanceId(), leaseMs: DEFAULT_WORKER_LEASE_MS });

function reportBatch(log: WorkerLog, report: BulkReplayBatchReport | null): void {
  if (report?.takenOverFrom)
    log('warn', 'bulk replay job taken over: the lease of the instance working it ran out', {
      job: report.jobId,
      from: report.takenOverFrom,
    });
  if (report?.cancelledFor)
    log('warn', 'bulk replay cancelled: its starter may no longer do it', {
      job: report.jobId,
      cause: report.cancelledFor,
    });
  if (report?.finished) log('info', 'bulk replay completed', { job: report.jobId });
}

/**
 * The server-side bulk replay worker (docs/design.md#bulk-replay). Its state is all in the
 * database, so a restarted worker resumes every unfinished RUNNING job where the last
 * committed batch left it. A job stays with one instance while that instance's lease on
 * it holds (each batch renews it); once the lease runs out, another instance takes it over.
 * A job whose starter was disabled or lost the permission is cancelled at its next batch.
 */
export function startBulkReplayWorker({
  unitOfWork,
  log,
  batchSize = BULK_REPLAY_BATCH_SIZE,
  idleMs = 1_000,
  worker: lease = processWorker(),
}: BulkReplayWorkerOptions): RunningWorker {
  return startWorkerLoop({
    name: 'bulk replay worker',
    announce: { batchSize, instance: lease.instance },
    log,
    errorDelayMs: 5_000,
    async step() {
      const report = await processBulkReplayBatch({ unitOfWork }, lease, batchSize);
      reportBatch(log, report);
      return report ? 0 : idleMs;
    },
  });
}

/**
 * Runs batches until no job is running, or `maxBatches` ran; returns how many ran. For
 * the CLI and tests, which want the queue drained now rather than polled.
 */
export async function runBulkReplayBatches(
  deps: SettlementServiceDeps,
  options: { batchSize?: number; maxBatches?: number; log?: WorkerLog; worker?: BulkWorkerLease } = {},
): Promise<number> {
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  let batches = 0;
  while (batches < maxBatches) {
    const report = await processBulkReplayBatch(
      deps,
      options.worker ?? processWorker(),
      options.batchSize ?? BULK_REPLAY_BATCH_SIZE,
    );
    if (!report) break;
    batches += 1;
    if (options.log) reportBatch(options.log, report);
  }
  return batches;
}
