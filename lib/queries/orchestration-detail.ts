import 'server-only';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../db/client';
import { runtimeServerTimeMs } from '../db/runtime-time';
import { compensationPlan, parseCheckpointJson, verifyCheckpoint, type DurableCheckpoint } from '../domain/checkpoint';
import { MAX_PATH_SEGMENT } from '../domain/path-segment';
import { singleLineText } from '../domain/text';
import type {
  OrchestrationCheckpointView,
  OrchestrationCompensationStep,
  OrchestrationDetail,
  OrchestrationProposal,
  TagVerification,
} from './orchestration-detail-types';

export type { OrchestrationDetail };

/** `[id]` of an orchestration: the runtime's execution id, free text kept exactly as given. */
export const orchestrationPathSchema = z.object({ id: singleLineText(MAX_PATH_SEGMENT, { min: 1, trim: false }) });

const PROPOSALS_SHOWN = 50;

type Row = Record<string, unknown>;
const iso = (value: unknown) => new Date(value as string).toISOString();
const isoMs = (ms: number) => new Date(ms).toISOString();

interface StoredRow {
  checkpoint: unknown;
  authenticationTag: string;
  leaseOwner: string;
  fencingToken: number;
  leaseExpiresAtMs: number;
}

/**
 * The same reading the checkpoint store gives a row (docs/design.md#keel-schema): the JSON must be a
 * valid checkpoint, and the lease and tag columns must repeat it, or the row is not trusted at all.
 */
function verification(
  row: StoredRow,
  key: Buffer | undefined,
): { checkpoint: DurableCheckpoint | null; verification: TagVerification } {
  const parsed = parseCheckpointJson(row.checkpoint);
  if (!parsed.ok) {
    return {
      checkpoint: null,
      verification: {
        verified: false,
        code: 'INVALID_CHECKPOINT',
        why: `The stored checkpoint is not valid: ${parsed.error.reason}.`,
      },
    };
  }
  const checkpoint = parsed.value;
  const { lease } = checkpoint;
  const agrees =
    checkpoint.authenticationTag === row.authenticationTag &&
    lease.ownerId === row.leaseOwner &&
    lease.fencingToken === row.fencingToken &&
    lease.expiresAt === row.leaseExpiresAtMs;
  if (!agrees) {
    return {
      checkpoint,
      verification: {
        verified: false,
        code: 'COLUMNS_DISAGREE',
        why:
          'The lease or tag columns of the stored row differ from its checkpoint: ' +
          'the row was edited outside the checkpoint store.',
      },
    };
  }
  if (!key)
    return {
      checkpoint,
      verification: { verified: false, code: 'NO_KEY', why: 'The server holds no checkpoint key to verify with.' },
    };
  if (!verifyCheckpoint(checkpoint, key)) {
    return {
      checkpoint,
      verification: {
        verified: false,
        code: 'TAG_MISMATCH',
        why:
          'The tag is not the HMAC-SHA256 of this checkpoint under the server’s key: ' +
          'the checkpoint changed after it was sealed, or another key sealed it.',
      },
    };
  }
  return { checkpoint, verification: { verified: true } };
}

/**
 * Declared order (ascending `order`; Array.prototype.sort is stable), each step with its place in
 * the plan the runtime would run, which is the domain's compensationPlan under the checkpoint's
 * own authorization snapshot; a refused plan runs nothing.
 */
function compensationView(checkpoint: DurableCheckpoint): {
  steps: OrchestrationCompensationStep[];
  authorized: boolean;
} {
  const authorization = checkpoint.snapshots.authorizationDigest;
  const plan = compensationPlan(checkpoint, authorization);
  const declared = checkpoint.compensation.map((step) => ({ ...step })).sort((a, b) => a.order - b.order);
  const steps: OrchestrationCompensationStep[] = declared.map((step) => ({
    capabilityId: step.capabilityId,
    order: step.order,
    authorizationDigest: step.authorizationDigest,
    boundToAuthorization: step.authorizationDigest === authorization,
    runsAt: null,
  }));
  if (plan.ok) {
    plan.value.forEach((planned, position) => {
      const match = steps.find(
        (s) =>
          s.runsAt === null &&
          s.order === planned.order &&
          s.capabilityId === planned.capabilityId &&
          s.authorizationDigest === planned.authorizationDigest,
      );
      if (match) match.runsAt = position + 1;
    });
  }
  return { steps, authorized: plan.ok };
}

function checkpointView(checkpoint: DurableCheckpoint, serverNowMs: number): OrchestrationCheckpointView {
  const { wait, retry } = checkpoint;
  const compensation = compensationView(checkpoint);
  return {
    governingSpec: checkpoint.governingSpec,
    completedNodeIds: [...checkpoint.completedNodeIds],
    wait: wait
      ? {
          kind: wait.kind,
          ownerId: wait.ownerId,
          deadline: isoMs(wait.deadline),
          expired: serverNowMs > wait.deadline,
          cancellationId: wait.cancellationId,
        }
      : null,
    retry: retry ? { ...retry, notDeclared: !retry.retryable || retry.idempotencyKey.trim() === '' } : null,
    compensation: compensation.steps,
    compensationAuthorized: compensation.authorized,
    snapshots: { ...checkpoint.snapshots },
  };
}

async function proposalsFor(db: DbOrTx, executionId: string): Promise<OrchestrationProposal[]> {
  const result = await db.execute<Row>(sql`
    select id, kind, status, proposer_login, created_at from keel.recovery_proposal
    where target_kind = 'orchestration' and target_id = ${executionId}
    order by created_at desc, id desc limit ${PROPOSALS_SHOWN}`);
  return result.rows.map((r) => ({
    id: Number(r.id),
    kind: r.kind === 'ABANDON' ? 'ABANDON' : 'TAKEOVER',
    status: r.status as string,
    proposerLogin: r.proposer_login as string,
    createdAt: iso(r.created_at),
  }));
}

/**
 * One orchestration's checkpoint as stored, read from the primary, with whether its tag verifies
 * under the server's key (which never leaves this function); null when no checkpoint has the id.
 */
export async function readOrchestrationDetail(
  db: DbOrTx,
  key: Buffer | undefined,
  executionId: string,
): Promise<OrchestrationDetail | null> {
  const result = await db.execute<Row>(sql`
    select execution_id, checkpoint, authentication_tag, lease_owner, fencing_token, lease_expires_at_ms, updated_at,
           ${runtimeServerTimeMs} as server_time_ms
    from keel.durable_checkpoint where execution_id = ${executionId}`);
  const r = result.rows[0];
  if (!r) return null;
  const serverNowMs = Number(r.server_time_ms);
  const row: StoredRow = {
    checkpoint: r.checkpoint,
    authenticationTag: r.authentication_tag as string,
    leaseOwner: r.lease_owner as string,
    fencingToken: Number(r.fencing_token),
    leaseExpiresAtMs: Number(r.lease_expires_at_ms),
  };
  const read = verification(row, key);
  // The takeover rule (docs/design.md#checkpoint-rules): authenticated, and lapsed by the server's clock.
  const expired = row.leaseExpiresAtMs <= serverNowMs;
  return {
    executionId: r.execution_id as string,
    lease: { ownerId: row.leaseOwner, fencingToken: row.fencingToken, expiresAt: isoMs(row.leaseExpiresAtMs), expired },
    updatedAt: iso(r.updated_at),
    verification: read.verification,
    takeoverCandidate: read.verification.verified && expired,
    checkpoint: read.checkpoint ? checkpointView(read.checkpoint, serverNowMs) : null,
    proposals: await proposalsFor(db, executionId),
    serverNow: isoMs(serverNowMs),
  };
}
