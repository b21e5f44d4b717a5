import type { Result } from '../../domain/result';
import type {
  ClaimValidationError,
  RetryPolicy,
  SettlementAttemptClaim,
  SettlementOutcome,
  SettlementRoute,
  SettlementRouteError,
} from '../../domain/settlement';

/** The 32 bytes that identify one settlement ledger; every handle on a database returns the same. */
export type SettlementStoreBinding = Buffer;

/** Claims fail on their bounds (WorkerIdLength, LeaseDuration, ClaimBatch) or as any store call. */
export type SettlementClaimError = ClaimValidationError | SettlementRouteError;

export interface EnqueueSettlement {
  receiptId: string;
  /** When the receipt was finalized, epoch ms; carried unchanged into a dead letter. */
  finalizedAt: number;
  /** Visible (due) from this time, epoch ms. */
  nowMs: number;
}

/**
 * The settlement runtime's outcome store over Postgres (docs/design.md#settlement-claims). Workers claim
 * due attempts under a lease and commit each outcome only while the row still equals
 * their claim, so a worker that lost its lease can never overwrite another's work.
 * Times are the caller's epoch milliseconds, as the runtime passes them.
 */
export interface SettlementOutcomeStore {
  settlementStoreBinding(): Promise<Result<SettlementStoreBinding, SettlementRouteError>>;

  /**
   * Queues a finalized receipt (`pending_observation`, attempts 0, due now). A receipt
   * already queued or dead-lettered is a Conflict.
   */
  enqueue(input: EnqueueSettlement): Promise<Result<void, SettlementRouteError>>;

  /** Claims one receipt; null when a live lease holds it, it is not yet due, or it is absent. */
  claimReceipt(
    receiptId: string,
    workerId: string,
    nowMs: number,
    leaseMs: number,
  ): Promise<Result<SettlementAttemptClaim | null, SettlementClaimError>>;

  /**
   * Claims up to `limit` due rows in `(next_visible_at_ms, receipt_id)` order, skipping
   * rows another worker is claiming right now rather than waiting for it.
   */
  claimDue(
    workerId: string,
    nowMs: number,
    leaseMs: number,
    limit: number,
  ): Promise<Result<SettlementAttemptClaim[], SettlementClaimError>>;

  /**
   * Commits an outcome for an exact, unexpired claim. Terminal timestamps and attempt
   * counts come from the persisted row, which must equal the claim. `observedAtMs` is
   * both the lease check time and the base of a retry's visibility deadline.
   */
  recordClaimedOutcome(
    claim: SettlementAttemptClaim,
    outcome: SettlementOutcome,
    policy: RetryPolicy,
    observedAtMs: number,
  ): Promise<Result<SettlementRoute, SettlementRouteError>>;

  /**
   * The batch form of `recordClaimedOutcome`, for a runtime's workers: one statement
   * for the whole batch, with the same compare-and-set per row and the same routes.
   * Each item gets its own result, in input order: a stale or foreign claim is refused
   * alone (Conflict) and the rest commit. The outer error is only a failure of the
   * whole batch (database down, more than MAX_SETTLEMENT_CLAIM_BATCH items).
   */
  recordClaimedOutcomes(
    items: readonly ClaimedOutcome[],
    policy: RetryPolicy,
    observedAtMs: number,
  ): Promise<Result<Result<SettlementRoute, SettlementRouteError>[], SettlementRouteError>>;
}

/** One claimed row and the outcome its hook answered, as a batch item. */
export interface ClaimedOutcome {
  claim: SettlementAttemptClaim;
  outcome: SettlementOutcome;
}
