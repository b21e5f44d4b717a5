import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import { freshDatabase } from '../support/database';

const actor = { id: 'u1', login: 'operator', role: 'operator' as const };
const attempt = `insert into settle.attempts (receipt_id, finalized_at, work_kind, next_visible_at_ms, updated_at_ms)
                 values ($1, 1, 'pending_observation', 1, 1)`;
const dead = `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json,
              recorded_at_ms) values ($1, 1, 1, 'rpc', '{}', 1)`;

/** Runs the statements in one transaction on one connection, rolling back if any fails. */
async function inOneTransaction(pool: pg.Pool, statements: [string, unknown[]][]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    for (const [text, values] of statements) await client.query(text, values);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

async function placesOf(pool: pg.Pool, prefix: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ place: string; n: number }>(
    `select place, count(*)::int as n from settle.receipt_place where receipt_id like $1 || '%' group by place`,
    [prefix],
  );
  return Object.fromEntries(rows.map((r) => [r.place, r.n]));
}

describe('database integrity rules', () => {
  it('keeps the audit log append-only', async () => {
    const { pool, db } = await freshDatabase();
    const { id } = await postgresAuditLog(db).record({
      actor,
      action: 'test.action',
      target: { kind: 'execution', id: '1' },
      outcome: 'APPLIED',
    });
    await expect(
      pool.query('update keel.audit_event set action = $1 where id = $2', ['rewritten', id]),
    ).rejects.toThrow(/append-only/);
    await expect(pool.query('delete from keel.audit_event where id = $1', [id])).rejects.toThrow(/append-only/);
    await expect(pool.query('truncate keel.audit_event')).rejects.toThrow(/append-only/);
    const { rows } = await pool.query('select action from keel.audit_event where id = $1', [id]);
    expect(rows).toEqual([{ action: 'test.action' }]);
  });

  it('requires a code exactly on refused audit events', async () => {
    const { db } = await freshDatabase();
    const audit = postgresAuditLog(db);
    await expect(
      audit.record({ actor, action: 'x', target: { kind: 'k', id: '1' }, outcome: 'REFUSED' }),
    ).rejects.toThrow();
    await expect(
      audit.record({ actor, action: 'x', target: { kind: 'k', id: '1' }, outcome: 'APPLIED', code: 'FORBIDDEN' }),
    ).rejects.toThrow();
  });

  it('never lets a receipt be queued and dead-lettered at once, even from two concurrent transactions', async () => {
    const { pool, newPool } = await freshDatabase();
    await pool.query(attempt, ['r-1']);
    await expect(pool.query(dead, ['r-1'])).rejects.toThrow(/r-1 is already queued; it cannot also be dead-lettered/);
    await pool.query(dead, ['r-0']);
    await expect(pool.query(attempt, ['r-0'])).rejects.toThrow(
      /r-0 is already dead-lettered; it cannot also be queued/,
    );

    // Two transactions racing: each inserts into a different table for the same receipt.
    const other = newPool(2);
    const a = await pool.connect();
    const b = await other.connect();
    try {
      await a.query('begin');
      await b.query('begin');
      await a.query(attempt, ['r-2']);
      const second = b.query(dead, ['r-2']); // waits on a's receipt_place key until a commits
      // Expected before the commit: b's refusal can arrive before the commit's own reply.
      const refused = expect(second).rejects.toThrow(/queued/);
      await a.query('commit');
      await refused;
      await b.query('rollback');
    } finally {
      a.release();
      b.release();
    }
    const both = await pool.query(
      `select count(*)::int as n from settle.attempts a join settle.dead_letters d using (receipt_id)`,
    );
    expect(both.rows[0].n).toBe(0);
  });

  it('lets the waiting transaction have the receipt when the first one rolls back', async () => {
    const { pool, newPool } = await freshDatabase();
    const other = newPool(2);
    const a = await pool.connect();
    const b = await other.connect();
    try {
      await a.query('begin');
      await b.query('begin');
      await a.query(attempt, ['r-3']);
      const second = b.query(dead, ['r-3']);
      await a.query('rollback');
      await second;
      await b.query('commit');
    } finally {
      a.release();
      b.release();
    }
    expect(await placesOf(pool, 'r-3')).toEqual({ dead_lettered: 1 });
  });

  // The old rule took a lock per row and ran out of shared memory past ~6,000 rows.
  it('queues 20,000 receipts in one transaction, then dead-letters them all in another', async () => {
    const { pool } = await freshDatabase();
    await inOneTransaction(pool, [
      [
        `insert into settle.attempts (receipt_id, finalized_at, work_kind, next_visible_at_ms, updated_at_ms)
         select 'bulk-' || n, 1, 'pending_observation', 1, 1 from generate_series(1, 20000) as n`,
        [],
      ],
    ]);
    expect(await placesOf(pool, 'bulk-')).toEqual({ queued: 20_000 });
    await inOneTransaction(pool, [
      [`delete from settle.attempts where receipt_id like 'bulk-%'`, []],
      [
        `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
         select 'bulk-' || n, 1, 1, 'rpc', '{}', 1 from generate_series(1, 20000) as n`,
        [],
      ],
    ]);
    expect(await placesOf(pool, 'bulk-')).toEqual({ dead_lettered: 20_000 });
  });

  it('moves a receipt from the queue to the dead letters and back, each move in one transaction', async () => {
    const { pool } = await freshDatabase();
    await pool.query(attempt, ['m-1']);
    await inOneTransaction(pool, [
      [`delete from settle.attempts where receipt_id = $1`, ['m-1']],
      [dead, ['m-1']],
    ]);
    expect(await placesOf(pool, 'm-1')).toEqual({ dead_lettered: 1 });
    // Replay: the dead letter goes, the attempt comes back.
    await inOneTransaction(pool, [
      [`delete from settle.dead_letters where receipt_id = $1`, ['m-1']],
      [attempt, ['m-1']],
    ]);
    expect(await placesOf(pool, 'm-1')).toEqual({ queued: 1 });
    // Inserting before deleting is still refused, and the refusal leaves the receipt where it was.
    await expect(
      inOneTransaction(pool, [
        [dead, ['m-1']],
        [`delete from settle.attempts where receipt_id = $1`, ['m-1']],
      ]),
    ).rejects.toThrow(/already queued/);
    expect(await placesOf(pool, 'm-1')).toEqual({ queued: 1 });
  });

  it('forgets a receipt removed from both tables, however it was removed', async () => {
    const { pool } = await freshDatabase();
    await pool.query(attempt, ['g-1']);
    await pool.query(dead, ['g-2']);
    await pool.query(`update settle.attempts set receipt_id = 'g-3' where receipt_id = 'g-1'`);
    expect(await placesOf(pool, 'g-')).toEqual({ queued: 1, dead_lettered: 1 });
    await pool.query(`delete from settle.attempts where receipt_id = 'g-3'`);
    await pool.query(`delete from settle.dead_letters where receipt_id = 'g-2'`);
    expect(await placesOf(pool, 'g-')).toEqual({});
    // Each receipt is free for the other table now.
    await pool.query(dead, ['g-3']);
    await pool.query(attempt, ['g-2']);
    await pool.query('truncate settle.attempts, settle.dead_letters');
    expect(await placesOf(pool, 'g-')).toEqual({});
  });

  it('finds the places a batch delete frees by their keys, not by scanning the table', async () => {
    const { pool } = await freshDatabase();
    // A queue the size where the planner hashed the whole of receipt_place for the join.
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, next_visible_at_ms, updated_at_ms)
       select 'k-' || lpad(n::text, 6, '0'), 1, 'pending_observation', 1, 1 from generate_series(1, 20000) n`,
    );
    await pool.query('analyze settle.attempts, settle.receipt_place');
    const client = await pool.connect();
    try {
      // This connection's scans of receipt_place not yet reported, before and after: the trigger's delete.
      const scans = async () =>
        (
          await client.query<{ seq: number; idx: number }>(
            `select seq_scan::int as seq, idx_scan::int as idx from pg_stat_xact_user_tables
             where schemaname = 'settle' and relname = 'receipt_place'`,
          )
        ).rows[0]!;
      await client.query('begin');
      const before = await scans();
      await client.query(`delete from settle.attempts where receipt_id between 'k-000101' and 'k-000200'`);
      const after = await scans();
      expect(after.seq - before.seq).toBe(0);
      expect(after.idx - before.idx).toBeGreaterThan(0);
      await client.query('commit');
    } finally {
      client.release();
    }
    expect(await placesOf(pool, 'k-')).toEqual({ queued: 19_900 });
  });

  it('enforces the lease triple on settlement attempts', async () => {
    const { pool } = await freshDatabase();
    await expect(
      pool.query(
        `insert into settle.attempts (receipt_id, finalized_at, work_kind, next_visible_at_ms, updated_at_ms,
         lease_owner) values ('r', 1, 'pending_observation', 1, 1, 'w')`,
      ),
    ).rejects.toThrow(/attempts_lease_complete/);
  });
});
