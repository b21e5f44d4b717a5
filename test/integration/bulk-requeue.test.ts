import { describe, expect, it } from 'vitest';
import { bulkRequeuePreviewSchema } from '../../app/actions/settlement-schemas';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import type { Actor } from '../../lib/domain/actor';
import { bulkReplayItems, bulkReplayProgress, startBulkReplay } from '../../lib/services/bulk-replay';
import { previewBulkRequeue } from '../../lib/services/bulk-requeue';
import { bulkReplayOperationId } from '../../lib/services/settlement-operation-id';
import { action } from '../../lib/server/action';
import { runBulkReplayBatches } from '../../lib/workers/bulk-replay-worker';
import { actionDepsFor } from '../support/actions';
import { freshDatabase } from '../support/database';
import { bulkJobActors } from '../support/keel-users';

const { pool, db } = await freshDatabase();
const deps = { unitOfWork: postgresSettlementUnitOfWork(db) };
const { support, admin, viewer } = await bulkJobActors(pool);
const HOUR = 3_600_000;

const serverNowMs = async () =>
  Number((await pool.query(`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`)).rows[0].ms);

/** A settlement queued in `work_kind`, visible at `nextVisibleAtMs`, at row version 4, 3 attempts. */
async function queued(
  receiptId: string,
  nextVisibleAtMs: number,
  workKind = 'retry_scheduled',
  leaseUntilMs: number | null = null,
) {
  await pool.query(
    `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       lease_owner, lease_token, lease_until_ms, reason_code, updated_at_ms)
     values ($1, 1, $2, 3, $3, 4, $4, $5, $6, 'rpc', 1)`,
    [
      receiptId,
      workKind,
      nextVisibleAtMs,
      leaseUntilMs === null ? null : 'worker-1',
      leaseUntilMs === null ? null : 'token',
      leaseUntilMs,
    ],
  );
}

async function attempt(receiptId: string) {
  const { rows } = await pool.query(
    `select attempts, row_version, next_visible_at_ms from settle.attempts where receipt_id = $1`,
    [receiptId],
  );
  return rows[0] as { attempts: number; row_version: number; next_visible_at_ms: number } | undefined;
}

describe('bulk requeue of retry-scheduled settlements', () => {
  it('freezes the ticked retry-scheduled rows; one changed since is reported, left alone; rest requeued', async () => {
    const later = (await serverNowMs()) + HOUR;
    for (const id of ['rq-1', 'rq-2', 'rq-3', 'rq-4', 'rq-untouched']) await queued(id, later);
    await queued('rq-due', 1_000); // due already: not retry-scheduled on the queue
    await queued('rq-pending', later, 'pending_observation');
    await queued('rq-leased', later, 'retry_scheduled', later);

    const ticked = ['rq-3', 'rq-1', 'rq-1', 'rq-2', 'rq-4', 'rq-due', 'rq-pending', 'rq-leased', 'rq-absent'];
    const preview = await previewBulkRequeue(deps, support, { receiptIds: ticked, note: 'ledger is back' });
    if (!preview.ok) throw new Error(preview.error.code);
    expect(preview.value).toMatchObject({ itemCount: 4, selectedCount: 8 });
    expect(preview.value.sample.map((s) => s.receiptId)).toEqual(['rq-1', 'rq-2', 'rq-3', 'rq-4']);
    expect(preview.value.sample[0]).toEqual({
      receiptId: 'rq-1',
      attempts: 3,
      reasonCode: 'rpc',
      nextVisibleAtMs: later,
    });
    const { jobId } = preview.value;
    const frozen = await pool.query(
      `select receipt_id, row_version from keel.bulk_replay_item where job = $1 order by receipt_id`,
      [jobId],
    );
    expect(frozen.rows).toEqual(['rq-1', 'rq-2', 'rq-3', 'rq-4'].map((receipt_id) => ({ receipt_id, row_version: 4 })));
    const job = await pool.query(`select action, status, item_count from keel.bulk_replay where id = $1`, [jobId]);
    expect(job.rows[0]).toEqual({ action: 'REQUEUE', status: 'PREVIEWED', item_count: 4 });

    // After the preview: a worker claims and retries rq-2 (its row moves on), and rq-4 finishes.
    await pool.query(
      `update settle.attempts set row_version = row_version + 1, attempts = attempts + 1 where receipt_id = 'rq-2'`,
    );
    await pool.query(`delete from settle.attempts where receipt_id = 'rq-4'`);

    // Nothing moves until someone starts it; the same person may (as with a bulk replay).
    expect(await runBulkReplayBatches(deps)).toBe(0);
    expect((await attempt('rq-1'))!.next_visible_at_ms).toBe(later);
    expect(await startBulkReplay(deps, support, { jobId })).toMatchObject({
      ok: true,
      value: { status: 'RUNNING' },
    });
    const beforeWork = await serverNowMs();
    expect(await runBulkReplayBatches(deps, { batchSize: 3 })).toBe(2);

    const progress = await bulkReplayProgress(deps, viewer, jobId);
    expect(progress).toMatchObject({
      ok: true,
      value: {
        job: { status: 'COMPLETED', processedCount: 4 },
        counts: { requeued: 2, changed_since_preview: 1, no_longer_retry_scheduled: 1, pending: 0 },
      },
    });
    const items = await bulkReplayItems(deps, viewer, { jobId });
    expect(items.ok && items.value.items.map((i) => [i.receiptId, i.result])).toEqual([
      ['rq-1', 'requeued'],
      ['rq-2', 'changed_since_preview'],
      ['rq-3', 'requeued'],
      ['rq-4', 'no_longer_retry_scheduled'],
    ]);

    // Requeued as a single requeue does: due now, row version + 1, attempts untouched.
    for (const id of ['rq-1', 'rq-3']) {
      const row = (await attempt(id))!;
      expect(row).toMatchObject({ attempts: 3, row_version: 5 });
      expect(row.next_visible_at_ms).toBeGreaterThanOrEqual(beforeWork);
      expect(row.next_visible_at_ms).toBeLessThan(later);
    }
    // Left alone: the changed row, the rows never frozen.
    expect(await attempt('rq-2')).toEqual({ attempts: 4, row_version: 5, next_visible_at_ms: later });
    for (const id of ['rq-untouched', 'rq-pending', 'rq-leased']) expect((await attempt(id))!.row_version).toBe(4);
    expect((await attempt('rq-due'))!.next_visible_at_ms).toBe(1_000);

    const events = await pool.query(
      `select receipt_id from keel.settlement_event where kind = 'requeued' order by receipt_id`,
    );
    expect(events.rows.map((r) => r.receipt_id)).toEqual(['rq-1', 'rq-3']);
    const audit = await pool.query(
      `select target_id, actor_login, reason, operation_id, outcome, before->>'attempts' as attempts,
       (after->>'bulkJob')::bigint as job
       from keel.audit_event where action = 'settlement.requeue' order by target_id`,
    );
    expect(audit.rows).toEqual(
      ['rq-1', 'rq-3'].map((id) => ({
        target_id: id,
        actor_login: 'support',
        reason: 'ledger is back',
        operation_id: bulkReplayOperationId(jobId, id),
        outcome: 'APPLIED',
        attempts: '3',
        job: jobId,
      })),
    );
  });

  it('a second person may start it, and the items are requeued under the starter', async () => {
    await queued('rq-b1', (await serverNowMs()) + HOUR);
    const preview = await previewBulkRequeue(deps, support, {
      receiptIds: ['rq-b1'],
      note: 'second pair of eyes',
    });
    if (!preview.ok) throw new Error(preview.error.code);
    expect(await startBulkReplay(deps, admin, { jobId: preview.value.jobId })).toMatchObject({
      ok: true,
      value: { startedBy: { login: 'admin' } },
    });
    await runBulkReplayBatches(deps);
    const audit = await pool.query(
      `select actor_login from keel.audit_event where action = 'settlement.requeue' and target_id = 'rq-b1'`,
    );
    expect(audit.rows).toEqual([{ actor_login: 'admin' }]);
  });

  it('refuses a viewer, an empty note and an empty selection, freezing nothing', async () => {
    await queued('rq-r1', (await serverNowMs()) + HOUR);
    const jobsBefore = Number((await pool.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n);
    // The preview action's own wiring (app/actions/settlements.ts), on this database.
    const preview = (actor: Actor) =>
      action(
        bulkRequeuePreviewSchema,
        'settlement.bulk_replay.preview',
        (who, input) => previewBulkRequeue(deps, who, input),
        { deps: actionDepsFor(db, actor) },
      );
    const refusals = [
      [viewer, ['rq-r1'], 'note', 'FORBIDDEN'],
      [support, ['rq-r1'], '  ', 'INVALID_INPUT'],
      [support, [], 'note', 'INVALID_INPUT'],
    ] as const;
    for (const [actor, receiptIds, note, code] of refusals) {
      expect(await preview(actor)({ receiptIds: [...receiptIds], note })).toMatchObject({ ok: false, code });
    }
    // The service holds a caller without the wrapper to the role as well.
    expect(await previewBulkRequeue(deps, viewer, { receiptIds: ['rq-r1'], note: 'note' })).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN' },
    });
    expect(Number((await pool.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n)).toBe(jobsBefore);
    const refused = await pool.query(
      `select count(*)::int as n from keel.audit_event where action = 'settlement.bulk_replay.preview'
       and outcome = 'REFUSED'`,
    );
    expect(refused.rows[0].n).toBe(4);
  });
});
