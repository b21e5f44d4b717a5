import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../lib/db/client';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { freshDatabase } from '../support/database';
import { actor, recoveryDeps, seedStaleExecution, seedStep } from '../support/recovery-fixtures';

const { db, pool, newPool } = await freshDatabase();
const deps = recoveryDeps(db);
const operator = actor('operator');
const approver = actor('approver');

/** Resolves once a backend whose current statement matches `pattern` waits on a lock. */
async function lockWaitOf(pattern: string) {
  for (;;) {
    const { rows } = await pool.query(
      `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()
       and query ilike $1`,
      [pattern],
    );
    if (rows[0].n > 0) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('a takeover chosen as a deadlock victim', () => {
  it('runs again and answers with a typed result instead of an error', async () => {
    const execution = await seedStaleExecution(db);
    await seedStep(db, { executionId: execution.id, logicalId: 'load' });
    const proposed = await proposeRecovery(deps, operator, {
      target: 'batch',
      reason: 'owner silent',
      executionId: execution.id,
    });
    if (!proposed.ok) throw new Error(proposed.error.code);
    const { proposal } = proposed.value;
    const { rows: instanceRows } = await pool.query(
      'select job_instance_id from oxide_batch.ob_job_execution where id = $1',
      [execution.id],
    );
    const instanceId = Number(instanceRows[0].job_instance_id);

    // The runtime's side, as oxide-batch starts a flow step: the instance row first, then a step insert
    // whose foreign key needs the execution row.
    const runtime = await newPool(1).connect();
    try {
      await runtime.query('begin');
      // The takeover checks for a deadlock 3 s into its wait and the runtime 60 s into its own, so the takeover
      // is the victim even when the runtime's insert starts waiting a while after the takeover did.
      await runtime.query(`set local deadlock_timeout = '60s'`);
      await runtime.query('select id from oxide_batch.ob_job_instance where id = $1 for update', [instanceId]);

      // The takeover locks the execution, then its operator request's foreign key needs the instance row.
      const takeoverPool = newPool(1, { options: '-c deadlock_timeout=3s' });
      const confirming = confirmTakeover(
        { ...deps, unitOfWork: recoveryDeps(createDatabase(takeoverPool)).unitOfWork },
        approver,
        {
          proposalId: proposal.id,
          evidenceDigest: proposal.evidenceDigestHex,
          expectedVersion: proposal.expectedVersion,
          resultingStatus: 'FAILED',
        },
      );
      await lockWaitOf('%update oxide_batch.ob_job_execution e%');

      // The cycle closes; PostgreSQL aborts the takeover's transaction, and this insert goes on.
      await runtime.query(
        `insert into oxide_batch.ob_step_execution (job_execution_id, step_name, step_logical_id, status, started_at)
         values ($1, 'publish', 'publish', 'STARTED', clock_timestamp())`,
        [execution.id],
      );
      await runtime.query('commit');

      // The second run reads the new step: the evidence moved, so the proposal is superseded.
      const result = await confirming;
      expect(result).toMatchObject({ ok: false, error: { code: 'RECOVERY_EVIDENCE_STALE' } });
      // Superseded, not merely refused: the proposal is closed.
      expect(
        (await pool.query('select status from keel.recovery_proposal where id = $1', [proposal.id])).rows[0],
      ).toEqual({
        status: 'SUPERSEDED',
      });
    } finally {
      runtime.release();
    }
    const { rows } = await pool.query(
      `select e.status, (select count(*)::int from oxide_batch.ob_step_execution s
       where s.job_execution_id = e.id) as steps,
              (select count(*)::int from oxide_batch.ob_operator_request r where r.job_execution_id = e.id) as requests
       from oxide_batch.ob_job_execution e where e.id = $1`,
      [execution.id],
    );
    expect(rows[0]).toEqual({ status: 'STARTED', steps: 2, requests: 0 });
    const audit = await pool.query(
      `select outcome, code from keel.audit_event where action = 'recovery.confirm' and operation_id = $1`,
      [`keel-proposal-${proposal.id}`],
    );
    expect(audit.rows).toEqual([{ outcome: 'REFUSED', code: 'RECOVERY_EVIDENCE_STALE' }]);
  });
});
