import { newOperationId } from '../users/operation-id';

// Apart from the dialog, so a list can make a target without loading the dialog's code before it opens.

export interface DeadLetterTarget {
  kind: 'replay' | 'discard';
  receiptId: string;
  reason: string;
  attempts: number;
  /** Made when the dialog opens: a double click or a resubmit of this dialog acts once. */
  operationId: string;
}

export const deadLetterTarget = (
  kind: DeadLetterTarget['kind'],
  row: { receiptId: string; reason: string; attempts: number },
): DeadLetterTarget => ({
  kind,
  receiptId: row.receiptId,
  reason: row.reason,
  attempts: row.attempts,
  operationId: newOperationId(),
});
