import { isFailureCode, isRetryableFailureCode, type FailureCode } from './settlement-vocabulary';

/**
 * A settlement failure in words (docs/console.md#settlements). The runtime persists a failure
 * as its code and the SHA-256 of its detail, never the detail (docs/design.md#settlement-vocabulary),
 * so this is all there is to say: what the code names, whether another try can succeed, and the
 * digest to look the detail up by in the team's own logs. No node:crypto here: pages import it.
 */

/** The SHA-256 of the empty detail, which an outcome without a detail stores. */
export const EMPTY_DETAIL_SHA256_HEX = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** How many hex digits a list shows of a 64-digit digest (as of a retry key). */
export const SHORT_HEX_DIGITS = 12;

/** What each failure code names, as the end of "the settlement failed: …". */
export const FAILURE_CODE_WORDS: Record<FailureCode, string> = {
  invalid_receipt_signature: 'the receipt’s signature did not verify',
  invalid_action_hash: 'the receipt’s action hash did not match',
  untrusted_receipt_signer: 'the receipt was signed by a signer the runtime does not trust',
  malformed_financial_metadata: 'the receipt’s financial metadata was malformed',
  invalid_observation: 'the observation of the settlement was invalid',
  rpc: 'a remote call failed',
  invalid_input: 'the settlement’s input was invalid',
  invalid_dispatch: 'the dispatch was invalid',
  invalid_binding: 'the binding was invalid',
  unsupported: 'the runtime does not support what the receipt asks for',
  serialization: 'a record could not be serialized or read back',
  signature: 'a signature could not be made or checked',
  verification: 'verification failed',
  backend: 'the storage backend failed',
};

/** The code's meaning; a code outside the vocabulary (a newer runtime's) is named as unknown. */
export function failureCodeWords(code: string): string {
  return isFailureCode(code) ? FAILURE_CODE_WORDS[code] : 'a reason code Keel does not know';
}

/** Whether another try can succeed, in a sentence. */
export function failureRetryWords(code: string): string {
  if (!isFailureCode(code)) return 'Whether another try can succeed is not known.';
  return isRetryableFailureCode(code)
    ? 'Transport and storage failures can succeed on another try, so a replay may settle it.'
    : 'The same input fails the same way: a replay repeats the failure unless its cause is fixed.';
}

/** The first digits of a digest, as lists show it. */
export const shortHex = (hex: string): string => hex.slice(0, SHORT_HEX_DIGITS);

/** The detail digest in words: the empty detail is said to be empty rather than shown as a digest. */
export function detailWords(detailSha256Hex: string | null): string {
  if (detailSha256Hex === null) return 'detail digest unreadable';
  if (detailSha256Hex === EMPTY_DETAIL_SHA256_HEX) return 'no detail given';
  return `detail SHA-256 ${shortHex(detailSha256Hex)}…`;
}

/** A dead letter's failure in one line: what its code names, then its detail digest in full. */
export function deadLetterSummary(row: { reason: string; detailSha256Hex: string | null }): string {
  const meaning = failureCodeWords(row.reason);
  const hex = row.detailSha256Hex;
  const detail =
    hex === null || hex === EMPTY_DETAIL_SHA256_HEX ? detailWords(hex) : `detail SHA-256 ${row.detailSha256Hex}`;
  return `${meaning.charAt(0).toUpperCase()}${meaning.slice(1)}; ${detail}.`;
}

/**
 * A list's Detail cell: the digest's first digits (what to search the logs by, and what the
 * receipt's page shows in full), or a word where there is no digest to show.
 */
export function detailCellText(detailSha256Hex: string | null): string {
  if (detailSha256Hex === null) return 'unreadable';
  if (detailSha256Hex === EMPTY_DETAIL_SHA256_HEX) return 'none given';
  return `${shortHex(detailSha256Hex)}…`;
}

export const attemptsWords = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;

/**
 * A dead letter's failure as a sentence from its reason code and attempts; the page adds the
 * time beside it (time rendering is the page's, so this stays free of clocks and zones).
 */
export function deadLetterSentence(row: { reason: string; attempts: number }): string {
  return `Dead-lettered after ${attemptsWords(row.attempts)}: ${failureCodeWords(row.reason)} (${row.reason}).`;
}

/** A queued receipt's last failure as a sentence: the attempt count is the failed tries so far. */
export function retrySentence(row: { reasonCode: string; attempts: number }): string {
  const times = row.attempts === 1 ? 'once' : `${row.attempts} times`;
  return `Failed ${times} so far: ${failureCodeWords(row.reasonCode)} (${row.reasonCode}).`;
}

/** Lowercase hex of a list of byte values, or null when any is not a byte. */
export function bytesToHex(bytes: readonly unknown[]): string | null {
  let hex = '';
  for (const b of bytes) {
    if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255) return null;
    hex += b.toString(16).padStart(2, '0');
  }
  return hex;
}
