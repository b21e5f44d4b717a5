import { createHash } from 'node:crypto';
import { isOperationId, OPERATION_ID_MAX_LENGTH } from '../domain/identifier-patterns';
import { bulkReplayItemOperationId } from '../domain/settlement';

/** Marks a bulk item operation id whose receipt part is a digest, not the receipt itself. */
const DIGEST_MARK = 'sha256.';

/**
 * A bulk item's operation id: `<job>:<receipt>` (docs/design.md#bulk-replay) whenever that is a
 * valid operation id. Receipt ids are free text of any length, so a receipt that would
 * break the 64-character bound or the character set is replaced by the hex SHA-256 of
 * its UTF-8 bytes, cut to fit: `<job>:sha256.<hex>`, at least 37 hex digits (148 bits)
 * even for a 19-digit job id. A receipt that itself starts with the mark is hashed too,
 * so a literal receipt can never pose as another receipt's digest.
 */
export function bulkReplayOperationId(jobId: number, receiptId: string): string {
  const plain = bulkReplayItemOperationId(String(jobId), receiptId);
  if (isOperationId(plain) && !receiptId.startsWith(DIGEST_MARK)) return plain;
  const prefix = `${jobId}:${DIGEST_MARK}`;
  const digest = createHash('sha256').update(receiptId, 'utf8').digest('hex');
  return prefix + digest.slice(0, OPERATION_ID_MAX_LENGTH - prefix.length);
}
