import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { postgresTakeoverUnitOfWork } from '../../lib/adapters/takeover-unit-of-work';
import type { Database, DbOrTx } from '../../lib/db/client';
import { durableCheckpoint } from '../../lib/db/schema/keel';
import { obJobDefinition, obJobExecution, obJobInstance, obStepExecution } from '../../lib/db/schema/oxide-batch';
import type { Role } from '../../lib/domain/roles';
import type { Actor } from '../../lib/domain/actor';
import type { BatchStatus, FailureCategory } from '../../lib/domain/batch-status';
import { GOVERNING_SPEC, sealCheckpoint, toCheckpointJson, type DurableCheckpoint } from '../../lib/domain/checkpoint';
import { manifestFor } from '../../lib/demo/seed-batch';
import type { ProposerClock } from '../../lib/ports/proposer-clock';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import type { RecoveryServiceDeps } from '../../lib/services/recovery-common';

export const MINUTE = 60_000;
const UNRESOLVED: BatchStatus[] = ['STARTING', 'STARTED', 'STOPPING', 'UNKNOWN'];
let sequence = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${(sequence += 1)}-${randomBytes(3).toString('hex')}`;

export const actor = (role: Role, login: string = unique(role)): Actor => ({
  id: `user:${login}`,
  login,
  name: login,
  role,
});

export interface DefinitionOptions {
  deliveryMode?: 'atomic_same_resource' | 'at_least_once' | 'best_effort';
  steps?: { logicalId: string; retryLimit?: number; stateLimit?: number }[];
}

/** A job definition whose manifest is shaped like the demo's (lib/demo/seed-batch.ts `manifestFor`). */
export async function seedDefinition(db: DbOrTx, options: DefinitionOptions = {}) {
  const jobName = unique('job');
  const manifest = manifestFor({
    jobName,
    deliveryMode: options.deliveryMode,
    steps: options.steps ?? [{ logicalId: 'load', retryLimit: 3, stateLimit: 4 }],
  });
  const digest = createHash('sha256').update(JSON.stringify(manifest)).digest();
  const [row] = await db
    .insert(obJobDefinition)
    .values({ jobName, definitionRevision: 'r1', manifestFormat: 1, manifestDigest: digest, manifest })
    .returning({ id: obJobDefinition.id });
  return { id: row!.id, jobName, digest };
}

export interface ExecutionOptions {
  definitionId: number;
  status?: BatchStatus;
  /** Milliseconds before the database's now; the execution's `updated_at`. */
  silentForMs?: number;
  updatedAt?: Date;
  version?: number;
  attempt?: number;
  ownerToken?: Buffer | null;
  failure?: { category: FailureCategory; id: number } | null;
  id?: number;
}

export async function seedExecution(db: DbOrTx, options: ExecutionOptions) {
  const status = options.status ?? 'STARTED';
  const [instance] = await db
    .insert(obJobInstance)
    // The runtime names an instance after its job, so the instance takes the definition's name.
    .values({
      jobName: sql`(select job_name from oxide_batch.ob_job_definition where id = ${options.definitionId})`,
      instanceKey: randomBytes(32),
    })
    .returning({ id: obJobInstance.id });
  const updatedAt =
    options.updatedAt ?? sql`clock_timestamp() - ${options.silentForMs ?? 20 * MINUTE} * interval '1 millisecond'`;
  const [row] = await db
    .insert(obJobExecution)
    .values({
      ...(options.id !== undefined ? { id: options.id } : {}),
      jobInstanceId: instance!.id,
      definitionId: options.definitionId,
      attempt: options.attempt ?? 1,
      status,
      failureCategory: options.failure?.category ?? null,
      failureId: options.failure?.id ?? null,
      startedAt: status === 'STARTING' ? null : sql`clock_timestamp() - interval '2 hours'`,
      endedAt: UNRESOLVED.includes(status) ? null : updatedAt,
      updatedAt,
      version: options.version ?? 7,
      ownerToken: options.ownerToken === undefined ? randomBytes(16) : options.ownerToken,
    })
    .returning({ id: obJobExecution.id, jobInstanceId: obJobExecution.jobInstanceId });
  return { id: row!.id, jobInstanceId: row!.jobInstanceId };
}

export async function seedStep(
  db: DbOrTx,
  options: { executionId: number; logicalId?: string; status?: BatchStatus; checkpointPayload?: unknown; id?: number },
) {
  const status = options.status ?? 'STARTED';
  const checkpoint =
    options.checkpointPayload === undefined
      ? {}
      : {
          checkpointFormat: 1,
          checkpointSchema: 'oxide-batch.checkpoint',
          checkpointSchemaVersion: 1,
          checkpointPayload: options.checkpointPayload,
        };
  const [row] = await db
    .insert(obStepExecution)
    .values({
      ...(options.id !== undefined ? { id: options.id } : {}),
      jobExecutionId: options.executionId,
      stepName: options.logicalId ?? 'load',
      stepLogicalId: options.logicalId ?? 'load',
      status,
      startedAt: sql`clock_timestamp() - interval '1 hour'`,
      endedAt: UNRESOLVED.includes(status) ? null : sql`clock_timestamp()`,
      ...checkpoint,
    })
    .returning({ id: obStepExecution.id });
  return row!.id;
}

/** A stale STARTED execution owned by another process, on an at-least-once definition. */
export async function seedStaleExecution(db: DbOrTx, overrides: Partial<ExecutionOptions> & DefinitionOptions = {}) {
  const definition = await seedDefinition(db, {
    deliveryMode: overrides.deliveryMode ?? 'atomic_same_resource',
    steps: overrides.steps,
  });
  const execution = await seedExecution(db, { ...overrides, definitionId: definition.id });
  return { definition, ...execution };
}

export function testCheckpoint(
  executionId: string,
  lease: { ownerId: string; fencingToken: number; expiresAt: number },
): DurableCheckpoint {
  return {
    governingSpec: GOVERNING_SPEC,
    executionId,
    snapshots: {
      proposalDigest: 'p1',
      manifestDigest: 'm1',
      registryDigest: 'r1',
      policyDigest: 'po1',
      authorizationDigest: 'a1',
    },
    lease,
    completedNodeIds: ['start'],
    wait: null,
    retry: { retryable: true, maxAttempts: 3, backoffUnits: 2, budgetUnits: 9, idempotencyKey: `idem-${executionId}` },
    compensation: [],
    authenticationTag: '',
  };
}

/** Writes a sealed checkpoint row directly (fixture setup, bypassing the store under test). */
export async function seedCheckpoint(db: DbOrTx, key: Buffer, checkpoint: DurableCheckpoint) {
  const sealed = sealCheckpoint(checkpoint, key);
  if (!sealed.ok) throw new Error(sealed.error.reason);
  const c = sealed.value;
  await db.insert(durableCheckpoint).values({
    executionId: c.executionId,
    checkpoint: toCheckpointJson(c),
    authenticationTag: c.authenticationTag,
    leaseOwner: c.lease.ownerId,
    fencingToken: c.lease.fencingToken,
    leaseExpiresAtMs: c.lease.expiresAt,
  });
  return c;
}

export function fixedClock(overrides: Partial<ProposerClock> = {}): ProposerClock {
  let last: number | null = null;
  return {
    wallMs: () => Date.now(),
    monotonicMs: () => performance.now(),
    lastServerTimeMs: () => last,
    observeServerTime: (ms) => {
      last = Math.max(last ?? ms, ms);
    },
    ...overrides,
  };
}

export const SETTINGS = {
  staleThresholdMs: 15 * MINUTE,
  maxClockSkewMs: 5_000,
  proposalTtlMs: 15 * MINUTE,
  orchestrationLeaseMs: 5 * MINUTE,
};

export function recoveryDeps(
  db: Database,
  options: { checkpointKey?: Buffer; ownerToken?: Buffer } = {},
): RecoveryServiceDeps {
  return {
    unitOfWork: postgresTakeoverUnitOfWork(db, { checkpointKey: options.checkpointKey ?? randomBytes(32) }),
    clock: fixedClock(),
    settings: SETTINGS,
    ownerToken: options.ownerToken ?? randomBytes(16),
  };
}

/** A stale execution and the takeover `by` proposed for it through the service, still pending. */
export async function proposeStaleTakeover(db: Database, deps: RecoveryServiceDeps, by: Actor) {
  const execution = await seedStaleExecution(db);
  const result = await proposeRecovery(deps, by, {
    target: 'batch',
    reason: 'owner silent',
    executionId: execution.id,
  });
  if (!result.ok) throw new Error(`propose: ${result.error.code}`);
  return { execution, proposal: result.value.proposal };
}

/** Moves a proposal's approval deadline into the past (fixture time travel). */
export async function expireDeadline(db: DbOrTx, proposalId: number) {
  await db.execute(
    sql`update keel.recovery_proposal set wait_deadline = date_trunc('milliseconds',
        clock_timestamp()) - interval '1 second' where id = ${proposalId}`,
  );
}
