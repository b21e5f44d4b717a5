import { sql } from 'drizzle-orm';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import { postgresUnitOfWork } from '../../lib/adapters/unit-of-work';
import {
  constraintOf,
  isRetryableTransactionFailure,
  isUniqueViolation,
  SQLSTATE,
  sqlStateOf,
} from '../../lib/db/sqlstate';
import type { Actor } from '../../lib/domain/actor';
import { err, ok } from '../../lib/domain/result';
import { refuse, serviceError, transact, type RefusalEvent } from '../../lib/services/kernel';
import { freshDatabase } from '../support/database';

/**
 * The service kernel's units of work (lib/services/kernel.ts) on PostgreSQL: what each way of
 * ending one commits. Each work writes a row of its own to a probe table, then answers.
 */
const { pool, db } = await freshDatabase();
await pool.query('create table kernel_probe (label text primary key, size int check (size >= 0))');
const unitOfWork = postgresUnitOfWork(db, (tx) => ({ audit: postgresAuditLog(tx), tx }));
const actor: Actor = { id: 'u-kernel', login: 'kernel', name: 'Kim Kernel', role: 'support' };

const event = (label: string): RefusalEvent => ({
  actor,
  action: 'kernel.probe',
  target: { kind: 'probe', id: label },
  reason: `why ${label}`,
  operationId: `op-${label}`,
});

const probeRows = async (label: string) =>
  (await pool.query('select label from kernel_probe where label = $1', [label])).rows;
const auditRows = async (label: string) =>
  (
    await pool.query(
      `select action, target_kind, target_id, reason, operation_id, outcome, code from keel.audit_event
       where target_id = $1 order by id`,
      [label],
    )
  ).rows;

describe('transact', () => {
  it('commits the work and answers its value', async () => {
    const result = await transact(unitOfWork, async ({ tx }) => {
      await tx.execute(sql`insert into kernel_probe values ('applied')`);
      return ok('done');
    });
    expect(result).toEqual({ ok: true, value: 'done' });
    expect(await probeRows('applied')).toHaveLength(1);
    expect(await auditRows('applied')).toEqual([]);
  });

  it('a refusal rolls back what the work wrote and commits only its REFUSED event', async () => {
    const result = await transact(unitOfWork, async ({ tx }) => {
      await tx.execute(sql`insert into kernel_probe values ('refused')`);
      return refuse(serviceError('CONFLICT', 'It moved; reload it.'), event('refused'));
    });
    expect(result).toEqual({ ok: false, error: { code: 'CONFLICT', message: 'It moved; reload it.' } });
    expect(await probeRows('refused')).toEqual([]);
    expect(await auditRows('refused')).toEqual([
      {
        action: 'kernel.probe',
        target_kind: 'probe',
        target_id: 'refused',
        reason: 'why refused',
        operation_id: 'op-refused',
        outcome: 'REFUSED',
        code: 'CONFLICT',
      },
    ]);
  });

  it("a refusal that keeps 'changes' commits what the work wrote with its event", async () => {
    const result = await transact(unitOfWork, async ({ tx }) => {
      await tx.execute(sql`insert into kernel_probe values ('kept')`);
      return refuse(serviceError('RECOVERY_EVIDENCE_STALE', 'Superseded.'), event('kept'), 'changes');
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'RECOVERY_EVIDENCE_STALE' } });
    expect(await probeRows('kept')).toHaveLength(1);
    expect((await auditRows('kept')).map((r) => [r.outcome, r.code])).toEqual([['REFUSED', 'RECOVERY_EVIDENCE_STALE']]);
  });

  it('a refusal from a helper the work calls ends the unit of work the same way', async () => {
    const mustExist = async (found: boolean) => {
      if (!found) refuse(serviceError('NOT_FOUND', 'Gone.'), event('nested'));
    };
    const result = await transact(unitOfWork, async ({ tx }) => {
      await tx.execute(sql`insert into kernel_probe values ('nested')`);
      await mustExist(false);
      return ok('unreachable');
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await probeRows('nested')).toEqual([]);
    expect((await auditRows('nested')).map((r) => r.code)).toEqual(['NOT_FOUND']);
  });

  it('an error the work returns is answered unaudited, and the work commits', async () => {
    const result = await transact(unitOfWork, async ({ tx }) => {
      await tx.execute(sql`insert into kernel_probe values ('returned')`);
      return err(serviceError('INVALID_STATE', 'Already refused once.'));
    });
    expect(result).toEqual({ ok: false, error: { code: 'INVALID_STATE', message: 'Already refused once.' } });
    expect(await probeRows('returned')).toHaveLength(1);
    expect(await auditRows('returned')).toEqual([]);
  });

  it('any other throw rolls everything back, writes no event and reaches the caller', async () => {
    const failing = transact(unitOfWork, async ({ tx, audit }) => {
      await tx.execute(sql`insert into kernel_probe values ('thrown')`);
      await audit.record({ ...event('thrown'), outcome: 'APPLIED' });
      throw new Error('a bug, not a refusal');
    });
    await expect(failing).rejects.toThrow('a bug, not a refusal');
    expect(await probeRows('thrown')).toEqual([]);
    expect(await auditRows('thrown')).toEqual([]);
  });
});

describe('SQLSTATE (lib/db/sqlstate.ts)', () => {
  /** What a statement throws: for drizzle, a DrizzleQueryError around pg's DatabaseError. */
  const failureOf = async (statement: Promise<unknown>): Promise<unknown> =>
    statement.then(
      () => {
        throw new Error('the statement did not fail');
      },
      (error: unknown) => error,
    );

  it('reads the code and the constraint of a real violation through drizzle wrapping pg', async () => {
    await db.execute(sql`insert into kernel_probe values ('unique', 1)`);
    const duplicate = await failureOf(db.execute(sql`insert into kernel_probe values ('unique', 2)`));
    expect(duplicate).toBeInstanceOf(DrizzleQueryError);
    expect(sqlStateOf(duplicate)).toBe(SQLSTATE.UNIQUE_VIOLATION);
    expect(constraintOf(duplicate)).toBe('kernel_probe_pkey');
    expect(isUniqueViolation(duplicate)).toBe(true);
    expect(isRetryableTransactionFailure(duplicate)).toBe(false);
    const negative = await failureOf(pool.query(`insert into kernel_probe values ('negative', -1)`));
    expect(sqlStateOf(negative)).toBe(SQLSTATE.CHECK_VIOLATION);
    expect(constraintOf(negative)).toBe('kernel_probe_size_check');
    expect(isUniqueViolation(negative)).toBe(false);
  });

  it('retries a real serialization failure, and knows a deadlock by its code', async () => {
    // Two SERIALIZABLE transactions that each read what the other writes: the second to commit fails.
    await pool.query(`insert into kernel_probe values ('a', 0), ('b', 0)`);
    const [one, two] = [await pool.connect(), await pool.connect()];
    try {
      for (const client of [one, two]) await client.query('begin isolation level serializable');
      await one.query(`select sum(size) from kernel_probe where label in ('a', 'b')`);
      await two.query(`select sum(size) from kernel_probe where label in ('a', 'b')`);
      await one.query(`update kernel_probe set size = 1 where label = 'a'`);
      await two.query(`update kernel_probe set size = 1 where label = 'b'`);
      await one.query('commit');
      const failed = await failureOf(two.query('commit'));
      expect(sqlStateOf(failed)).toBe(SQLSTATE.SERIALIZATION_FAILURE);
      expect(isRetryableTransactionFailure(failed)).toBe(true);
    } finally {
      one.release();
      two.release();
    }
    const deadlock = new DrizzleQueryError('update t', [], Object.assign(new Error('deadlock'), { code: '40P01' }));
    expect(isRetryableTransactionFailure(deadlock)).toBe(true);
  });

  it('has no code for a system error, a plain error or something not an error', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(sqlStateOf(new DrizzleQueryError('select 1', [], refused))).toBeUndefined();
    expect(sqlStateOf(new Error('40P01'))).toBeUndefined();
    expect(sqlStateOf({ code: '23505' })).toBeUndefined();
    expect(constraintOf(new Error('boom'))).toBeUndefined();
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});
