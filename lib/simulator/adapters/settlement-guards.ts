import 'server-only';
import { err, type Result } from '../../domain/result';
import { backendError, type SettlementAttemptClaim, type SettlementRouteError } from '../../domain/settlement';
import { loggableError } from '../../observability/safe-error';

// What the single-outcome and the batch paths of the settlement store share: input bounds
// and how a database failure becomes a Backend value.

export const isEpochMs = (value: number): boolean => Number.isSafeInteger(value) && value >= 0;

/**
 * A failure as a Backend detail: the error's class, SQLSTATE and constraint only. A
 * driver message can quote the row's values (receipt ids, lease tokens).
 */
function describe(error: unknown): string {
  const { name, cause, code, constraint } = loggableError(error);
  return [cause ?? name, code, constraint].filter(Boolean).join(' ');
}

/** Database failures become Backend values: the port never throws. */
export async function guarded<T, E>(work: () => Promise<Result<T, E>>): Promise<Result<T, E | SettlementRouteError>> {
  try {
    return await work();
  } catch (error) {
    return err(backendError(describe(error)));
  }
}

export function claimProblem(claim: SettlementAttemptClaim): string | null {
  if (typeof claim.receiptId !== 'string' || claim.receiptId === '') return 'claim receipt_id is empty';
  for (const [name, value] of [
    ['finalized_at', claim.finalizedAt],
    ['row_version', claim.rowVersion],
    ['lease_until_ms', claim.leaseUntilMs],
  ] as const) {
    if (!isEpochMs(value)) return `claim ${name} is not an integer in 0..2^53: ${value}`;
  }
  if (!claim.leaseOwner || !claim.leaseToken) return 'claim has no lease owner or token';
  return null;
}
