import { createHmac, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  SNAPSHOT_FIELDS,
  invalidCheckpoint,
  toCheckpointJson,
  validateCheckpoint,
  type CheckpointErrorOf,
  type DurableCheckpoint,
  type GoverningSnapshots,
  type InvalidCheckpoint,
  type SnapshotField,
} from './checkpoint-model';
import { totalValue, totalResult, err, ok, type Result } from './result';

export * from './checkpoint-model';
export * from './checkpoint-controls';
export { parseCheckpointJson } from './checkpoint-json';

/**
 * Hex HMAC-SHA256 over the RFC 8785 JSON of the snake_case checkpoint with
 * `authentication_tag` set to "". Expects a checkpoint that passed `validateCheckpoint`
 * (RFC 8785 has no form for NaN or lone surrogates).
 */
export function authenticationTagHex(checkpoint: DurableCheckpoint, key: Buffer): string {
  const canonical = canonicalize(toCheckpointJson({ ...checkpoint, authenticationTag: '' }));
  // canonicalize only yields undefined for an undefined input; an object always encodes.
  return createHmac('sha256', key)
    .update(canonical ?? '', 'utf8')
    .digest('hex');
}

/** Validates, then fills the tag. It always recomputes: a carried-over tag may be stale. */
function sealCheckpointUnchecked(
  checkpoint: DurableCheckpoint,
  key: Buffer,
): Result<DurableCheckpoint, InvalidCheckpoint> {
  const valid = validateCheckpoint(checkpoint);
  if (!valid.ok) return valid;
  return ok({ ...checkpoint, authenticationTag: authenticationTagHex(checkpoint, key) });
}

/** True only for a valid checkpoint whose tag matches, compared in constant time. */
function verifyCheckpointUnchecked(checkpoint: DurableCheckpoint, key: Buffer): boolean {
  if (!validateCheckpoint(checkpoint).ok) return false;
  const expected = Buffer.from(authenticationTagHex(checkpoint, key), 'utf8');
  const actual = Buffer.from(checkpoint.authenticationTag, 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * The fencing rule of `save`: a checkpoint replaces the stored one only with a higher
 * token, or the same token held by the same owner (that owner re-saving its progress).
 */
function canReplaceUnchecked(
  stored: DurableCheckpoint | null,
  incoming: DurableCheckpoint,
): Result<DurableCheckpoint, CheckpointErrorOf<'InvalidCheckpoint' | 'StaleLease'>> {
  // The first save has nothing to replace, but what it stores must still be a checkpoint.
  if (stored === null) return validateCheckpoint(incoming);
  if (stored.executionId !== incoming.executionId) {
    return err(invalidCheckpoint('checkpoint belongs to a different execution'));
  }
  const newer = incoming.lease.fencingToken > stored.lease.fencingToken;
  const sameHolder =
    incoming.lease.fencingToken === stored.lease.fencingToken && incoming.lease.ownerId === stored.lease.ownerId;
  return newer || sameHolder ? ok(incoming) : err({ kind: 'StaleLease' });
}

function differingSnapshotFieldsUnchecked(actual: GoverningSnapshots, expected: GoverningSnapshots): SnapshotField[] {
  return SNAPSHOT_FIELDS.filter((field) => actual[field] !== expected[field]);
}

export type RecoveryError = CheckpointErrorOf<
  'InvalidCheckpoint' | 'AuthenticationFailed' | 'SnapshotMismatch' | 'StaleLease'
>;

/**
 * Fails closed in the order of docs/design.md#checkpoint-rules, so the first broken guarantee is the one
 * reported: presence and completeness, authenticity, governing snapshots, live lease.
 */
function recoverCheckpointUnchecked(
  checkpoint: DurableCheckpoint | null,
  expectedSnapshots: GoverningSnapshots,
  nowMs: number,
  key: Buffer,
): Result<DurableCheckpoint, RecoveryError> {
  if (checkpoint === null) return err(invalidCheckpoint('checkpoint is absent'));
  const valid = validateCheckpoint(checkpoint);
  if (!valid.ok) return valid;
  if (!verifyCheckpoint(checkpoint, key)) return err({ kind: 'AuthenticationFailed' });
  const fields = differingSnapshotFields(checkpoint.snapshots, expectedSnapshots);
  if (fields.length > 0) return err({ kind: 'SnapshotMismatch', fields });
  // Written as negated `>` so a NaN clock counts as expired.
  if (!(checkpoint.lease.expiresAt > nowMs)) return err({ kind: 'StaleLease' });
  return ok(checkpoint);
}

/**
 * An orchestration may be proposed for takeover once its authenticated lease has
 * expired by the server's clock. An unauthenticated checkpoint is never a candidate:
 * its expiry could be forged.
 */
function isTakeoverCandidateUnchecked(checkpoint: DurableCheckpoint, key: Buffer, serverNowMs: number): boolean {
  return verifyCheckpoint(checkpoint, key) && checkpoint.lease.expiresAt <= serverNowMs;
}

// Malformed input (a missing field, a wrong type) is an error value or a safe answer, never a throw.
export const sealCheckpoint = totalResult(sealCheckpointUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
export const canReplace = totalResult(canReplaceUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
export const recoverCheckpoint = totalResult(recoverCheckpointUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
export const verifyCheckpoint = totalValue(verifyCheckpointUnchecked, false);
export const isTakeoverCandidate = totalValue(isTakeoverCandidateUnchecked, false);
export const differingSnapshotFields = totalValue(differingSnapshotFieldsUnchecked, []);
