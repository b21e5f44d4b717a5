import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { runtimeEpochMs } from '../../lib/db/runtime-time';
import { ownerObservation } from '../../lib/db/sql/owner-observation';
import { claimableAt, inQueueState, queueStateCase } from '../../lib/db/sql/queue-state';
import { staleExecution } from '../../lib/db/sql/stale-execution';
import { BATCH_STATUSES, isStaleExecution, type BatchStatus } from '../../lib/domain/batch-status';
import { QUEUE_STATES, queueStateAt } from '../../lib/domain/queue-state';
import { freshDatabase } from '../support/database';

/**
 * Rules that exist both in lib/domain (TypeScript) and in lib/db/sql (SQL fragments):
 * each fragment is evaluated by Postgres over rows on and around its bounds and must
 * agree with the TypeScript rule on every row.
 */
const { db } = await freshDatabase();
const NOW = 1_700_000_000_000;

describe('the queue state', () => {
  it('is the same in SQL and in TypeScript, on and around every bound', async () => {
    const rows: [string | null, number | null, number][] = [];
    for (const leaseUntil of [null, NOW - 1, NOW, NOW + 1]) {
      for (const visible of [NOW - 1, NOW, NOW + 1])
        rows.push([leaseUntil === null ? null : 'worker-a', leaseUntil, visible]);
    }
    const values = sql.join(
      rows.map(([owner, until, visible]) => sql`(${owner}::text, ${until}::bigint, ${visible}::bigint)`),
      sql`, `,
    );
    const { rows: read } = await db.execute<{
      lease_owner: string | null;
      lease_until_ms: string | null;
      next_visible_at_ms: string;
      state: string;
      claimable: boolean;
      due: boolean;
      leased: boolean;
      retry_scheduled: boolean;
    }>(sql`
      select a.lease_owner, a.lease_until_ms, a.next_visible_at_ms, ${queueStateCase(NOW, 'a')} as state,
      ${claimableAt(NOW, 'a')} as claimable,
             ${inQueueState('due', NOW, 'a')} as due, ${inQueueState('leased', NOW, 'a')} as leased,
             ${inQueueState('retry_scheduled', NOW, 'a')} as retry_scheduled
      from (values ${values}) as a(lease_owner, lease_until_ms, next_visible_at_ms)`);
    expect(read).toHaveLength(rows.length);
    for (const row of read) {
      const expected = queueStateAt(
        {
          leaseOwner: row.lease_owner,
          leaseUntilMs: row.lease_until_ms === null ? null : Number(row.lease_until_ms),
          nextVisibleAtMs: Number(row.next_visible_at_ms),
        },
        NOW,
      );
      expect({ row, state: row.state }).toEqual({ row, state: expected });
      expect(row.claimable).toBe(expected === 'due');
      for (const state of QUEUE_STATES) expect(row[state]).toBe(expected === state);
    }
    expect(new Set(read.map((r) => r.state))).toEqual(new Set(QUEUE_STATES));
  });
});

describe('a stale execution', () => {
  it('is the same in SQL and in TypeScript for every status, to the microsecond around the threshold', async () => {
    const thresholdMs = 900_000;
    // The runtime's epoch-ms expression rounds, so the bound sits half a millisecond from a whole one.
    const offsetsUs = [-1_501, -1_000, -501, -500, -499, 0, 499, 500, 501, 1_000, 1_501];
    const values = sql.join(
      BATCH_STATUSES.flatMap((status) =>
        offsetsUs.map(
          (us) =>
            sql`(${status}::text, timestamptz 'epoch' + (${(NOW - thresholdMs) * 1000 + us}::bigint) * interval
                '1 microsecond')`,
        ),
      ),
      sql`, `,
    );
    const { rows } = await db.execute<{ status: BatchStatus; updated_ms: string; stale: boolean }>(sql`
      select x.status, ${runtimeEpochMs(sql`x.updated_at`)} as updated_ms,
             ${staleExecution(thresholdMs, 'x', sql`${NOW}::bigint`)} as stale
      from (values ${values}) as x(status, updated_at)`);
    expect(rows).toHaveLength(BATCH_STATUSES.length * offsetsUs.length);
    for (const row of rows) {
      expect({ row, stale: row.stale }).toEqual({
        row,
        stale: isStaleExecution(row.status, NOW - Number(row.updated_ms), thresholdMs),
      });
    }
    expect(rows.filter((r) => r.stale).length).toBeGreaterThan(0);
    expect(rows.filter((r) => !r.stale && r.status === 'STARTED').length).toBeGreaterThan(0);
  });
});

describe('the owner observation', () => {
  it('tells absent, this process and another process apart without selecting the token', async () => {
    const ours = Buffer.alloc(16, 7);
    const { rows } = await db.execute<{ n: number; owner: string }>(sql`
      select x.n, ${ownerObservation(sql`x.owner_token`, ours)} as owner
      from (values (1, null::bytea), (2, ${ours}::bytea), (3, ${Buffer.alloc(16, 8)}::bytea)) as x(n, owner_token)
      order by x.n`);
    expect(rows.map((r) => r.owner)).toEqual(['ABSENT', 'CURRENT_PROCESS', 'OTHER_PROCESS']);
    expect(Object.keys(rows[0]!)).toEqual(['n', 'owner']);
  });
});
