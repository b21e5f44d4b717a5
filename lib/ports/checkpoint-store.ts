import type { CheckpointErrorOf, DurableCheckpoint, InvalidCheckpoint } from '../domain/checkpoint';
import type { Result } from '../domain/result';

export type CheckpointSaveError = CheckpointErrorOf<'InvalidCheckpoint' | 'StaleLease'>;

export interface LoadedCheckpoint {
  checkpoint: DurableCheckpoint;
  /** The database's clock when the row was read (epoch ms). */
  serverTimeMs: number;
}

/** An orchestration whose authenticated lease has expired by the server's clock. */
export interface TakeoverCandidate {
  executionId: string;
  leaseOwner: string;
  fencingToken: number;
  expiresAtMs: number;
  authenticationTag: string;
  evidenceDigestHex: string;
}

export interface CandidateCursor {
  expiresAtMs: number;
  executionId: string;
}

export interface TakeoverCandidatePage {
  candidates: TakeoverCandidate[];
  serverTimeMs: number;
  /** Expired rows on this page whose tag did not verify: never candidates, counted so a page can say so. */
  unauthenticated: number;
  nextCursor: CandidateCursor | null;
}

/**
 * Authenticated persistence of durable orchestration checkpoints (docs/design.md#orchestration-checkpoints).
 * The store holds the signing key; it never enters a checkpoint or a result.
 */
export interface CheckpointStore {
  /** Null when absent; InvalidCheckpoint when the stored row cannot be read back. */
  load(
    executionId: string,
    options?: { forUpdate?: boolean },
  ): Promise<Result<LoadedCheckpoint | null, InvalidCheckpoint>>;
  /**
   * Validates, seals and replaces atomically: only a higher fencing token, or the
   * same token held by the same owner, replaces the stored checkpoint.
   */
  save(checkpoint: DurableCheckpoint): Promise<Result<DurableCheckpoint, CheckpointSaveError>>;
  /** True when the tag is the server key's HMAC of the checkpoint. */
  verify(checkpoint: DurableCheckpoint): boolean;
  /** Expired, authenticated leases, oldest expiry first, keyset-paged. */
  takeoverCandidates(page: { after?: CandidateCursor | null; limit: number }): Promise<TakeoverCandidatePage>;
}
