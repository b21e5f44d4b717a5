import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgSchema,
  smallint,
  timestamp,
  unique,
  uniqueIndex,
  varchar,
} from 'drizzle-orm/pg-core';
import {
  BATCH_STATUSES,
  FAILURE_CATEGORIES,
  RECOVERY_RESULT_STATUSES,
  UNRESOLVED_STATUSES,
} from '../../domain/batch-status';
import { textList } from '../sql/text-list';
import { bytea } from './types';

/**
 * The oxide-batch runtime's tables at schema version 3 (docs/design.md#runtime-schema), as Keel reads
 * and writes them. The runtime owns this schema: lib/db/bootstrap/oxide-batch.sql is
 * the source of truth and drizzle-kit never migrates it. The names, constraints and
 * indexes below mirror that file so queries are typed; keep the two in step.
 */
export const oxideBatch = pgSchema('oxide_batch');

// Vocabularies Keel shares with the runtime (statuses, failure
// categories) come from lib/domain; these are the runtime's alone.

export const deliveryModes = ['atomic_same_resource', 'at_least_once', 'best_effort'] as const;
export const operatorActions = ['LAUNCH', 'RESTART', 'STOP', 'ABANDON', 'RECOVER'] as const;
export const authorizationClasses = ['READ', 'LIFECYCLE', 'DESTRUCTIVE'] as const;
export const outcomeClasses = ['APPLIED', 'REJECTED'] as const;

const id = () => bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity();
/** `num_nonnulls(a, b, c, d) IN (0, 4)`: the four columns of a typed payload are set together or not at all. */
const allOrNone = (...columns: AnyPgColumn[]) => sql`num_nonnulls(${sql.join(columns, sql`, `)}) IN (0, 4)`;
const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const obSchemaVersion = oxideBatch.table(
  'ob_schema_version',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    version: integer('version').notNull(),
    installedAt: timestamptz('installed_at').notNull().defaultNow(),
  },
  (t) => [
    // One row, ever: the key is a boolean that may only be true.
    check('ob_schema_version_singleton_check', sql`${t.singleton}`),
    check('ob_schema_version_version_check', sql`${t.version} > 0`),
  ],
);

export const obJobDefinition = oxideBatch.table(
  'ob_job_definition',
  {
    id: id(),
    jobName: varchar('job_name', { length: 128 }).notNull(),
    definitionRevision: varchar('definition_revision', { length: 128 }).notNull(),
    manifestFormat: smallint('manifest_format').notNull(),
    manifestDigest: bytea('manifest_digest').notNull(),
    manifest: jsonb('manifest').$type<unknown>().notNull(),
    registeredAt: timestamptz('registered_at').notNull().defaultNow(),
  },
  (t) => [
    check('ob_job_definition_manifest_digest_check', sql`octet_length(${t.manifestDigest}) = 32`),
    // A missing delivery_mode is allowed (recovery treats it as ambiguous).
    check(
      'ob_job_definition_delivery_mode_check',
      sql.join([
        sql`${t.manifest} -> 'delivery_mode' IS NULL`,
        sql` OR ${t.manifest} ->> 'delivery_mode' IN (${textList(deliveryModes)})`,
      ]),
    ),
    unique('ob_job_definition_job_name_definition_revision_key').on(t.jobName, t.definitionRevision),
  ],
);

export const obJobInstance = oxideBatch.table(
  'ob_job_instance',
  {
    id: id(),
    jobName: varchar('job_name', { length: 128 }).notNull(),
    instanceKey: bytea('instance_key').notNull(),
    identifyingParameters: jsonb('identifying_parameters').$type<unknown>().notNull().default(sql`'{}'::jsonb`),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    holdActor: varchar('hold_actor', { length: 128 }),
    holdReason: varchar('hold_reason', { length: 64 }),
    holdPlacedAt: timestamptz('hold_placed_at'),
  },
  (t) => [
    check('ob_job_instance_instance_key_check', sql`octet_length(${t.instanceKey}) = 32`),
    check(
      'ob_job_instance_hold_check',
      sql`num_nonnulls(${t.holdActor}, ${t.holdReason}, ${t.holdPlacedAt}) IN (0, 3)`,
    ),
    unique('ob_job_instance_job_name_instance_key_key').on(t.jobName, t.instanceKey),
  ],
);

export const obJobExecution = oxideBatch.table(
  'ob_job_execution',
  {
    id: id(),
    jobInstanceId: bigint('job_instance_id', { mode: 'number' }).notNull(),
    definitionId: bigint('definition_id', { mode: 'number' }).notNull(),
    upgradeFromDefinitionId: bigint('upgrade_from_definition_id', { mode: 'number' }),
    restartOfExecutionId: bigint('restart_of_execution_id', { mode: 'number' }),
    attempt: integer('attempt').notNull(),
    status: varchar('status', { length: 16, enum: BATCH_STATUSES }).notNull(),
    exitCode: varchar('exit_code', { length: 64 }),
    parameters: jsonb('parameters').$type<unknown>().notNull().default(sql`'{}'::jsonb`),
    contextFormat: smallint('context_format'),
    contextSchema: varchar('context_schema', { length: 128 }),
    contextSchemaVersion: integer('context_schema_version'),
    contextPayload: jsonb('context_payload').$type<unknown>(),
    failureCategory: varchar('failure_category', { length: 32, enum: FAILURE_CATEGORIES }),
    failureId: bigint('failure_id', { mode: 'number' }),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    startedAt: timestamptz('started_at'),
    endedAt: timestamptz('ended_at'),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
    ownerToken: bytea('owner_token'),
    stopRequestedAt: timestamptz('stop_requested_at'),
    stopRequestedBy: varchar('stop_requested_by', { length: 128 }),
  },
  (t) => [
    check('ob_job_execution_id_check', sql`${t.id} > 0`),
    check('ob_job_execution_attempt_check', sql`${t.attempt} > 0`),
    check('ob_job_execution_version_check', sql`${t.version} >= 0`),
    check('ob_job_execution_status_check', sql`${t.status} IN (${textList(BATCH_STATUSES)})`),
    // Ended exactly when resolved; UNKNOWN has not ended until a recovery decision.
    check(
      'ob_job_execution_ended_at_check',
      sql`(${t.endedAt} IS NULL) = (${t.status} IN (${textList(UNRESOLVED_STATUSES)}))`,
    ),
    check('ob_job_execution_failure_check', sql`num_nonnulls(${t.failureCategory}, ${t.failureId}) IN (0, 2)`),
    check('ob_job_execution_failure_category_check', sql`${t.failureCategory} IN (${textList(FAILURE_CATEGORIES)})`),
    check(
      'ob_job_execution_context_check',
      allOrNone(t.contextFormat, t.contextSchema, t.contextSchemaVersion, t.contextPayload),
    ),
    check('ob_job_execution_owner_token_check', sql`octet_length(${t.ownerToken}) = 16`),
    check(
      'ob_job_execution_stop_request_check',
      sql`num_nonnulls(${t.stopRequestedAt}, ${t.stopRequestedBy}) IN (0, 2)`,
    ),
    unique('ob_job_execution_job_instance_id_attempt_key').on(t.jobInstanceId, t.attempt),
    foreignKey({
      name: 'ob_job_execution_job_instance_id_fkey',
      columns: [t.jobInstanceId],
      foreignColumns: [obJobInstance.id],
    }),
    foreignKey({
      name: 'ob_job_execution_definition_id_fkey',
      columns: [t.definitionId],
      foreignColumns: [obJobDefinition.id],
    }),
    foreignKey({
      name: 'ob_job_execution_upgrade_from_definition_id_fkey',
      columns: [t.upgradeFromDefinitionId],
      foreignColumns: [obJobDefinition.id],
    }),
    foreignKey({
      name: 'ob_job_execution_restart_of_execution_id_fkey',
      columns: [t.restartOfExecutionId],
      foreignColumns: [t.id],
    }),
    // At most one unresolved execution per instance.
    uniqueIndex('ob_job_execution_one_unresolved_idx')
      .on(t.jobInstanceId)
      .where(sql`${t.status} IN (${textList(UNRESOLVED_STATUSES)})`),
    // The polling order for live updates on an attached schema.
    index('ob_job_execution_status_updated_at_id_idx').on(t.status, t.updatedAt, t.id),
    index('ob_job_execution_definition_id_idx').on(t.definitionId),
    index('ob_job_execution_upgrade_from_definition_id_idx')
      .on(t.upgradeFromDefinitionId)
      .where(sql`${t.upgradeFromDefinitionId} IS NOT NULL`),
    index('ob_job_execution_restart_of_execution_id_idx')
      .on(t.restartOfExecutionId)
      .where(sql`${t.restartOfExecutionId} IS NOT NULL`),
  ],
);

const stepCounters = {
  readCount: bigint('read_count', { mode: 'number' }).notNull().default(0),
  processedCount: bigint('processed_count', { mode: 'number' }).notNull().default(0),
  writeCount: bigint('write_count', { mode: 'number' }).notNull().default(0),
  filterCount: bigint('filter_count', { mode: 'number' }).notNull().default(0),
  commitCount: bigint('commit_count', { mode: 'number' }).notNull().default(0),
  rollbackCount: bigint('rollback_count', { mode: 'number' }).notNull().default(0),
  readRetryCount: bigint('read_retry_count', { mode: 'number' }).notNull().default(0),
  processRetryCount: bigint('process_retry_count', { mode: 'number' }).notNull().default(0),
  writeRetryCount: bigint('write_retry_count', { mode: 'number' }).notNull().default(0),
  readSkipCount: bigint('read_skip_count', { mode: 'number' }).notNull().default(0),
  processSkipCount: bigint('process_skip_count', { mode: 'number' }).notNull().default(0),
  writeSkipCount: bigint('write_skip_count', { mode: 'number' }).notNull().default(0),
  noRollbackCount: bigint('no_rollback_count', { mode: 'number' }).notNull().default(0),
};

export const obStepExecution = oxideBatch.table(
  'ob_step_execution',
  {
    id: id(),
    jobExecutionId: bigint('job_execution_id', { mode: 'number' }).notNull(),
    stepName: varchar('step_name', { length: 128 }).notNull(),
    stepLogicalId: varchar('step_logical_id', { length: 128 }).notNull(),
    status: varchar('status', { length: 16, enum: BATCH_STATUSES }).notNull(),
    exitCode: varchar('exit_code', { length: 64 }),
    ...stepCounters,
    checkpointFormat: smallint('checkpoint_format'),
    checkpointSchema: varchar('checkpoint_schema', { length: 128 }),
    checkpointSchemaVersion: integer('checkpoint_schema_version'),
    checkpointPayload: jsonb('checkpoint_payload').$type<unknown>(),
    contextFormat: smallint('context_format'),
    contextSchema: varchar('context_schema', { length: 128 }),
    contextSchemaVersion: integer('context_schema_version'),
    contextPayload: jsonb('context_payload').$type<unknown>(),
    // Not limited to format 1: an unsupported envelope must be storable so readers fail closed on it.
    faultStateFormat: smallint('fault_state_format').notNull().default(1),
    faultStateSchema: varchar('fault_state_schema', { length: 128 }).notNull().default('oxide-batch.fault-state'),
    faultStateSchemaVersion: integer('fault_state_schema_version').notNull().default(1),
    // jsonb does not keep the canonical bytes; readers rebuild them before checking the checksum.
    faultStatePayload: jsonb('fault_state_payload')
      .$type<unknown>()
      .notNull()
      .default(
        sql`'{"checkpoint":"0000000000000000000000000000000000000000000000000000000000000000","entries":[]}'::jsonb`,
      ),
    faultStateChecksum: bytea('fault_state_checksum')
      .notNull()
      .default(sql`decode('a491114819e0d3bd8b7ca004dc0636f95b45e2fcb1a67ddb5726beaea12f9922', 'hex')`),
    failureCategory: varchar('failure_category', { length: 32, enum: FAILURE_CATEGORIES }),
    failureId: bigint('failure_id', { mode: 'number' }),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    startedAt: timestamptz('started_at'),
    endedAt: timestamptz('ended_at'),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    check('ob_step_execution_id_check', sql`${t.id} > 0`),
    check('ob_step_execution_version_check', sql`${t.version} >= 0`),
    check('ob_step_execution_status_check', sql`${t.status} IN (${textList(BATCH_STATUSES)})`),
    check(
      'ob_step_execution_ended_at_check',
      sql`(${t.endedAt} IS NULL) = (${t.status} IN (${textList(UNRESOLVED_STATUSES)}))`,
    ),
    check(
      'ob_step_execution_counts_check',
      sql.join(
        Object.keys(stepCounters).map((key) => sql`${t[key as keyof typeof stepCounters]} >= 0`),
        sql` AND `,
      ),
    ),
    check(
      'ob_step_execution_checkpoint_check',
      allOrNone(t.checkpointFormat, t.checkpointSchema, t.checkpointSchemaVersion, t.checkpointPayload),
    ),
    check(
      'ob_step_execution_context_check',
      allOrNone(t.contextFormat, t.contextSchema, t.contextSchemaVersion, t.contextPayload),
    ),
    // 64 KiB measured on jsonb's text form: deterministic, unlike pg_column_size after compression.
    check('ob_step_execution_fault_state_payload_check', sql`octet_length(${t.faultStatePayload}::text) <= 65536`),
    check('ob_step_execution_fault_state_checksum_check', sql`octet_length(${t.faultStateChecksum}) = 32`),
    check('ob_step_execution_failure_check', sql`num_nonnulls(${t.failureCategory}, ${t.failureId}) IN (0, 2)`),
    check('ob_step_execution_failure_category_check', sql`${t.failureCategory} IN (${textList(FAILURE_CATEGORIES)})`),
    unique('ob_step_execution_job_execution_id_step_logical_id_key').on(t.jobExecutionId, t.stepLogicalId),
    foreignKey({
      name: 'ob_step_execution_job_execution_id_fkey',
      columns: [t.jobExecutionId],
      foreignColumns: [obJobExecution.id],
    }),
  ],
);

export const obRecoveryDecision = oxideBatch.table(
  'ob_recovery_decision',
  {
    id: id(),
    jobExecutionId: bigint('job_execution_id', { mode: 'number' }).notNull(),
    executionVersion: bigint('execution_version', { mode: 'number' }).notNull(),
    priorStatus: varchar('prior_status', { length: 16, enum: UNRESOLVED_STATUSES }).notNull(),
    resultingStatus: varchar('resulting_status', { length: 16, enum: RECOVERY_RESULT_STATUSES }).notNull(),
    reasonCode: varchar('reason_code', { length: 64 }).notNull(),
    operatorReference: varchar('operator_reference', { length: 128 }).notNull(),
    evidenceDigest: bytea('evidence_digest').notNull(),
    decidedAt: timestamptz('decided_at').notNull().defaultNow(),
  },
  (t) => [
    check('ob_recovery_decision_execution_version_check', sql`${t.executionVersion} >= 0`),
    check('ob_recovery_decision_prior_status_check', sql`${t.priorStatus} IN (${textList(UNRESOLVED_STATUSES)})`),
    check(
      'ob_recovery_decision_resulting_status_check',
      sql`${t.resultingStatus} IN (${textList(RECOVERY_RESULT_STATUSES)})`,
    ),
    check('ob_recovery_decision_evidence_digest_check', sql`octet_length(${t.evidenceDigest}) = 32`),
    // One decision per observed version of an execution.
    unique('ob_recovery_decision_job_execution_id_execution_version_key').on(t.jobExecutionId, t.executionVersion),
    foreignKey({
      name: 'ob_recovery_decision_job_execution_id_fkey',
      columns: [t.jobExecutionId],
      foreignColumns: [obJobExecution.id],
    }),
  ],
);

export const obOperatorRequest = oxideBatch.table(
  'ob_operator_request',
  {
    id: id(),
    jobInstanceId: bigint('job_instance_id', { mode: 'number' }),
    jobExecutionId: bigint('job_execution_id', { mode: 'number' }),
    action: varchar('action', { length: 16, enum: operatorActions }).notNull(),
    authorizationClass: varchar('authorization_class', { length: 16, enum: authorizationClasses }).notNull(),
    operationId: varchar('operation_id', { length: 64 }).notNull(),
    actorRef: varchar('actor_ref', { length: 128 }).notNull(),
    reasonCode: varchar('reason_code', { length: 64 }),
    requestDigest: bytea('request_digest').notNull(),
    observedVersion: bigint('observed_version', { mode: 'number' }),
    priorStatus: varchar('prior_status', { length: 16, enum: BATCH_STATUSES }),
    resultStatus: varchar('result_status', { length: 16, enum: BATCH_STATUSES }),
    outcomeClass: varchar('outcome_class', { length: 16, enum: outcomeClasses }).notNull(),
    rejectionCode: varchar('rejection_code', { length: 32 }),
    requestedAt: timestamptz('requested_at').notNull().defaultNow(),
  },
  (t) => [
    check('ob_operator_request_action_check', sql`${t.action} IN (${textList(operatorActions)})`),
    check(
      'ob_operator_request_authorization_class_check',
      sql`${t.authorizationClass} IN (${textList(authorizationClasses)})`,
    ),
    check('ob_operator_request_request_digest_check', sql`octet_length(${t.requestDigest}) = 32`),
    check('ob_operator_request_observed_version_check', sql`${t.observedVersion} >= 0`),
    check('ob_operator_request_prior_status_check', sql`${t.priorStatus} IN (${textList(BATCH_STATUSES)})`),
    check('ob_operator_request_result_status_check', sql`${t.resultStatus} IN (${textList(BATCH_STATUSES)})`),
    check('ob_operator_request_outcome_class_check', sql`${t.outcomeClass} IN (${textList(outcomeClasses)})`),
    check(
      'ob_operator_request_rejection_code_check',
      sql`(${t.rejectionCode} IS NOT NULL) = (${t.outcomeClass} = 'REJECTED')`,
    ),
    // The operation id is the idempotency key of one action.
    unique('ob_operator_request_action_operation_id_key').on(t.action, t.operationId),
    foreignKey({
      name: 'ob_operator_request_job_instance_id_fkey',
      columns: [t.jobInstanceId],
      foreignColumns: [obJobInstance.id],
    }),
    foreignKey({
      name: 'ob_operator_request_job_execution_id_fkey',
      columns: [t.jobExecutionId],
      foreignColumns: [obJobExecution.id],
    }),
    index('ob_operator_request_job_instance_id_idx').on(t.jobInstanceId).where(sql`${t.jobInstanceId} IS NOT NULL`),
    index('ob_operator_request_job_execution_id_idx').on(t.jobExecutionId).where(sql`${t.jobExecutionId} IS NOT NULL`),
  ],
);

/** Keel only asks whether a COMPLETED partition exists for an execution. */
export const obStepPartition = oxideBatch.table(
  'ob_step_partition',
  {
    id: id(),
    stepExecutionId: bigint('step_execution_id', { mode: 'number' }).notNull(),
    partitionKey: varchar('partition_key', { length: 128 }).notNull(),
    partitionOrdinal: integer('partition_ordinal').notNull(),
    status: varchar('status', { length: 16, enum: BATCH_STATUSES }).notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    check('ob_step_partition_partition_ordinal_check', sql`${t.partitionOrdinal} >= 0`),
    check('ob_step_partition_status_check', sql`${t.status} IN (${textList(BATCH_STATUSES)})`),
    check('ob_step_partition_version_check', sql`${t.version} >= 0`),
    unique('ob_step_partition_step_execution_id_partition_key_key').on(t.stepExecutionId, t.partitionKey),
    unique('ob_step_partition_step_execution_id_partition_ordinal_key').on(t.stepExecutionId, t.partitionOrdinal),
    foreignKey({
      name: 'ob_step_partition_step_execution_id_fkey',
      columns: [t.stepExecutionId],
      foreignColumns: [obStepExecution.id],
    }),
  ],
);

/** Keel only asks whether any flow decision exists for an execution. */
export const obFlowDecision = oxideBatch.table(
  'ob_flow_decision',
  {
    id: id(),
    jobExecutionId: bigint('job_execution_id', { mode: 'number' }).notNull(),
    decisionOrdinal: integer('decision_ordinal').notNull(),
    sourceStepLogicalId: varchar('source_step_logical_id', { length: 128 }).notNull(),
    exitCode: varchar('exit_code', { length: 64 }).notNull(),
    // Null when the decision ends the flow.
    nextStepLogicalId: varchar('next_step_logical_id', { length: 128 }),
    decidedAt: timestamptz('decided_at').notNull().defaultNow(),
  },
  (t) => [
    check('ob_flow_decision_decision_ordinal_check', sql`${t.decisionOrdinal} >= 0`),
    unique('ob_flow_decision_job_execution_id_decision_ordinal_key').on(t.jobExecutionId, t.decisionOrdinal),
    foreignKey({
      name: 'ob_flow_decision_job_execution_id_fkey',
      columns: [t.jobExecutionId],
      foreignColumns: [obJobExecution.id],
    }),
  ],
);

export type ObSchemaVersion = typeof obSchemaVersion.$inferSelect;
export type ObJobDefinition = typeof obJobDefinition.$inferSelect;
export type NewObJobDefinition = typeof obJobDefinition.$inferInsert;
export type ObJobInstance = typeof obJobInstance.$inferSelect;
export type NewObJobInstance = typeof obJobInstance.$inferInsert;
export type ObJobExecution = typeof obJobExecution.$inferSelect;
export type NewObJobExecution = typeof obJobExecution.$inferInsert;
export type ObStepExecution = typeof obStepExecution.$inferSelect;
export type NewObStepExecution = typeof obStepExecution.$inferInsert;
export type ObRecoveryDecision = typeof obRecoveryDecision.$inferSelect;
export type NewObRecoveryDecision = typeof obRecoveryDecision.$inferInsert;
export type ObOperatorRequest = typeof obOperatorRequest.$inferSelect;
export type NewObOperatorRequest = typeof obOperatorRequest.$inferInsert;
export type ObStepPartition = typeof obStepPartition.$inferSelect;
export type NewObStepPartition = typeof obStepPartition.$inferInsert;
export type ObFlowDecision = typeof obFlowDecision.$inferSelect;
export type NewObFlowDecision = typeof obFlowDecision.$inferInsert;
