import type { RecoverySnapshot } from '../domain/recovery';
import type { Result } from '../domain/result';

export type RecoveryRepositoryError =
  | { kind: 'ExecutionNotFound'; executionId: number }
  /** The owner token to compare with is not 16 bytes. */
  | { kind: 'InvalidOwnerToken' }
  | { kind: 'Unavailable' };

/** One bounded, value-redacted observation read with the database's clock (docs/design.md#recovery-snapshot). */
export interface RecoveryRepository {
  /**
   * Reads the snapshot in one statement. The owner token is compared in SQL and
   * never selected, so it cannot leak through the result.
   */
  recoverySnapshot(
    executionId: number,
    currentOwnerToken: Uint8Array,
  ): Promise<Result<RecoverySnapshot, RecoveryRepositoryError>>;
}
