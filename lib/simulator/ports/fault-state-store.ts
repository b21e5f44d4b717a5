import type { FailureCategory, FaultPhase } from '../../domain/batch-status';
import type { FaultStateError } from '../../domain/fault-state';
import type { Result } from '../../domain/result';

export type { FaultStateError };

/**
 * The step execution a store reads and writes, with the bounds of the step's fault
 * policy. The runtime holds the validated policy, so it supplies the limit and the
 * classifier revision rather than the store re-reading them from the manifest.
 */
export interface FaultStateBinding {
  stepExecutionId: number;
  jobExecutionId: number;
  /** 1..256: how many keys the envelope may retain, resolved or not, until cleared. */
  retryStateLimit: number;
  /** Recorded with every entry this store writes. */
  classifierRevision: string;
}

/** One retry the runtime asks to consume, after a known rollback and before backoff. */
export interface RetryReservation {
  /** 64 lowercase hex digits. */
  key: string;
  phase: FaultPhase;
  category: FailureCategory;
  /** Exactly the stored ordinal plus one; 1 for a new key. */
  ordinal: number;
  /**
   * The committed checkpoint the key was derived under. Every retained entry
   * belongs to one checkpoint, so a reservation under another one is corruption.
   */
  checkpointDigest: string;
}

/**
 * Durable, bounded retry-reservation state for one step execution (docs/design.md#fault-state-store).
 * `reserve` is a compare-and-swap: a stale or concurrent writer loses instead of
 * spending one ordinal twice. Resolved keys are process-local until `clearResolved`
 * runs in the commit that advances the checkpoint.
 */
export interface FaultStateStore {
  /** Binds the store to a step; it cannot read or write before. Refuses a corrupt envelope. */
  bind(step: FaultStateBinding): Promise<Result<void, FaultStateError>>;
  reservedOrdinal(key: string): Promise<Result<number | null, FaultStateError>>;
  reserve(reservation: RetryReservation): Promise<Result<void, FaultStateError>>;
  /** Marks a key resolved in this store only: uncommitted work may still replay. */
  resolve(key: string): Promise<Result<void, FaultStateError>>;
  /** Writes the envelope minus the resolved keys, which must leave it empty. */
  clearResolved(): Promise<Result<void, FaultStateError>>;
  unresolved(): Promise<Result<number, FaultStateError>>;
}
