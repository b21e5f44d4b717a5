import { describe, expect, it } from 'vitest';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import { freshDatabase } from '../support/database';

const actor = { id: 'u1', login: 'operator', role: 'operator' as const };

describe('database integrity rules', () => {
  it('keeps the audit log append-only', async () => {
    const { pool, db } = await freshDatabase();
    const { id } = await postgresAuditLog(db).record({ actor, action: 'test.action', target: { kind: 'execution', id: '1' }, outcome: 'APPLIED' });
    await expect(pool.query('update keel.audit_event set action = $1 where id = $2', ['rewritten', id])).rejects.toThrow(/append-only/);
    await expect(pool.query('delete from keel.audit_event where id = $1', [id])).rejects.toThrow(/append-only/);
    await expect(pool.query('truncate keel.audit_event')).rejects.toThrow(/append-only/);
    const { rows } = await pool.query('select action from keel.audit_event where id = $1', [id]);
    expect(rows).toEqual([{ action: 'test.action' }]);
  });

  it('requires a code exactly on refused audit events', async () => {
    const { db } = await freshDatabase();
    const audit = postgresAuditLog(db);
    await expect(audit.record({ actor, action: 'x', target: { kind: 'k', id: '1' }, outcome: 'REFUSED' })).rejects.toThrow();
    await expect(audit.record({ actor, action: 'x', target: { kind: 'k', id: '1' }, outcome: 'APPLIED', code: 'FORBIDDEN' })).rejects.toThrow();
  });

  it('never lets a receipt be queued and dead-lettered at once, even from two concurrent transactions', async () => {
    const { pool, newPool } = await freshDatabase();
    const attempt = `insert into settle.attempts (receipt_id, finalized_at, work_kind, next_visible_at_ms, updated_at_ms) values ($1, 1, 'pending_observation', 1, 1)`;
    const dead = `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms) values ($1, 1, 1, 'rpc', '{}', 1)`;
    await pool.query(attempt, ['r-1']);
    await expect(pool.query(dead, ['r-1'])).rejects.toThrow(/queued/);

    // Two transactions racing: each inserts into a different table for the same receipt.
    const other = newPool(2);
    const a = await pool.connect();
    const b = await other.connect();
    try {
      await a.query('begin');
      await b.query('begin');
      await a.query(attempt, ['r-2']);
      const second = b.query(dead, ['r-2']); // blocks on the receipt lock until a commits
      await a.query('commit');
      await expect(second).rejects.toThrow(/queued/);
      await b.query('rollback');
    } finally {
      a.release();
      b.release();
    }
    const both = await pool.query(`select count(*)::int as n from settle.attempts a join settle.dead_letters d using (receipt_id)`);
    expect(both.rows[0].n).toBe(0);
  });

  it('enforces the lease triple on settlement attempts', async () => {
    const { pool } = await freshDatabase();
    await expect(
      pool.query(`insert into settle.attempts (receipt_id, finalized_at, work_kind, next_visible_at_ms, updated_at_ms, lease_owner) values ('r', 1, 'pending_observation', 1, 1, 'w')`),
    ).rejects.toThrow(/attempts_lease_complete/);
  });
});
