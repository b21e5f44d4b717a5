import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { ownerObservation } from '../db/sql/owner-observation';
import { runtimeEpochMs, runtimeServerTimeMs } from '../db/runtime-time';
import { isBatchStatus, isOwnerObservation } from '../domain/batch-status';
import type { RecoverySnapshot } from '../domain/recovery';
import { err, ok } from '../domain/result';
import type { RecoveryRepository, RecoveryRepositoryError } from '../ports/recovery-repository';

interface SnapshotRow extends Record<string, unknown> {
  id: number;
  status: string;
  attempt: number;
  version: number;
  updated_at_ms: number;
  server_time_ms: number;
  owner: string;
  step_id: number | null;
  step_status: string | null;
  checkpoint_format: number | null;
  checkpoint_schema: string | null;
  checkpoint_schema_version: number | null;
  checkpoint_encoded_len: number | null;
  unknown_commit: boolean;
  completed_partition: boolean;
  committed_flow_decision: boolean;
  ambiguous_external_effect: boolean;
}

/**
 * The snapshot statement (docs/design.md#recovery-snapshot). The owner token is a parameter compared
 * in SQL and never a selected column, so no result, log or page can carry it.
 */
function snapshotQuery(executionId: number, ownerToken: Buffer) {
  return sql<SnapshotRow>`
    select e.id, e.status, e.attempt, e.version,
           -- The runtime's own expression (docs/design.md#runtime-timestamps): the cast rounds, .678999 ms reads 679.
           ${runtimeEpochMs(sql`e.updated_at`)} as updated_at_ms,
           ${runtimeServerTimeMs} as server_time_ms,
           ${ownerObservation(sql`e.owner_token`, ownerToken)} as owner,
           s.id as step_id, s.status as step_status,
           s.checkpoint_format, s.checkpoint_schema, s.checkpoint_schema_version,
           pg_column_size(s.checkpoint_payload) as checkpoint_encoded_len,
           -- "is not distinct from": a null category or a missing step must read false, not null.
           (e.status = 'UNKNOWN' or e.failure_category is not distinct from 'UNKNOWN_COMMIT'
              or s.status is not distinct from 'UNKNOWN') as unknown_commit,
           exists (select 1 from oxide_batch.ob_step_partition p
                   join oxide_batch.ob_step_execution ps on ps.id = p.step_execution_id
                   where ps.job_execution_id = e.id and p.status = 'COMPLETED') as completed_partition,
           exists (select 1 from oxide_batch.ob_flow_decision f
                   where f.job_execution_id = e.id) as committed_flow_decision,
           -- Only an atomic same-resource commit is unambiguous; a missing mode is not.
           coalesce(d.manifest ->> 'delivery_mode', '') <> 'atomic_same_resource' as ambiguous_external_effect
    from oxide_batch.ob_job_execution e
    join oxide_batch.ob_job_definition d on d.id = e.definition_id
    left join lateral (
      select st.id, st.status, st.checkpoint_format, st.checkpoint_schema,
             st.checkpoint_schema_version, st.checkpoint_payload
      from oxide_batch.ob_step_execution st
      where st.job_execution_id = e.id
      order by st.id desc
      limit 1
    ) s on true
    where e.id = ${executionId}`;
}

function toSnapshot(row: SnapshotRow): RecoverySnapshot | null {
  const { status, owner, step_status: stepStatus } = row;
  if (!isBatchStatus(status) || !isOwnerObservation(owner)) return null;
  let latestStep: RecoverySnapshot['latestStep'] = null;
  if (row.step_id !== null) {
    if (!isBatchStatus(stepStatus)) return null;
    // The runtime's CHECK keeps the four checkpoint columns all null or all set.
    const hasCheckpoint = row.checkpoint_format !== null && row.checkpoint_schema !== null;
    latestStep = {
      id: Number(row.step_id),
      status: stepStatus,
      checkpoint: hasCheckpoint
        ? {
            formatVersion: Number(row.checkpoint_format),
            schemaId: row.checkpoint_schema ?? '',
            schemaVersion: Number(row.checkpoint_schema_version),
            encodedLen: Number(row.checkpoint_encoded_len),
          }
        : null,
    };
  }
  return {
    executionId: Number(row.id),
    status,
    attempt: Number(row.attempt),
    version: Number(row.version),
    updatedAtMs: Number(row.updated_at_ms),
    serverTimeMs: Number(row.server_time_ms),
    owner,
    latestStep,
    markers: {
      unknownCommit: row.unknown_commit === true,
      completedPartition: row.completed_partition === true,
      committedFlowDecision: row.committed_flow_decision === true,
      ambiguousExternalEffect: row.ambiguous_external_effect === true,
    },
  };
}

export function postgresRecoveryRepository(db: DbOrTx): RecoveryRepository {
  return {
    async recoverySnapshot(executionId, currentOwnerToken) {
      if (currentOwnerToken.byteLength !== 16)
        return err({ kind: 'InvalidOwnerToken' } satisfies RecoveryRepositoryError);
      if (!Number.isSafeInteger(executionId) || executionId <= 0)
        return err({ kind: 'ExecutionNotFound', executionId });
      let rows: SnapshotRow[];
      try {
        rows = (await db.execute<SnapshotRow>(snapshotQuery(executionId, Buffer.from(currentOwnerToken)))).rows;
      } catch {
        return err({ kind: 'Unavailable' });
      }
      const [row] = rows;
      if (!row) return err({ kind: 'ExecutionNotFound', executionId });
      const snapshot = toSnapshot(row);
      // A value outside the runtime's vocabulary: fail closed rather than guess.
      return snapshot ? ok(snapshot) : err({ kind: 'Unavailable' });
    },
  };
}
