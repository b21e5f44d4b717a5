import 'server-only';
import { and, eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { constraintOf, SQLSTATE, sqlStateOf } from '../../db/sqlstate';
import { ownerObservation } from '../../db/sql/owner-observation';
import { obJobDefinition, obJobExecution, obJobInstance, obStepExecution } from '../../db/schema/oxide-batch';
import {
  canTransition,
  isBatchStatus,
  isFailureCategory,
  isFinished,
  isOwnerObservation,
  type BatchStatus,
} from '../../domain/batch-status';
import { err, ok, type Result } from '../../domain/result';
import { isDigestHex } from '../../domain/retry-key';
import type {
  BatchRuntime,
  BatchRuntimeErrorOf,
  ChunkCounts,
  OwnedExecution,
  StatusMove,
  StepCheckpoint,
} from '../ports/batch-runtime';

type InvalidWrite = BatchRuntimeErrorOf<'InvalidWrite'>;
type Unavailable = BatchRuntimeErrorOf<'Unavailable'>;

const invalid = (reason: string): InvalidWrite => ({ kind: 'InvalidWrite', reason });
const CONFLICT = { kind: 'Conflict' } as const;

// Integrity and data errors are the writer's mistake; anything else is the database being unavailable.
const WRITE_ERROR_CODES: ReadonlySet<string> = new Set([
  SQLSTATE.STRING_DATA_RIGHT_TRUNCATION,
  SQLSTATE.NUMERIC_VALUE_OUT_OF_RANGE,
  SQLSTATE.NOT_NULL_VIOLATION,
  SQLSTATE.FOREIGN_KEY_VIOLATION,
  SQLSTATE.UNIQUE_VIOLATION,
  SQLSTATE.CHECK_VIOLATION,
]);

/**
 * A port never throws. Only the SQLSTATE and the constraint name are kept: a driver
 * message can quote the row's values (an owner token among them).
 */
async function guarded<R extends Result<unknown, unknown>>(
  work: () => Promise<R>,
): Promise<R | { ok: false; error: InvalidWrite | Unavailable }> {
  try {
    return await work();
  } catch (error) {
    const code = sqlStateOf(error);
    if (code !== undefined && WRITE_ERROR_CODES.has(code)) {
      const constraint = constraintOf(error);
      return err(invalid(constraint === undefined ? code : `${code} ${constraint}`));
    }
    return err<Unavailable>({ kind: 'Unavailable' });
  }
}

const isToken = (token: Uint8Array) => token.byteLength === 16;
const isId = (value: number) => Number.isSafeInteger(value) && value > 0;
const isCount = (value: number) => Number.isSafeInteger(value) && value >= 0;
const isName = (value: string) => value.length > 0 && value.length <= 128;
const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

function checkMove(
  from: BatchStatus,
  move: StatusMove,
): Result<void, BatchRuntimeErrorOf<'IllegalTransition' | 'InvalidWrite'>> {
  if (!isBatchStatus(move.to)) return err(invalid('unknown status'));
  if (!canTransition(from, move.to)) return err({ kind: 'IllegalTransition', from, to: move.to });
  const failure = move.failure ?? null;
  // The runtime's rule: failure category and id are set together, and only by a failure.
  if ((move.to === 'FAILED') !== (failure !== null)) return err(invalid('FAILED and only FAILED carries a failure'));
  if (failure && (!isFailureCategory(failure.category) || !isCount(failure.id)))
    return err(invalid('malformed failure'));
  return ok(undefined);
}

/**
 * The SET list of a status move, all at one instant: a resolving move ends the row
 * (keeping an earlier end, as when FAILED is abandoned) and records its exit code.
 */
function moveAssignments(move: StatusMove, alias: 'e' | 's'): SQL {
  const column = (name: string) => sql.raw(`${alias}.${name}`);
  const sets = [sql`status = ${move.to}`, sql`version = ${column('version')} + 1`, sql`updated_at = now_at.at`];
  if (move.to === 'STARTED') sets.push(sql`started_at = now_at.at`);
  if (isFinished(move.to)) {
    sets.push(sql`ended_at = coalesce(${column('ended_at')}, now_at.at)`, sql`exit_code = ${move.to}`);
  }
  if (move.failure) sets.push(sql`failure_category = ${move.failure.category}`, sql`failure_id = ${move.failure.id}`);
  return sql.join(sets, sql`, `);
}

function checkCheckpoint(checkpoint: StepCheckpoint): boolean {
  return (
    Number.isInteger(checkpoint.format) &&
    checkpoint.format >= 0 &&
    checkpoint.format <= 32_767 &&
    isName(checkpoint.schema) &&
    Number.isInteger(checkpoint.schemaVersion) &&
    checkpoint.payload !== undefined &&
    checkpoint.payload !== null
  );
}

const checkCounts = (counts: ChunkCounts) => Object.values(counts).every(isCount);

interface RowRef extends Record<string, unknown> {
  id: number;
  version: number;
  status: string;
}

const toExecution = (row: RowRef, ownerToken: Uint8Array): OwnedExecution | null =>
  isBatchStatus(row.status)
    ? {
        executionId: Number(row.id),
        version: Number(row.version),
        status: row.status,
        ownerToken,
        ...(typeof row.stop_requested === 'boolean' ? { stopRequested: row.stop_requested } : {}),
      }
    : null;

/** The Postgres BatchRuntime over the runtime's own tables, on a database or a transaction. */
export function postgresBatchRuntime(db: DbOrTx): BatchRuntime {
  return {
    registerDefinition: (registration) =>
      guarded(async () => {
        const { jobName, definitionRevision, manifestFormat, manifest, manifestDigestHex } = registration;
        if (!isName(jobName) || !isName(definitionRevision) || !isDigestHex(manifestDigestHex)) {
          return err(invalid('malformed definition'));
        }
        await db
          .insert(obJobDefinition)
          .values({
            jobName,
            definitionRevision,
            manifestFormat,
            manifest,
            manifestDigest: Buffer.from(manifestDigestHex, 'hex'),
          })
          .onConflictDoNothing({ target: [obJobDefinition.jobName, obJobDefinition.definitionRevision] });
        const [row] = await db
          .select({ id: obJobDefinition.id, digest: obJobDefinition.manifestDigest })
          .from(obJobDefinition)
          .where(and(eq(obJobDefinition.jobName, jobName), eq(obJobDefinition.definitionRevision, definitionRevision)));
        if (!row) return err({ kind: 'Unavailable' } as const);
        // A revision names one manifest: the same name and revision under another digest is someone else's job.
        const storedHex = Buffer.from(row.digest).toString('hex');
        if (storedHex !== manifestDigestHex) return err({ kind: 'DefinitionMismatch' } as const);
        return ok({ id: row.id, jobName, definitionRevision, manifestDigestHex: storedHex });
      }),

    createInstance: (instance) =>
      guarded(async () => {
        if (!isName(instance.jobName) || instance.instanceKey.byteLength !== 32)
          return err(invalid('malformed instance'));
        const [row] = await db
          .insert(obJobInstance)
          .values({
            jobName: instance.jobName,
            instanceKey: Buffer.from(instance.instanceKey),
            identifyingParameters: instance.identifyingParameters,
          })
          .onConflictDoNothing()
          .returning({ id: obJobInstance.id });
        return row ? ok({ jobInstanceId: row.id }) : err({ kind: 'InstanceExists' } as const);
      }),

    createExecution: (execution) =>
      guarded(async () => {
        const {
          jobInstanceId,
          definitionId,
          attempt,
          restartOfExecutionId: restartOf,
          parameters,
          ownerToken,
        } = execution;
        if (!isId(jobInstanceId) || !isId(definitionId) || !isId(attempt) || !isToken(ownerToken)) {
          return err(invalid('malformed execution'));
        }
        if ((attempt === 1) !== (restartOf === null) || (restartOf !== null && !isId(restartOf))) {
          return err(invalid('an attempt after the first is a restart of the one before'));
        }
        // The instance row is locked so a hold placed meanwhile is seen; the partial unique
        // index on unresolved executions is what finally refuses a second live execution.
        const restartRule =
          restartOf === null
            ? sql`true`
            : sql`exists (select 1 from oxide_batch.ob_job_execution p
                        where p.id = ${restartOf} and p.job_instance_id = i.id
                          and p.attempt = ${attempt - 1} and p.status in ('STOPPED', 'FAILED'))`;
        const { rows } = await db.execute<{ eligible: boolean; id: number | null; version: number | null }>(sql`
          with now_at as (select date_trunc('milliseconds', clock_timestamp()) as at),
          eligible as (
            select i.id from oxide_batch.ob_job_instance i
            where i.id = ${jobInstanceId} and i.hold_placed_at is null and ${restartRule}
            for update
          ),
          ins as (
            insert into oxide_batch.ob_job_execution (
              job_instance_id, definition_id, restart_of_execution_id, attempt, status, parameters,
              owner_token, created_at, updated_at, version)
            select eligible.id, ${definitionId}, ${restartOf}::bigint, ${attempt}, 'STARTING', ${json(parameters)},
                   ${Buffer.from(ownerToken)}, now_at.at, now_at.at, 0
            from eligible, now_at
            on conflict do nothing
            returning id, version
          )
          select exists (select 1 from eligible) as eligible, (select id from ins) as id,
          (select version from ins) as version`);
        const row = rows[0];
        if (!row?.eligible) return err({ kind: 'NotRestartable' } as const);
        if (row.id === null || row.version === null) return err({ kind: 'DuplicateExecution' } as const);
        return ok({
          executionId: Number(row.id),
          version: Number(row.version),
          status: 'STARTING' as const,
          ownerToken,
        });
      }),

    moveExecution: (execution, move) =>
      guarded(async () => {
        const legal = checkMove(execution.status, move);
        if (!legal.ok) return legal;
        const { rows } = await db.execute<RowRef>(sql`
          with now_at as (select date_trunc('milliseconds', clock_timestamp()) as at)
          update oxide_batch.ob_job_execution e set ${moveAssignments(move, 'e')}
          from now_at
          where e.id = ${execution.executionId} and e.version = ${execution.version}
            and e.status = ${execution.status} and e.owner_token = ${Buffer.from(execution.ownerToken)}
          returning e.id, e.version, e.status, e.stop_requested_at is not null as stop_requested`);
        const moved = rows[0] && toExecution(rows[0], execution.ownerToken);
        return moved ? ok(moved) : err(CONFLICT);
      }),

    heartbeat: (execution) =>
      guarded(async () => {
        const rows = await db
          .update(obJobExecution)
          .set({
            updatedAt: sql`date_trunc('milliseconds', clock_timestamp())`,
            version: sql`${obJobExecution.version} + 1`,
          })
          .where(
            and(
              eq(obJobExecution.id, execution.executionId),
              eq(obJobExecution.version, execution.version),
              eq(obJobExecution.status, execution.status),
              eq(obJobExecution.ownerToken, Buffer.from(execution.ownerToken)),
            ),
          )
          .returning({
            id: obJobExecution.id,
            version: obJobExecution.version,
            status: obJobExecution.status,
            stop_requested: sql<boolean>`${obJobExecution.stopRequestedAt} is not null`,
          });
        const beat = rows[0] && toExecution(rows[0], execution.ownerToken);
        return beat ? ok(beat) : err(CONFLICT);
      }),

    observeExecution: (executionId, ownerToken) =>
      guarded(async () => {
        if (!isToken(ownerToken)) return err(invalid('an owner token is 16 bytes'));
        const [row] = await db
          .select({
            status: obJobExecution.status,
            version: obJobExecution.version,
            stopRequested: sql<boolean>`${obJobExecution.stopRequestedAt} is not null`,
            // Compared here, so the stored token is never selected.
            owner: ownerObservation(sql`${obJobExecution.ownerToken}`, ownerToken),
          })
          .from(obJobExecution)
          .where(eq(obJobExecution.id, executionId));
        if (!row) return ok(null);
        if (!isBatchStatus(row.status) || !isOwnerObservation(row.owner)) return err({ kind: 'Unavailable' } as const);
        return ok({ status: row.status, version: row.version, stopRequested: row.stopRequested, owner: row.owner });
      }),

    startStep: (execution, step) =>
      guarded(async () => {
        if (!isName(step.stepName) || !isName(step.stepLogicalId) || !checkCheckpoint(step.checkpoint)) {
          return err(invalid('malformed step'));
        }
        if (execution.status !== 'STARTED') return err(CONFLICT);
        const { checkpoint } = step;
        // The parent is read FOR SHARE under the owner's guard: a stop request or a recovery
        // decision committing meanwhile makes this insert find no parent instead of racing it.
        const { rows } = await db.execute<{ parent: boolean; id: number | null; version: number | null }>(sql`
          with now_at as (select date_trunc('milliseconds', clock_timestamp()) as at),
          parent as (
            select e.id from oxide_batch.ob_job_execution e
            where e.id = ${execution.executionId} and e.version = ${execution.version}
              and e.status = 'STARTED' and e.owner_token = ${Buffer.from(execution.ownerToken)}
            for share
          ),
          ins as (
            insert into oxide_batch.ob_step_execution (
              job_execution_id, step_name, step_logical_id, status, checkpoint_format, checkpoint_schema,
              checkpoint_schema_version, checkpoint_payload, created_at, started_at, updated_at, version)
            select parent.id, ${step.stepName}, ${step.stepLogicalId}, 'STARTED', ${checkpoint.format},
            ${checkpoint.schema},
                   ${checkpoint.schemaVersion}, ${json(checkpoint.payload)}, now_at.at, now_at.at, now_at.at, 0
            from parent, now_at
            on conflict do nothing
            returning id, version
          )
          select exists (select 1 from parent) as parent, (select id from ins) as id,
          (select version from ins) as version`);
        const row = rows[0];
        if (!row?.parent) return err(CONFLICT);
        if (row.id === null || row.version === null) return err({ kind: 'DuplicateStep' } as const);
        return ok({
          stepExecutionId: Number(row.id),
          jobExecutionId: execution.executionId,
          version: Number(row.version),
          status: 'STARTED' as const,
        });
      }),

    commitChunk: (step, { counts, checkpoint }) =>
      guarded(async () => {
        if (!checkCounts(counts) || !checkCheckpoint(checkpoint)) return err(invalid('malformed chunk'));
        if (step.status !== 'STARTED') return err(CONFLICT);
        const plus = (column: AnyColumn, value: number) => sql`${column} + ${value}`;
        const rows = await db
          .update(obStepExecution)
          .set({
            readCount: plus(obStepExecution.readCount, counts.read),
            processedCount: plus(obStepExecution.processedCount, counts.processed),
            writeCount: plus(obStepExecution.writeCount, counts.written),
            filterCount: plus(obStepExecution.filterCount, counts.filtered),
            readSkipCount: plus(obStepExecution.readSkipCount, counts.readSkips),
            processSkipCount: plus(obStepExecution.processSkipCount, counts.processSkips),
            writeSkipCount: plus(obStepExecution.writeSkipCount, counts.writeSkips),
            commitCount: sql`${obStepExecution.commitCount} + 1`,
            checkpointFormat: checkpoint.format,
            checkpointSchema: checkpoint.schema,
            checkpointSchemaVersion: checkpoint.schemaVersion,
            checkpointPayload: json(checkpoint.payload),
            updatedAt: sql`date_trunc('milliseconds', clock_timestamp())`,
            version: sql`${obStepExecution.version} + 1`,
          })
          .where(
            and(
              eq(obStepExecution.id, step.stepExecutionId),
              eq(obStepExecution.jobExecutionId, step.jobExecutionId),
              eq(obStepExecution.version, step.version),
              eq(obStepExecution.status, 'STARTED'),
            ),
          )
          .returning({ version: obStepExecution.version });
        const row = rows[0];
        return row ? ok({ ...step, version: row.version }) : err(CONFLICT);
      }),

    moveStep: (step, move) =>
      guarded(async () => {
        const legal = checkMove(step.status, move);
        if (!legal.ok) return legal;
        const { rows } = await db.execute<RowRef>(sql`
          with now_at as (select date_trunc('milliseconds', clock_timestamp()) as at)
          update oxide_batch.ob_step_execution s set ${moveAssignments(move, 's')}
          from now_at
          where s.id = ${step.stepExecutionId} and s.job_execution_id = ${step.jobExecutionId}
            and s.version = ${step.version} and s.status = ${step.status}
          returning s.id, s.version, s.status`);
        const row = rows[0];
        if (!row || !isBatchStatus(row.status)) return err(CONFLICT);
        return ok({ ...step, version: Number(row.version), status: row.status });
      }),
  };
}
