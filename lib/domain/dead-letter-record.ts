import { bytesToHex } from './settlement-failure';
import { DEAD_LETTER_SCHEMA } from './settlement-records';

/** The columns of a `settle.dead_letters` row that its JSON repeats. */
export interface DeadLetterColumns {
  receiptId: string;
  finalizedAt: number;
  attempts: number;
  reason: string;
}

/**
 * What the stored JSON of a dead letter says, read for people: the schema, the detail digest as
 * lowercase hex (the JSON holds it as an array of 32 integers, docs/design.md#settlement-outcomes),
 * and each field that disagrees with the row's own column (a row edited by hand, or another
 * writer's bug). A JSON that cannot be read says why instead.
 */
export type DeadLetterRecordReading =
  | { ok: true; schema: string; detailSha256Hex: string; disagreements: string[] }
  | { ok: false; problem: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function readDeadLetterRecord(canonicalJson: string, columns: DeadLetterColumns): DeadLetterRecordReading {
  let record: unknown;
  try {
    record = JSON.parse(canonicalJson);
  } catch {
    return { ok: false, problem: 'the stored record is not JSON' };
  }
  if (!isObject(record)) return { ok: false, problem: 'the stored record is not a JSON object' };
  const reason = record.reason;
  if (!isObject(reason)) return { ok: false, problem: 'the stored record has no reason' };
  const digest = reason.detail_sha256;
  const detailSha256Hex = Array.isArray(digest) && digest.length === 32 ? bytesToHex(digest) : null;
  if (detailSha256Hex === null) {
    return { ok: false, problem: 'the stored record’s reason.detail_sha256 is not 32 bytes' };
  }
  const schema = typeof record.schema === 'string' ? record.schema : '(none)';
  const disagreements: string[] = [];
  if (schema !== DEAD_LETTER_SCHEMA) disagreements.push(`schema is ${schema}, not ${DEAD_LETTER_SCHEMA}`);
  const compare = (field: string, inJson: unknown, inRow: string | number) => {
    if (inJson !== inRow)
      disagreements.push(`${field} is ${JSON.stringify(inJson) ?? 'missing'} in the JSON, ${inRow} in the row`);
  };
  compare('receipt_id', record.receipt_id, columns.receiptId);
  compare('finalized_at', record.finalized_at, columns.finalizedAt);
  compare('attempts', record.attempts, columns.attempts);
  compare('reason.code', reason.code, columns.reason);
  return { ok: true, schema, detailSha256Hex, disagreements };
}
