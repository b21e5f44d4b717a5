import { createHash } from 'node:crypto';
import { totalValue, totalResult, err, ok, type Result } from './result';
import {
  MAX_U32,
  invalidRecord,
  isFailureCode,
  isSha256Hex,
  type BulkReplayItemResult,
  type FailureCode,
  type InvalidRecord,
  type SettlementEventKind,
  type SettlementOutcome,
  type SettlementRoute,
} from './settlement-vocabulary';

export const DEAD_LETTER_SCHEMA = 'chio.settle.dead-letter.v2';

/** The hex SHA-256 a failure stores in place of its detail (the runtime's `from_detail`). */
export function failureDetailSha256Hex(detail: string): string {
  return createHash('sha256').update(detail, 'utf8').digest('hex');
}

/** The digest of an empty detail, which every outcome without a digest stores: hashed once. */
const EMPTY_DETAIL_SHA256_HEX = failureDetailSha256Hex('');

export interface FailureReason {
  code: FailureCode;
  detailSha256Hex: string;
}

/**
 * The reason a failed outcome persists. An outcome without a digest is treated as an
 * empty detail, so the stored reason always has the 32 bytes the runtime requires.
 */
function failureReasonOfUnchecked(outcome: SettlementOutcome): FailureReason | null {
  if (outcome.kind !== 'Retryable' && outcome.kind !== 'Permanent') return null;
  return { code: outcome.code, detailSha256Hex: outcome.detailSha256 ?? EMPTY_DETAIL_SHA256_HEX };
}

export interface DeadLetterInput {
  receiptId: string;
  finalizedAt: number;
  /** Total hook invocations, at least one. */
  attempts: number;
  reasonCode: FailureCode;
  detailSha256Hex: string;
}

const LONE_SURROGATE = /\p{Cs}/u;
const SCHEMA_JSON = JSON.stringify(DEAD_LETTER_SCHEMA);

/**
 * The RFC 8785 JSON stored in `settle.dead_letters.canonical_json`. The runtime's
 * reason holds `detail_sha256: [u8; 32]`, which serde writes as an array of 32
 * integers (never hex, never null); the same shape is written here so the runtime can
 * read Keel's dead letters and an equal outcome re-recorded compares byte for byte.
 */
function deadLetterCanonicalJsonUnchecked(input: DeadLetterInput): Result<string, InvalidRecord> {
  const { receiptId, finalizedAt, attempts, reasonCode, detailSha256Hex } = input;
  if (receiptId === '') return err(invalidRecord('receipt_id must not be empty'));
  if (LONE_SURROGATE.test(receiptId)) return err(invalidRecord('receipt_id is not well-formed Unicode'));
  if (!Number.isSafeInteger(finalizedAt) || finalizedAt < 0) {
    return err(invalidRecord(`finalized_at is not an integer below 2^53: ${finalizedAt}`));
  }
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > MAX_U32) {
    return err(invalidRecord(`attempts must be a u32 of at least one: ${attempts}`));
  }
  if (!isFailureCode(reasonCode)) return err(invalidRecord(`unknown settlement failure code ${reasonCode}`));
  if (!isSha256Hex(detailSha256Hex)) return err(invalidRecord('detail_sha256 is not 32 bytes of hex'));
  // RFC 8785 for this one shape, written out (a settlement worker writes one per dead
  // letter): members in code-unit order, integers as digits, strings as JSON.stringify
  // writes a well-formed one. test/unit/settlement.test.ts holds it equal to canonicalize.
  const detail = Buffer.from(detailSha256Hex, 'hex').join(',');
  return ok(
    `{"attempts":${attempts},"finalized_at":${finalizedAt},"reason":{"code":${JSON.stringify(reasonCode)},` +
      `"detail_sha256":[${detail}]},"receipt_id":${JSON.stringify(receiptId)},"schema":${SCHEMA_JSON}}`,
  );
}

/** The history event a committed route writes to `keel.settlement_event`. */
export function settlementEventKindForRoute(route: SettlementRoute): SettlementEventKind {
  switch (route.kind) {
    case 'NoAction':
      return 'finished';
    case 'RetryScheduled':
      return 'retry_scheduled';
    case 'DeadLettered':
      return 'dead_lettered';
  }
}

/** A bulk preview larger than this is refused rather than truncated. */
export const BULK_REPLAY_PREVIEW_CAP = 100_000;
/** Receipts a bulk replay job handles per transaction. */
export const BULK_REPLAY_BATCH_SIZE = 1024;

/** Replays are idempotent by operation id, so a resumed job cannot replay an item twice. */
export function bulkReplayItemOperationId(jobId: string, receiptId: string): string {
  return `${jobId}:${receiptId}`;
}

export interface BulkReplayItemState {
  /** A replay with this item's operation id is already recorded. */
  alreadyReplayed: boolean;
  /** The dead letter as it stands now, or null once it is gone. */
  deadLetter: { recordedAtMs: number } | null;
  /** `recorded_at_ms` of the dead letter frozen into the preview. */
  previewRecordedAtMs: number;
}

/**
 * What a bulk replay job does with one frozen item. A dead letter recorded again after
 * the preview is a different failure than the one support reviewed, so it is left alone.
 */
export function classifyBulkReplayItem(state: BulkReplayItemState): BulkReplayItemResult {
  if (state.alreadyReplayed) return 'already_replayed';
  if (state.deadLetter === null) return 'no_longer_dead_lettered';
  if (state.deadLetter.recordedAtMs !== state.previewRecordedAtMs) return 'changed_since_preview';
  return 'replayed';
}

// Malformed input (a missing field, a wrong type) is an error value or a safe answer, never a throw.
export const deadLetterCanonicalJson = totalResult(deadLetterCanonicalJsonUnchecked, (reason) => ({
  kind: 'InvalidRecord' as const,
  detail: `malformed input: ${reason}`,
}));
export const failureReasonOf = totalValue(failureReasonOfUnchecked, null);
