import 'server-only';
import { DEFAULT_EXPIRY_BATCH, expireProposals, HOUSEKEEPING_ACTOR } from '../services/expire-proposals';
import type { RecoveryServiceDeps } from '../services/recovery-common';
import { startWorkerLoop, type RunningWorker, type WorkerLog, type WorkerWait } from './worker-loop';

export const PROPOSAL_EXPIRY_INTERVAL_MS = 15_000;

export interface ProposalExpiryOptions {
  deps: Pick<RecoveryServiceDeps, 'unitOfWork'>;
  log: WorkerLog;
  intervalMs?: number;
  /** How the sweep waits between runs (a timer unless a test drives it). */
  wait?: WorkerWait;
}

/**
 * Closes PENDING proposals past their approval deadline as EXPIRED, every interval, so
 * lists, counts, alerts and the `proposal.expired` webhook follow the deadline without
 * anyone opening the proposal. Several Keel processes may sweep at once: each skips the
 * rows another holds.
 */
export function startProposalExpiry({
  deps,
  log,
  intervalMs = PROPOSAL_EXPIRY_INTERVAL_MS,
  wait,
}: ProposalExpiryOptions): RunningWorker {
  return startWorkerLoop({
    name: 'proposal expiry',
    announce: { intervalMs },
    log,
    errorDelayMs: intervalMs,
    wait,
    async step() {
      const result = await expireProposals(deps, HOUSEKEEPING_ACTOR, { limit: DEFAULT_EXPIRY_BATCH });
      if (!result.ok) {
        log('warn', 'proposal expiry refused', { code: result.error.code });
        return intervalMs;
      }
      const count = result.value.expired.length;
      if (count > 0) log('info', 'proposals expired past their deadline', { count });
      // A full batch may leave more behind: go on at once.
      return count === DEFAULT_EXPIRY_BATCH ? 0 : intervalMs;
    },
  });
}
