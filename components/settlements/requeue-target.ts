import { newOperationId } from '../users/operation-id';

// Apart from the dialog, so a list can make a target without loading the dialog's code before it opens.

export interface RequeueTarget {
  receiptId: string;
  attempts: number;
  nextVisibleAtMs: number;
  /** The row version shown: a row that changed since is refused with CONFLICT, not requeued. */
  rowVersion: number;
  operationId: string;
}

export const requeueTarget = (row: Omit<RequeueTarget, 'operationId'>): RequeueTarget => ({
  ...row,
  operationId: newOperationId(),
});
