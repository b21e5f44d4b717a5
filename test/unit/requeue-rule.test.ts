import { describe, expect, it } from 'vitest';
import { bulkRequeueItemResult, requeueRefusal, type RequeueCandidate } from '../../lib/domain/requeue-rule';

const NOW = 1_700_000_000_000;
const retry: RequeueCandidate = { workKind: 'retry_scheduled', rowVersion: 4, leaseUntilMs: null };

describe('requeueRefusal', () => {
  it('lets a retry at the expected version with no live lease through', () => {
    expect(requeueRefusal(retry, 4, NOW)).toBeNull();
    // A lapsed lease is no lease.
    expect(requeueRefusal({ ...retry, leaseUntilMs: NOW }, 4, NOW)).toBeNull();
  });

  it('refuses an absent row, a pending observation, a changed row and a live lease, in that order', () => {
    expect(requeueRefusal(null, 4, NOW)).toEqual({ kind: 'not_queued' });
    expect(requeueRefusal({ ...retry, workKind: 'pending_observation', rowVersion: 9 }, 4, NOW)).toEqual({
      kind: 'not_retry_scheduled',
    });
    expect(requeueRefusal({ ...retry, rowVersion: 5, leaseUntilMs: NOW + 1 }, 4, NOW)).toEqual({
      kind: 'changed',
      rowVersion: 5,
    });
    expect(requeueRefusal({ ...retry, leaseUntilMs: NOW + 1 }, 4, NOW)).toEqual({ kind: 'leased' });
  });

  it('maps each refusal to a bulk requeue item result', () => {
    expect(bulkRequeueItemResult({ kind: 'not_queued' })).toBe('no_longer_retry_scheduled');
    expect(bulkRequeueItemResult({ kind: 'not_retry_scheduled' })).toBe('no_longer_retry_scheduled');
    expect(bulkRequeueItemResult({ kind: 'changed', rowVersion: 5 })).toBe('changed_since_preview');
    expect(bulkRequeueItemResult({ kind: 'leased' })).toBe('changed_since_preview');
  });
});
