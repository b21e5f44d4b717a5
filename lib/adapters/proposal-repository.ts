import 'server-only';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { runtimeEpochMs, runtimeServerTimeMs } from '../db/runtime-time';
import { recoveryProposal, type RecoveryProposalRow } from '../db/schema/keel';
import { isFailureCategory, isRecoveryResultStatus } from '../domain/batch-status';
import { err, ok } from '../domain/result';
import { PROPOSAL_STATUSES, type ProposalStatus } from '../domain/proposal-status';
import type {
  LockedProposal,
  ProposalRepository,
  ProposalTarget,
  RecoveryProposal,
} from '../ports/proposal-repository';

// The database's clock by the runtime's expression (docs/design.md#runtime-timestamps), as every rule reads it.
const serverTimeMs = sql<number>`${runtimeServerTimeMs}`;
// Deadlines are whole milliseconds, so "now > deadline" means the same here as in TypeScript.
const nowMsAligned = sql`date_trunc('milliseconds', clock_timestamp())`;

const isProposalStatus = (value: string): value is ProposalStatus =>
  (PROPOSAL_STATUSES as readonly string[]).includes(value);

function targetOf(row: RecoveryProposalRow): ProposalTarget {
  return row.targetKind === 'batch'
    ? { kind: 'batch', executionId: Number(row.targetId) }
    : { kind: 'orchestration', executionId: row.targetId };
}

/** Maps a row to the domain value; the CHECK constraints keep the vocabularies closed. */
function toProposal(row: RecoveryProposalRow): RecoveryProposal {
  if (!isProposalStatus(row.status)) throw new Error(`recovery proposal ${row.id} has status ${row.status}`);
  const decided = row.decidedAt !== null;
  return {
    id: row.id,
    kind: row.kind === 'ABANDON' ? 'ABANDON' : 'TAKEOVER',
    target: targetOf(row),
    status: row.status,
    evidenceDigestHex: row.evidenceDigest.toString('hex'),
    evidence: row.evidence,
    expectedVersion: row.expectedVersion,
    expectedFencingToken: row.expectedFencingToken,
    successorOwner: row.successorOwner,
    proposer: { id: row.proposerId, login: row.proposerLogin },
    note: row.proposerNote,
    createdAtMs: row.createdAt.getTime(),
    wait: {
      kind: 'human_approval',
      ownerId: row.waitOwner,
      deadlineMs: row.waitDeadline.getTime(),
      cancellationId: row.waitCancellationId,
    },
    decision: decided
      ? {
          decider:
            row.deciderId !== null && row.deciderLogin !== null ? { id: row.deciderId, login: row.deciderLogin } : null,
          decidedAtMs: row.decidedAt!.getTime(),
          resultingStatus: isRecoveryResultStatus(row.resultingStatus) ? row.resultingStatus : null,
          failureCategory: isFailureCategory(row.failureCategory) ? row.failureCategory : null,
          reasonCode: row.reasonCode,
          reason: row.reason,
        }
      : null,
  };
}

const targetKey = (target: ProposalTarget) => ({ kind: target.kind, id: String(target.executionId) });

export function postgresProposalRepository(db: DbOrTx): ProposalRepository {
  const get = async (id: number) => {
    const [row] = await db.select().from(recoveryProposal).where(eq(recoveryProposal.id, id));
    return row ? toProposal(row) : null;
  };

  const findPending = async (target: ProposalTarget) => {
    const { kind, id } = targetKey(target);
    const [row] = await db
      .select()
      .from(recoveryProposal)
      .where(
        and(
          eq(recoveryProposal.targetKind, kind),
          eq(recoveryProposal.targetId, id),
          eq(recoveryProposal.status, 'PENDING'),
        ),
      );
    return row ? toProposal(row) : null;
  };

  return {
    get,

    async lockPending(target): Promise<LockedProposal | null> {
      const { kind, id } = targetKey(target);
      const [row] = await db
        .select({ row: recoveryProposal, serverTimeMs })
        .from(recoveryProposal)
        .where(
          and(
            eq(recoveryProposal.targetKind, kind),
            eq(recoveryProposal.targetId, id),
            eq(recoveryProposal.status, 'PENDING'),
          ),
        )
        .for('update');
      return row ? { proposal: toProposal(row.row), serverTimeMs: Number(row.serverTimeMs) } : null;
    },

    async createPending(proposal) {
      const { kind, id: targetId } = targetKey(proposal.target);
      // The id is drawn first so the wait can name its owner (the proposal id) in the same
      // row; the partial unique index turns a concurrent second request into "do nothing".
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const inserted = await db.execute<{ id: number }>(sql`
          with c as (
            select nextval(pg_get_serial_sequence('keel.recovery_proposal', 'id')) as id,
                   ${nowMsAligned} as at
          )
          insert into keel.recovery_proposal (
            id, target_kind, target_id, kind, evidence_digest, evidence, expected_version, expected_fencing_token,
            successor_owner, proposer_id, proposer_login, proposer_note, created_at, status,
            wait_owner, wait_deadline, wait_cancellation_id)
          overriding system value
          select c.id, ${kind}, ${targetId}, ${proposal.kind ?? 'TAKEOVER'},
          ${Buffer.from(proposal.evidenceDigestHex, 'hex')},
                 ${JSON.stringify(proposal.evidence)}::jsonb, ${proposal.expectedVersion}::bigint,
                 ${proposal.expectedFencingToken}::bigint, ${proposal.successorOwner}, ${proposal.proposer.id},
                 ${proposal.proposer.login}, ${proposal.note}, c.at, 'PENDING',
                 c.id::text, c.at + ${proposal.ttlMs}::bigint * interval '1 millisecond', ${proposal.cancellationId}
          from c
          on conflict (target_kind, target_id) where status = 'PENDING' do nothing
          returning id`);
        const id = inserted.rows[0]?.id;
        if (id !== undefined) {
          const created = await get(Number(id));
          if (created) return { created: true, proposal: created };
        }
        // Lost the race: the winner has committed, so its pending row is visible now,
        // unless it was decided in between, in which case try again.
        const pending = await findPending(proposal.target);
        if (pending) return { created: false, proposal: pending };
      }
      throw new Error('could not create or find a pending recovery proposal');
    },

    async lockForDecision(id): Promise<LockedProposal | null> {
      const [row] = await db
        .select({ row: recoveryProposal, serverTimeMs })
        .from(recoveryProposal)
        .where(eq(recoveryProposal.id, id))
        .for('update');
      return row ? { proposal: toProposal(row.row), serverTimeMs: Number(row.serverTimeMs) } : null;
    },

    async close(id, decision) {
      const [row] = await db
        .update(recoveryProposal)
        .set({
          status: decision.status,
          deciderId: decision.decider?.id ?? null,
          deciderLogin: decision.decider?.login ?? null,
          decidedAt: sql`${nowMsAligned}`,
          resultingStatus: decision.resultingStatus ?? null,
          failureCategory: decision.failureCategory ?? null,
          reasonCode: decision.reasonCode ?? null,
          reason: decision.reason ?? null,
        })
        .where(and(eq(recoveryProposal.id, id), eq(recoveryProposal.status, 'PENDING')))
        .returning({ id: recoveryProposal.id });
      const current = await get(id);
      if (row && current) return ok(current);
      return err({ kind: 'NotPending', status: current?.status ?? null });
    },

    async lockExpired(limit) {
      const rows = await db
        .select({ row: recoveryProposal, serverTimeMs })
        .from(recoveryProposal)
        .where(
          and(
            eq(recoveryProposal.status, 'PENDING'),
            sql`${runtimeEpochMs(sql`${recoveryProposal.waitDeadline}`)} < ${runtimeServerTimeMs}`,
          ),
        )
        .orderBy(asc(recoveryProposal.waitDeadline), asc(recoveryProposal.id))
        .limit(Math.min(Math.max(Math.trunc(limit) || 1, 1), 1000))
        .for('update', { skipLocked: true });
      return rows.map((row) => ({ proposal: toProposal(row.row), serverTimeMs: Number(row.serverTimeMs) }));
    },
  };
}
