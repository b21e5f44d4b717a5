import 'server-only';
import type { Actor } from '../domain/actor';
import type { BulkRequeueSampleItem } from '../ports/bulk-replay';
import { PREVIEW_SAMPLE_SIZE } from './bulk-replay';
import type { ServiceResult } from './kernel';
import { runSettlementAction, settlementRequest, type SettlementServiceDeps } from './settlement-action';

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
  deps: SettlementServiceDeps,
  actor: Actor,
  input: { receiptIds: readonly string[]; note: string },
): Promise<ServiceResult<BulkRequeuePreview>> {
  const { note } = input;
  // The schema bounds the selection (1 to 1,000 receipt ids); a receipt ticked twice counts once.
  const receiptIds = [...new Set(input.receiptIds)];
  const request = settlementRequest(actor, 'settlement.bulk_replay.preview', { kind: 'bulk_replay', id: 'new' }, input);
  return runSettlementAction(deps, request, async ({ replays, bulk }) => {
    const asOfMs = await replays.serverNowMs();
    const { jobId, itemCount } = await bulk.createRequeuePreview({ actor, note, receiptIds, asOfMs });
    const sample = await bulk.requeueSample(jobId, PREVIEW_SAMPLE_SIZE);
    return {
      value: { jobId, itemCount, selectedCount: receiptIds.length, asOfMs, sample },
      audit: true,
      targetId: String(jobId),
      after: { action: 'REQUEUE', filter: { receiptIds }, asOfMs, itemCount },
    };
  });
}
