import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../lib/db/client';
import type { RecoveryProposal } from '../../lib/ports/proposal-repository';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { rejectProposal } from '../../lib/services/decide-proposal';
import { expireProposals, HOUSEKEEPING_ACTOR } from '../../lib/services/expire-proposals';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { freshDatabase } from '../support/database';
import { actor, proposeStaleTakeover, recoveryDeps, seedStaleExecution } from '../support/recovery-fixtures';

const { db, pool, newPool } = await freshDatabase();
const base = recoveryDeps(db);
/** The same services over 20 connections of their own, one per concurrent actor, warmed up front. */
const pools = Array.from({ length: 20 }, () => newPool(1));
await Promise.all(pools.map((p) => p.query('select 1')));
const connections = pools.map((p) => ({ ...base, unitOfWork: recoveryDeps(createDatabase(p)).unitOfWork }));
const connection = (i: number) => connections[i % connections.length]!;

const operator = actor('operator');

async function pendingProposal(): Promise<{ executionId: number; proposal: RecoveryProposal }> {
  const { execution, proposal } = await proposeStaleTakeover(db, base, operator);
  return { executionId: execution.id, proposal };
}

const confirmInput = (proposal: RecoveryProposal) => ({
  proposalId: proposal.id,
  evidenceDigest: proposal.evidenceDigestHex,
  expectedVersion: proposal.expectedVersion,
  resultingStatus: 'FAILED' as const,
});

async function runtimeRows(executionId: number) {
  const { rows } = await pool.query(
    `select e.status, e.version,
            (select count(*)::int from oxide_batch.ob_recovery_decision d where d.job_execution_id = e.id) as decisions,
            (select count(*)::int from oxide_batch.ob_operator_request r where r.job_execution_id = e.id) as requests
     from oxide_batch.ob_job_execution e where e.id = $1`,
    [executionId],
  );
  return rows[0];
}

describe('takeover under concurrency', () => {
  it('20 approvers confirming one proposal at once: one takeover, 19 PROPOSAL_DECIDED naming the winner', async () => {
    const { executionId, proposal } = await pendingProposal();
    const approvers = Array.from({ length: 20 }, (_, i) => actor('approver', `approver-${i}`));
    const results = await Promise.all(
      approvers.map((approver, i) => confirmTakeover(connection(i), approver, confirmInput(proposal))),
    );

    const winners = results.flatMap((result, i) => (result.ok ? [approvers[i]!.login] : []));
    expect(winners).toHaveLength(1);
    const losers = results.filter((result) => !result.ok);
    expect(losers).toHaveLength(19);
    for (const loser of losers) {
      expect(loser).toMatchObject({
        ok: false,
        error: { code: 'PROPOSAL_DECIDED', message: `Proposal ${proposal.id} was already approved by ${winners[0]}.` },
      });
    }
    expect(await runtimeRows(executionId)).toEqual({ status: 'FAILED', version: 8, decisions: 1, requests: 1 });
    const { rows } = await pool.query(
      `select outcome, code, count(*)::int as n from keel.audit_event
       where operation_id = $1 and action = 'recovery.confirm' group by outcome, code order by outcome`,
      [`keel-proposal-${proposal.id}`],
    );
    expect(rows).toEqual([
      { outcome: 'APPLIED', code: null, n: 1 },
      { outcome: 'REFUSED', code: 'PROPOSAL_DECIDED', n: 19 },
    ]);
  });

  it('confirm racing reject racing the expiry sweep always ends in exactly one decision', async () => {
    // Deadlines from well past to well ahead, so every ordering of the three gets exercised.
    const offsetsMs = [-5_000, -20, 0, 10, 25, 50, 100, 5_000];
    const approverA = actor('approver', 'racer-confirm');
    const approverB = actor('approver', 'racer-reject');
    const tally = { APPROVED: 0, REJECTED: 0, EXPIRED: 0 } as Record<string, number>;
    for (const offsetMs of offsetsMs) {
      const { executionId, proposal } = await pendingProposal();
      await pool.query(
        `update keel.recovery_proposal set wait_deadline = date_trunc('milliseconds',
         clock_timestamp()) + $2 * interval '1 millisecond' where id = $1`,
        [proposal.id, offsetMs],
      );
      const [confirm, reject, sweep] = await Promise.all([
        confirmTakeover(connection(0), approverA, confirmInput(proposal)),
        rejectProposal(connection(1), approverB, { proposalId: proposal.id }),
        new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(offsetMs, 0), 100))).then(() =>
          expireProposals(connection(2), HOUSEKEEPING_ACTOR),
        ),
      ]);
      const swept = sweep.ok && sweep.value.expired.includes(proposal.id);
      const { rows } = await pool.query(
        'select status, decided_at is not null as decided from keel.recovery_proposal where id = $1',
        [proposal.id],
      );
      const status: string = rows[0].status;
      tally[status] = (tally[status] ?? 0) + 1;

      expect(rows[0].decided).toBe(true);
      expect(Number(confirm.ok) + Number(reject.ok) + Number(swept)).toBeLessThanOrEqual(1);
      expect(status === 'APPROVED').toBe(confirm.ok);
      expect(status === 'REJECTED').toBe(reject.ok);
      expect(status).toMatch(/^(APPROVED|REJECTED|EXPIRED)$/);
      for (const result of [confirm, reject]) {
        if (!result.ok) expect(result.error.code).toMatch(/^(PROPOSAL_DECIDED|PROPOSAL_EXPIRED)$/);
      }
      const runtime = await runtimeRows(executionId);
      expect(runtime).toEqual(
        status === 'APPROVED'
          ? { status: 'FAILED', version: 8, decisions: 1, requests: 1 }
          : { status: 'STARTED', version: 7, decisions: 0, requests: 0 },
      );
      const applied = await pool.query(
        `select count(*)::int as n from keel.audit_event where operation_id = $1 and outcome = 'APPLIED'
         and action <> 'recovery.propose'`,
        [`keel-proposal-${proposal.id}`],
      );
      expect(applied.rows[0].n).toBe(status === 'EXPIRED' && !swept ? 0 : 1);
    }
    console.info(
      `[measure] confirm/reject/expiry race outcomes over ${offsetsMs.length} proposals: ${JSON.stringify(tally)}`,
    );
    expect(tally.EXPIRED).toBeGreaterThanOrEqual(1);
    expect((tally.APPROVED ?? 0) + (tally.REJECTED ?? 0)).toBeGreaterThanOrEqual(1);
  });

  it('10 operators proposing the same execution at once store one pending proposal', async () => {
    const execution = await seedStaleExecution(db);
    const operators = Array.from({ length: 10 }, (_, i) => actor('operator', `proposer-${i}`));
    const results = await Promise.all(
      operators.map((by, i) =>
        proposeRecovery(connection(i), by, { target: 'batch', reason: 'owner silent', executionId: execution.id }),
      ),
    );
    expect(results.every((result) => result.ok)).toBe(true);
    const ids = new Set(results.map((result) => (result.ok ? result.value.proposal.id : null)));
    expect(ids.size).toBe(1);
    expect(results.filter((result) => result.ok && result.value.created)).toHaveLength(1);
    const { rows } = await pool.query(
      `select count(*)::int as n from keel.recovery_proposal where target_kind = 'batch' and target_id = $1`,
      [String(execution.id)],
    );
    expect(rows[0].n).toBe(1);
  });
});
