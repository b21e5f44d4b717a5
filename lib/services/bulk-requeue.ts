import 'server-only';
import type { Actor } from '../domain/actor';
import { MAX_SELECTED_RECEIPTS } from '../domain/dead-letter-filter';
import type { BulkRequeueSampleItem } from '../ports/bulk-replay';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import { PREVIEW_SAMPLE_SIZE } from './bulk-replay';
import { inputProblem, runSettlementAction, type ServiceResult } from './settlement-action';

export interface BulkRequeuePreview {
  jobId: number;
  /** How many of the ticked receipts were retry-scheduled at `asOfMs` and were frozen. */
  itemCount: number;
  /** How many receipts were ticked; the rest had left the retries by the preview. */
  selectedCount: number;
  asOfMs: number;
  sample: BulkRequeueSampleItem[];
}

/**
 * Freezes those of the ticked receipts that are still retry-scheduled into a REQUEUE job
 * (docs/design.md#bulk-replay), each with its row_version; the job is started, cancelled and
 * worked exactly like a bulk replay, and each item is requeued with the single requeue's rule.
 */
export function previewBulkRequeue(
  transactions: UnitOfWork<SettlementReplayPorts>,
  actor: Actor,
  input: { receiptIds: readonly string[]; note: string },
): Promise<ServiceResult<BulkRequeuePreview>> {
  const note = input.note.trim();
  const receiptIds = [...new Set(input.receiptIds)];
  const badSelection =
    receiptIds.length === 0 || receiptIds.length > MAX_SELECTED_RECEIPTS || receiptIds.some((id) => id === '')
      ? { code: 'INVALID_INPUT', message: `Select 1 to ${MAX_SELECTED_RECEIPTS.toLocaleString('en-US')} settlements.` }
      : null;
  return runSettlementAction(transactions, {
    actor,
    action: 'settlement.bulk_replay.preview',
    target: { kind: 'bulk_replay', id: 'new' },
    note,
    invalid: inputProblem({ note, noteRequired: true }) ?? badSelection,
    async work({ replays, bulk }) {
      const asOfMs = await replays.serverNowMs();
      const { jobId, itemCount } = await bulk.createRequeuePreview({ actor, note, receiptIds, asOfMs });
      const sample = await bulk.requeueSample(jobId, PREVIEW_SAMPLE_SIZE);
      return {
        value: { jobId, itemCount, selectedCount: receiptIds.length, asOfMs, sample },
        audit: true,
        targetId: String(jobId),
        after: { action: 'REQUEUE', filter: { receiptIds }, asOfMs, itemCount },
      };
    },
  });
}
