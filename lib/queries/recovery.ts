import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { parseCheckpointJson, verifyCheckpoint } from '../domain/checkpoint';
import { decodeCursor, encodeCursor } from '../domain/cursor';
import { evidenceView } from '../domain/recovery-evidence-view';
import type {
  OrchestrationLease,
  OrchestrationLeasePage,
  ProposalDetail,
  ProposalFilterWords,
  ProposalListItem,
  ProposalPage,
} from './recovery-types';

export { proposalFiltersSchema } from './recovery-types';
export type { OrchestrationLease, ProposalDetail, ProposalListItem, ProposalPage };

export const PROPOSAL_PAGE_SIZE = 50;

/** The proposal filters and the decoded keyset cursor: the last id shown. */
export type ProposalFilters = ProposalFilterWords & { cursor?: number | null };

/** A cursor this list gave out, or 'invalid' (refused on its field by the read's schema, lib/reads/recovery.ts). */
export function parseProposalCursor(raw: string | undefined): number | null | 'invalid' {
  if (!raw) return null;
  const values = decodeCursor(raw, 1);
  return values && typeof values[0] === 'number' && Number.isSafeInteger(values[0]) ? values[0] : 'invalid';
}

type Row = Record<string, unknown>;
const iso = (value: unknown) =>
  value === null || value === undefined ? null : new Date(value as string).toISOString();

const COLUMNS = sql`id, target_kind, kind, target_id, status, proposer_login, decider_login, created_at, wait_deadline,
                    decided_at, resulting_status`;

function listItem(r: Row): ProposalListItem {
  return {
    id: Number(r.id),
    targetKind: r.target_kind as ProposalListItem['targetKind'],
    kind: r.kind === 'ABANDON' ? 'ABANDON' : 'TAKEOVER',
    targetId: r.target_id as string,
    status: r.status as string,
    proposerLogin: r.proposer_login as string,
    deciderLogin: (r.decider_login as string | null) ?? null,
    createdAt: iso(r.created_at)!,
    deadline: iso(r.wait_deadline)!,
    decidedAt: iso(r.decided_at),
    resultingStatus: (r.resulting_status as string | null) ?? null,
  };
}

/** Proposals newest first, keyset-paged on id, optionally by status (indexed on status, created_at, id). */
export async function listProposals(db: DbOrTx, filters: ProposalFilters): Promise<ProposalPage> {
  const cursor = filters.cursor;
  const result = await db.execute<Row>(sql`
    select ${COLUMNS}, clock_timestamp() as server_now from keel.recovery_proposal
    where ${filters.status ? sql`status = ${filters.status}` : sql`true`}
      ${cursor ? sql`and id < ${cursor}` : sql``}
    order by id desc limit ${PROPOSAL_PAGE_SIZE + 1}`);
  const rows = result.rows.slice(0, PROPOSAL_PAGE_SIZE);
  const now = await db.execute<{ now: string }>(sql`select clock_timestamp() as now`);
  return {
    items: rows.map(listItem),
    nextCursor: result.rows.length > PROPOSAL_PAGE_SIZE ? encodeCursor([Number(rows[rows.length - 1]!.id)]) : null,
    serverNow: iso(now.rows[0]!.now)!,
  };
}

function markersOf(evidence: Record<string, unknown>): ProposalDetail['markers'] {
  const m = evidence.markers as Record<string, unknown> | undefined;
  if (!m) return null;
  return {
    unknownCommit: m.unknownCommit === true,
    completedPartition: m.completedPartition === true,
    committedFlowDecision: m.committedFlowDecision === true,
    ambiguousExternalEffect: m.ambiguousExternalEffect === true,
  };
}

async function stepName(db: DbOrTx, executionId: number, stepId: number): Promise<string | null> {
  const result = await db.execute<Row>(sql`
    select step_logical_id from oxide_batch.ob_step_execution where id = ${stepId}
    and job_execution_id = ${executionId}`);
  return (result.rows[0]?.step_logical_id as string | undefined) ?? null;
}

export async function readProposal(db: DbOrTx, id: number): Promise<ProposalDetail | null> {
  const result = await db.execute<Row>(sql`
    select ${COLUMNS}, encode(evidence_digest, 'hex') as digest, evidence, expected_version, expected_fencing_token,
           successor_owner, proposer_id, proposer_note, failure_category, reason_code, reason,
           clock_timestamp() as server_now
    from keel.recovery_proposal where id = ${id}`);
  const r = result.rows[0];
  if (!r) return null;
  const evidence = (r.evidence ?? {}) as Record<string, unknown>;
  const targetKind = r.target_kind as ProposalDetail['targetKind'];
  const view = evidenceView(targetKind, evidence);
  const latestStepName =
    view?.kind === 'batch' && view.latestStep ? await stepName(db, view.executionId, view.latestStep.id) : null;
  return {
    ...listItem(r),
    evidenceDigest: r.digest as string,
    evidence,
    expectedVersion: r.expected_version === null ? null : Number(r.expected_version),
    expectedFencingToken: r.expected_fencing_token === null ? null : Number(r.expected_fencing_token),
    successorOwner: (r.successor_owner as string | null) ?? null,
    proposerId: r.proposer_id as string,
    note: (r.proposer_note as string | null) ?? null,
    failureCategory: (r.failure_category as string | null) ?? null,
    reasonCode: (r.reason_code as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    markers: markersOf(evidence),
    evidenceView: view,
    latestStepName,
    serverNow: iso(r.server_now)!,
  };
}

/**
 * Orchestration leases, lapsed first, each with whether its tag verifies under the
 * server's key; the key itself and the tag never leave this function.
 */
export async function listOrchestrationLeases(db: DbOrTx, key: Buffer, limit = 200): Promise<OrchestrationLeasePage> {
  const result = await db.execute<Row>(sql`
    select c.execution_id, c.lease_owner, c.fencing_token, c.lease_expires_at_ms, c.checkpoint,
           c.lease_expires_at_ms <= (extract(epoch from clock_timestamp()) * 1000)::bigint as expired,
           (select p.id from keel.recovery_proposal p where p.target_kind = 'orchestration'
           and p.target_id = c.execution_id and p.status = 'PENDING') as pending_id,
           clock_timestamp() as server_now
    from keel.durable_checkpoint c order by c.lease_expires_at_ms, c.execution_id limit ${limit}`);
  const serverNow = iso(result.rows[0]?.server_now) ?? new Date().toISOString();
  return {
    serverNow,
    items: result.rows.map((r) => {
      const parsed = parseCheckpointJson(r.checkpoint);
      return {
        executionId: r.execution_id as string,
        leaseOwner: r.lease_owner as string,
        fencingToken: Number(r.fencing_token),
        expiresAt: new Date(Number(r.lease_expires_at_ms)).toISOString(),
        expired: r.expired as boolean,
        authenticated: parsed.ok && verifyCheckpoint(parsed.value, key),
        pendingProposalId: r.pending_id === null ? null : Number(r.pending_id),
      };
    }),
  };
}
