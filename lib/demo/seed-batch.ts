import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import {
  obFlowDecision,
  obJobDefinition,
  obJobExecution,
  obJobInstance,
  obStepExecution,
  obStepPartition,
} from '../db/schema/oxide-batch';
import {
  isActive,
  isUnresolved,
  type BatchStatus,
  type FailureCategory,
  type FaultPhase,
} from '../domain/batch-status';
import { checksum, EMPTY_CHECKSUM_HEX, EMPTY_ENVELOPE, newEnvelope, type FaultStateEntry } from '../domain/fault-state';
import { deriveRetryKeyHex } from '../domain/retry-key';
import { chunks, type SeededRandom, sha256 } from './random';
import { seedOperatorRequests } from './seed-operator-requests';

interface StepPlan {
  logicalId: string;
  retryLimit?: number;
  stateLimit?: number;
}

interface DefinitionPlan {
  jobName: string;
  deliveryMode?: 'atomic_same_resource' | 'at_least_once' | 'best_effort';
  steps: StepPlan[];
}

/** The demo's job definitions: one without a delivery mode and one without fault policies. */
export const DEMO_DEFINITIONS: DefinitionPlan[] = [
  {
    jobName: 'import-ledger',
    deliveryMode: 'atomic_same_resource',
    steps: [
      { logicalId: 'read-files', retryLimit: 5, stateLimit: 16 },
      { logicalId: 'post-entries', retryLimit: 3, stateLimit: 8 },
    ],
  },
  {
    jobName: 'reconcile-payouts',
    deliveryMode: 'at_least_once',
    steps: [
      { logicalId: 'fetch-payouts', retryLimit: 6, stateLimit: 32 },
      { logicalId: 'match', retryLimit: 2, stateLimit: 8 },
      { logicalId: 'report', retryLimit: 2, stateLimit: 4 },
    ],
  },
  {
    jobName: 'settle-invoices',
    deliveryMode: 'best_effort',
    steps: [
      { logicalId: 'select-due', retryLimit: 4, stateLimit: 16 },
      { logicalId: 'charge', retryLimit: 5, stateLimit: 64 },
    ],
  },
  {
    jobName: 'export-statements',
    steps: [
      { logicalId: 'render', retryLimit: 3, stateLimit: 16 },
      { logicalId: 'upload', retryLimit: 8, stateLimit: 16 },
    ],
  },
  {
    jobName: 'rebuild-search-index',
    deliveryMode: 'atomic_same_resource',
    steps: [{ logicalId: 'scan' }, { logicalId: 'index' }],
  },
  {
    jobName: 'archive-receipts',
    deliveryMode: 'at_least_once',
    steps: [
      { logicalId: 'collect', retryLimit: 4, stateLimit: 16 },
      { logicalId: 'compress', retryLimit: 2, stateLimit: 8 },
      { logicalId: 'store', retryLimit: 6, stateLimit: 32 },
    ],
  },
];

export function manifestFor(plan: DefinitionPlan): Record<string, unknown> {
  return {
    job_name: plan.jobName,
    ...(plan.deliveryMode ? { delivery_mode: plan.deliveryMode } : {}),
    steps: plan.steps.map((step) => ({
      logical_id: step.logicalId,
      ...(step.retryLimit !== undefined
        ? { fault_policy: { retry_limit: step.retryLimit, retry_state_limit: step.stateLimit } }
        : {}),
    })),
  };
}

const LAST_STATUS_WEIGHTS: [BatchStatus, number][] = [
  ['COMPLETED', 44],
  ['FAILED', 11],
  ['STOPPED', 5],
  ['ABANDONED', 4],
  ['STARTED', 20],
  ['STARTING', 4],
  ['STOPPING', 4],
  ['UNKNOWN', 8],
];
const RETRY_CATEGORIES: FailureCategory[] = [
  'TRANSIENT_INFRASTRUCTURE',
  'TIMEOUT',
  'USER_COMPONENT',
  'SERIALIZATION',
  'OPTIMISTIC_CONFLICT',
];
const RETRY_PHASES: FaultPhase[] = ['read', 'process', 'write'];
const FAILED_CATEGORIES: FailureCategory[] = [
  'PERMANENT_INFRASTRUCTURE',
  'USER_COMPONENT',
  'TIMEOUT',
  'INVARIANT',
  'SERIALIZATION',
];
const MINUTE = 60_000;

function weighted<T>(random: SeededRandom, weights: [T, number][]): T {
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  let roll = random.next() * total;
  for (const [value, weight] of weights) {
    roll -= weight;
    if (roll < 0) return value;
  }
  return weights[weights.length - 1]![0];
}

export const checkpointDescriptor = (payload: unknown) => ({
  checkpointFormat: 1,
  checkpointSchema: 'oxide-batch.checkpoint',
  checkpointSchemaVersion: 1,
  checkpointPayload: payload,
});

/** The committed checkpoint identity an envelope is bound to. */
export const checkpointDigestHex = (payload: unknown): string => sha256(JSON.stringify(payload)).toString('hex');

type Corruption = 'checksum' | 'unsorted' | 'unknown-category' | null;

function faultState(
  random: SeededRandom,
  definitionDigest: Buffer,
  step: StepPlan,
  checkpointPayload: unknown,
  corruption: Corruption,
) {
  const checkpoint = checkpointDigestHex(checkpointPayload);
  const count = random.int(1, Math.min(5, step.stateLimit ?? 5));
  const entries: FaultStateEntry[] = [];
  const retryCounts = { read: 0, process: 0, write: 0 };
  const used = new Set<number>();
  for (let i = 0; i < count; i += 1) {
    let itemOrdinal = random.int(0, 50_000);
    while (used.has(itemOrdinal)) itemOrdinal += 1;
    used.add(itemOrdinal);
    const phase = random.pick(RETRY_PHASES);
    const key = deriveRetryKeyHex({
      definitionDigest,
      stepName: step.logicalId,
      phase,
      checkpointDigest: checkpoint,
      ordinal: itemOrdinal,
    });
    if (!key.ok) throw new Error('demo retry key');
    const ordinal = random.int(1, Math.max(1, step.retryLimit ?? 3));
    retryCounts[phase as 'read' | 'process' | 'write'] += ordinal;
    entries.push({
      key: key.value,
      phase,
      category: random.pick(RETRY_CATEGORIES),
      ordinal,
      revision: 'classifier_v3',
    });
  }
  const envelope = newEnvelope(checkpoint, entries);
  if (!envelope.ok) throw new Error(`demo envelope: ${envelope.error.kind}`);
  const sum = checksum(envelope.value);
  if (!sum.ok) throw new Error('demo checksum');
  let payload: { checkpoint: string; entries: Record<string, unknown>[] } = {
    checkpoint,
    entries: envelope.value.entries.map((e) => ({
      category: e.category,
      key: e.key,
      ordinal: e.ordinal,
      phase: e.phase,
      revision: e.revision,
    })),
  };
  let storedChecksum = sum.value;
  // A few deliberately damaged envelopes, so the console's CORRUPT view has something to show.
  if (corruption === 'checksum') storedChecksum = random.bytes(32);
  if (corruption === 'unsorted' && payload.entries.length > 1)
    payload = { ...payload, entries: [...payload.entries].reverse() };
  if (corruption === 'unsorted' && payload.entries.length === 1) storedChecksum = random.bytes(32);
  if (corruption === 'unknown-category')
    payload = { ...payload, entries: payload.entries.map((e, i) => (i === 0 ? { ...e, category: 'COSMIC_RAY' } : e)) };
  return { payload, checksum: storedChecksum, retryCounts, entryCount: entries.length };
}

export interface BatchSeedSummary {
  definitions: number;
  executions: number;
  steps: number;
  stale: number;
  corrupt: number;
}

export interface BatchSeedOptions {
  targetExecutions?: number;
  /**
   * The owner token of an execution still live at seeding (active, not stale): a process
   * the demo runtime plays, which re-derives it to carry the execution on. Without it
   * every owner token is random, and live executions go stale once the threshold passes.
   */
  liveOwnerToken?: (executionId: number) => Buffer;
}

/** Job definitions, instances, executions with steps and fault state, partitions and flow decisions. */
export async function seedBatch(
  db: DbOrTx,
  random: SeededRandom,
  nowMs: number,
  options: BatchSeedOptions = {},
): Promise<BatchSeedSummary> {
  const { targetExecutions = 2000, liveOwnerToken } = options;
  const definitions = DEMO_DEFINITIONS.map((plan, index) => {
    const manifest = manifestFor(plan);
    return { id: index + 1, plan, manifest, digest: sha256(JSON.stringify(manifest)) };
  });
  await db.insert(obJobDefinition).values(
    definitions.map((d) => ({
      id: d.id,
      jobName: d.plan.jobName,
      definitionRevision: 'r1',
      manifestFormat: 1,
      manifestDigest: d.digest,
      manifest: d.manifest,
      registeredAt: new Date(nowMs - 30 * 24 * 60 * MINUTE),
    })),
  );

  const instances: (typeof obJobInstance.$inferInsert)[] = [];
  const executions: (typeof obJobExecution.$inferInsert)[] = [];
  const steps: (typeof obStepExecution.$inferInsert)[] = [];
  const partitions: (typeof obStepPartition.$inferInsert)[] = [];
  const flowDecisions: (typeof obFlowDecision.$inferInsert)[] = [];
  let stale = 0;
  let corrupt = 0;
  const corruptions: Corruption[] = [
    'checksum',
    'checksum',
    'checksum',
    'unsorted',
    'unsorted',
    'unknown-category',
    'unknown-category',
    'checksum',
  ];

  while (executions.length < targetExecutions) {
    const definition = random.pick(definitions);
    const instanceId = instances.length + 1;
    const createdMs = nowMs - random.int(10 * MINUTE, 7 * 24 * 60 * MINUTE);
    instances.push({
      id: instanceId,
      jobName: definition.plan.jobName,
      instanceKey: sha256(`instance:${instanceId}`),
      identifyingParameters: { business_date: new Date(createdMs).toISOString().slice(0, 10), shard: instanceId % 16 },
      createdAt: new Date(createdMs),
    });
    const attempts = random.chance(0.1) ? random.int(2, 3) : 1;
    let previousId: number | null = null;
    for (let attempt = 1; attempt <= attempts && executions.length < targetExecutions; attempt += 1) {
      const id = executions.length + 1;
      const last = attempt === attempts;
      const status: BatchStatus = last
        ? weighted(random, LAST_STATUS_WEIGHTS)
        : random.pick(['FAILED', 'STOPPED'] as const);
      const unresolved = isUnresolved(status);
      const isStale = unresolved && (status === 'UNKNOWN' || random.chance(0.4));
      const startedMs = createdMs + (attempt - 1) * 30 * MINUTE + random.int(1_000, 60_000);
      const updatedMs = unresolved
        ? nowMs - (isStale ? random.int(20 * MINUTE, 3 * 24 * 60 * MINUTE) : random.int(1_000, 4 * MINUTE))
        : Math.min(nowMs - 1_000, startedMs + random.int(MINUTE, 90 * MINUTE));
      if (isStale && status !== 'UNKNOWN') stale += 1;
      const failed = status === 'FAILED';
      // The random token is drawn either way, so the rest of the seed stays as it was.
      const ownerToken = (drawn: Buffer | null) =>
        drawn && liveOwnerToken && isActive(status) && !isStale ? liveOwnerToken(id) : drawn;
      executions.push({
        id,
        jobInstanceId: instanceId,
        definitionId: definition.id,
        restartOfExecutionId: previousId,
        attempt,
        status,
        exitCode: unresolved ? null : status,
        parameters: { run: `${definition.plan.jobName}-${id}` },
        failureCategory: failed ? random.pick(FAILED_CATEGORIES) : null,
        failureId: failed ? 10_000 + id : null,
        createdAt: new Date(Math.min(createdMs + (attempt - 1) * 30 * MINUTE, updatedMs)),
        startedAt: status === 'STARTING' ? null : new Date(Math.min(startedMs, updatedMs)),
        endedAt: unresolved ? null : new Date(updatedMs),
        updatedAt: new Date(updatedMs),
        version: random.int(2, 40),
        ownerToken: ownerToken(unresolved && !(isStale && random.chance(0.25)) ? random.bytes(16) : null),
        stopRequestedAt: status === 'STOPPING' ? new Date(updatedMs - 1_000) : null,
        // Half the stops were asked through Keel by the demo operator (audited), half with the runtime's CLI.
        stopRequestedBy: status === 'STOPPING' ? (id % 2 === 0 ? 'operator' : 'cli:ops') : null,
      });
      previousId = id;

      const stepCount =
        status === 'STARTING'
          ? 0
          : status === 'COMPLETED'
            ? definition.plan.steps.length
            : random.int(1, definition.plan.steps.length);
      for (let s = 0; s < stepCount; s += 1) {
        const plan = definition.plan.steps[s]!;
        const latest = s === stepCount - 1;
        const stepStatus: BatchStatus = !latest
          ? 'COMPLETED'
          : status === 'STOPPING'
            ? 'STARTED'
            : status === 'UNKNOWN'
              ? random.pick(['STARTED', 'UNKNOWN'] as const)
              : status;
        const stepUnresolved = isUnresolved(stepStatus);
        const stepId = steps.length + 1;
        const read = random.int(100, 50_000);
        const checkpointPayload = { offset: read, chunk: Math.floor(read / 500) };
        const withFaults = latest && stepUnresolved && random.chance(0.45);
        const corruption =
          withFaults && corrupt < corruptions.length && random.chance(0.12) ? corruptions[corrupt]! : null;
        const fault = withFaults ? faultState(random, definition.digest, plan, checkpointPayload, corruption) : null;
        if (corruption) corrupt += 1;
        const stepEndMs = stepUnresolved
          ? null
          : latest
            ? updatedMs
            : Math.min(updatedMs, startedMs + (s + 1) * random.int(10_000, 600_000));
        steps.push({
          id: stepId,
          jobExecutionId: id,
          stepName: plan.logicalId,
          stepLogicalId: plan.logicalId,
          status: stepStatus,
          exitCode: stepUnresolved ? null : stepStatus,
          readCount: read,
          processedCount: read - random.int(0, 20),
          writeCount: read - random.int(0, 40),
          filterCount: random.int(0, 20),
          commitCount: Math.ceil(read / 500),
          rollbackCount:
            (fault?.retryCounts.read ?? 0) + (fault?.retryCounts.process ?? 0) + (fault?.retryCounts.write ?? 0),
          readRetryCount: fault?.retryCounts.read ?? 0,
          processRetryCount: fault?.retryCounts.process ?? 0,
          writeRetryCount: fault?.retryCounts.write ?? 0,
          readSkipCount: random.chance(0.1) ? random.int(1, 5) : 0,
          processSkipCount: random.chance(0.1) ? random.int(1, 5) : 0,
          writeSkipCount: 0,
          ...checkpointDescriptor(checkpointPayload),
          faultStatePayload: fault ? fault.payload : { checkpoint: EMPTY_ENVELOPE.checkpoint, entries: [] },
          faultStateChecksum: fault ? fault.checksum : Buffer.from(EMPTY_CHECKSUM_HEX, 'hex'),
          failureCategory: stepStatus === 'FAILED' ? executions[executions.length - 1]!.failureCategory : null,
          failureId: stepStatus === 'FAILED' ? executions[executions.length - 1]!.failureId : null,
          createdAt: new Date(Math.min(startedMs, updatedMs)),
          startedAt: new Date(Math.min(startedMs, updatedMs)),
          endedAt: stepEndMs === null ? null : new Date(stepEndMs),
          updatedAt: new Date(stepEndMs ?? updatedMs),
          version: random.int(1, 30),
        });
        if (latest && random.chance(0.05)) {
          partitions.push({
            stepExecutionId: stepId,
            partitionKey: 'p0',
            partitionOrdinal: 0,
            status: 'COMPLETED',
            createdAt: new Date(startedMs),
            updatedAt: new Date(startedMs),
          });
        }
      }
      if (stepCount > 1 && random.chance(0.06)) {
        const plan = definition.plan.steps;
        flowDecisions.push({
          jobExecutionId: id,
          decisionOrdinal: 0,
          sourceStepLogicalId: plan[0]!.logicalId,
          exitCode: 'COMPLETED',
          nextStepLogicalId: plan[1]!.logicalId,
          decidedAt: new Date(startedMs),
        });
      }
    }
  }

  for (const rows of chunks(instances, 1000)) await db.insert(obJobInstance).values(rows);
  for (const rows of chunks(executions, 500)) await db.insert(obJobExecution).values(rows);
  for (const rows of chunks(steps, 400)) await db.insert(obStepExecution).values(rows);
  if (partitions.length) await db.insert(obStepPartition).values(partitions);
  if (flowDecisions.length) await db.insert(obFlowDecision).values(flowDecisions);
  await seedOperatorRequests(db, { definitions, instances, executions, nowMs });
  // Fixed ids were inserted, so move each identity past them.
  for (const table of ['ob_job_definition', 'ob_job_instance', 'ob_job_execution', 'ob_step_execution']) {
    await db.execute(
      sql.raw(
        `select setval(pg_get_serial_sequence('oxide_batch.${table}', 'id'),
         (select max(id) from oxide_batch.${table}))`,
      ),
    );
  }
  return { definitions: definitions.length, executions: executions.length, steps: steps.length, stale, corrupt };
}
