import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../lib/db/client';
import { proposeAbandon } from '../../lib/services/abandon-execution';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import type { WorkerLog } from '../../lib/workers/worker-loop';
import { startProposalExpiry } from '../../lib/workers/proposal-expiry';
import { freshDatabase } from '../support/database';
import {
  actor,
  expireDeadline,
  proposeStaleTakeover,
  recoveryDeps,
  seedStaleExecution,
} from '../support/recovery-fixtures';

const { db, pool, newPool } = await freshDatabase();
const deps = recoveryDeps(db);
const operator = actor('operator');
const approver = actor('approver');

const proposalRow = async (id: number) =>
  (
    await pool.query(
      'select status, kind, decided_at is not null as decided from keel.recovery_proposal where id = $1',
      [id],
    )
  ).rows[0];

async function expiryAudit(proposalId: number) {
  const { rows } = await pool.query(
    `select actor_id, outcome, before, after from keel.audit_event where action = 'recovery.expire'
     and operation_id = $1 order by id`,
    [`keel-proposal-${proposalId}`],
  );
  return rows;
}

const takeoverProposal = () => proposeStaleTakeover(db, deps, operator);

/** A wait the test drives: the sweep's step has run each time it asks to wait. */
function drivenWait() {
  const asked: Array<() => void> = [];
  let arrived: (() => void) | undefined;
  return {
    wait: (_delayMs: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => resolve(), { once: true });
        asked.push(resolve);
        arrived?.();
      }),
    async nextWait() {
      while (asked.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
      return asked.shift()!;
    },
  };
}

describe('a proposal past its approval deadline', () => {
  it('does not stand in for a new takeover request: it is closed as EXPIRED and a new one is made', async () => {
    const { execution, proposal } = await takeoverProposal();
    const again = await proposeRecovery(deps, operator, {
      target: 'batch',
      reason: 'owner silent',
      executionId: execution.id,
    });
    expect(again).toMatchObject({ ok: true, value: { created: false, proposal: { id: proposal.id } } });

    await expireDeadline(db, proposal.id);
    const fresh = await proposeRecovery(deps, operator, {
      target: 'batch',
      reason: 'still silent',
      executionId: execution.id,
    });
    expect(fresh).toMatchObject({
      ok: true,
      value: { created: true, proposal: { status: 'PENDING', kind: 'TAKEOVER' } },
    });
    expect(fresh.ok && fresh.value.proposal.id).not.toBe(proposal.id);
    expect(await proposalRow(proposal.id)).toEqual({ status: 'EXPIRED', kind: 'TAKEOVER', decided: true });
    expect(await expiryAudit(proposal.id)).toMatchObject([
      {
        actor_id: 'keel:housekeeping',
        outcome: 'APPLIED',
        before: { proposalStatus: 'PENDING' },
        after: { proposalStatus: 'EXPIRED' },
      },
    ]);
  });

  it('does not stand in for a new abandon request either, nor block it as a takeover', async () => {
    const { execution, proposal } = await takeoverProposal();
    await pool.query(
      `update oxide_batch.ob_job_execution set status = 'STOPPED', ended_at = updated_at where id = $1`,
      [execution.id],
    );
    const blocked = await proposeAbandon(deps, approver, { executionId: execution.id, note: 'nobody will rerun it' });
    expect(blocked).toMatchObject({ ok: false, error: { code: 'PROPOSAL_PENDING' } });

    await expireDeadline(db, proposal.id);
    const abandon = await proposeAbandon(deps, approver, { executionId: execution.id, note: 'nobody will rerun it' });
    expect(abandon).toMatchObject({
      ok: true,
      value: { created: true, proposal: { kind: 'ABANDON', status: 'PENDING' } },
    });
    expect((await proposalRow(proposal.id)).status).toBe('EXPIRED');
    expect(await expiryAudit(proposal.id)).toHaveLength(1);
  });

  it('is closed by the deadline sweep without anyone opening it', async () => {
    const due = await takeoverProposal();
    const notDue = await takeoverProposal();
    await expireDeadline(db, due.proposal.id);
    const logged: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const log: WorkerLog = (_level, message, fields) => logged.push({ message, fields });
    const driven = drivenWait();
    const sweep = startProposalExpiry({ deps, log, wait: driven.wait });
    const first = await driven.nextWait();
    expect((await proposalRow(due.proposal.id)).status).toBe('EXPIRED');
    expect((await proposalRow(notDue.proposal.id)).status).toBe('PENDING');
    expect(logged).toContainEqual({ message: 'proposals expired past their deadline', fields: { count: 1 } });
    expect(await expiryAudit(due.proposal.id)).toMatchObject([{ actor_id: 'keel:housekeeping', outcome: 'APPLIED' }]);

    // The next run closes what has fallen due since.
    await expireDeadline(db, notDue.proposal.id);
    first();
    await driven.nextWait();
    expect((await proposalRow(notDue.proposal.id)).status).toBe('EXPIRED');
    await sweep.stop();
    expect(logged.map((entry) => entry.message)).toEqual([
      'proposal expiry started',
      'proposals expired past their deadline',
      'proposals expired past their deadline',
      'proposal expiry stopped',
    ]);
  });
});

describe('two requests of different kinds racing for one execution', () => {
  /** A proposal of `kind` inserted but not yet committed holds the target's one PENDING slot while `request` runs. */
  async function raceAgainstUncommitted(
    kind: 'TAKEOVER' | 'ABANDON',
    executionId: number,
    request: (db: ReturnType<typeof createDatabase>) => Promise<unknown>,
  ) {
    const client = await newPool(1).connect();
    try {
      await client.query('begin');
      const inserted = await client.query(
        `insert into keel.recovery_proposal (target_kind, target_id, kind, evidence_digest, evidence, expected_version,
         proposer_id,
           proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
         values ('batch', $1, $2, sha256('e'), '{}', 0, 'user:other', 'other', 'p',
         clock_timestamp() + interval '15 minutes', 'c')
         returning id`,
        [String(executionId), kind],
      );
      const requested = request(createDatabase(newPool(1)));
      // Wait until the request's insert is blocked on the uncommitted row.
      for (;;) {
        const { rows } = await pool.query(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()
           and query like '%insert into keel.recovery_proposal%'`,
        );
        if (rows[0].n > 0) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await client.query('commit');
      return { result: await requested, winnerId: Number(inserted.rows[0].id) };
    } finally {
      client.release();
    }
  }

  async function onlyProposalOf(executionId: number) {
    const { rows } = await pool.query(`select id, kind, status from keel.recovery_proposal where target_id = $1`, [
      String(executionId),
    ]);
    return rows.map((row) => ({ ...row, id: Number(row.id) }));
  }

  it('an abandon request losing to a takeover is refused PROPOSAL_PENDING, never given the takeover', async () => {
    const execution = await seedStaleExecution(db, { status: 'STOPPED' });
    const { result, winnerId } = await raceAgainstUncommitted('TAKEOVER', execution.id, (racer) =>
      proposeAbandon({ ...deps, unitOfWork: recoveryDeps(racer).unitOfWork }, approver, {
        executionId: execution.id,
        note: 'nobody will rerun it',
      }),
    );
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'PROPOSAL_PENDING', message: expect.stringContaining(`Takeover proposal ${winnerId}`) },
    });
    expect(await onlyProposalOf(execution.id)).toEqual([{ id: winnerId, kind: 'TAKEOVER', status: 'PENDING' }]);
  });

  it('a takeover request losing to an abandon is refused PROPOSAL_PENDING, never given the abandon', async () => {
    const execution = await seedStaleExecution(db);
    const { result, winnerId } = await raceAgainstUncommitted('ABANDON', execution.id, (racer) =>
      proposeRecovery({ ...deps, unitOfWork: recoveryDeps(racer).unitOfWork }, operator, {
        target: 'batch',
        reason: 'owner silent',
        executionId: execution.id,
      }),
    );
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'PROPOSAL_PENDING', message: expect.stringContaining(`Abandon proposal ${winnerId}`) },
    });
    expect(await onlyProposalOf(execution.id)).toEqual([{ id: winnerId, kind: 'ABANDON', status: 'PENDING' }]);
  });
});
