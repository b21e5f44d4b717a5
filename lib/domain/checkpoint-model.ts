import { totalResult, err, ok, type Result } from './result';

/** The only orchestration spec a checkpoint may govern (docs/design.md#orchestration-checkpoints). */
export const GOVERNING_SPEC = '111-durable-dynamic-orchestration';

const MAX_U32 = 0xffff_ffff;

export const WAIT_KINDS = ['event', 'schedule', 'human_approval'] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

export interface GoverningSnapshots {
  proposalDigest: string;
  manifestDigest: string;
  registryDigest: string;
  policyDigest: string;
  authorizationDigest: string;
}

export const SNAPSHOT_FIELDS = [
  'proposalDigest',
  'manifestDigest',
  'registryDigest',
  'policyDigest',
  'authorizationDigest',
] as const satisfies readonly (keyof GoverningSnapshots)[];
export type SnapshotField = (typeof SNAPSHOT_FIELDS)[number];

export interface ExecutionLease {
  ownerId: string;
  fencingToken: number;
  /** Epoch milliseconds; the lease is expired once `expiresAt <= now`. */
  expiresAt: number;
}

export interface DurableWait {
  kind: WaitKind;
  ownerId: string;
  /** Epoch milliseconds; a wake strictly after it is too late. */
  deadline: number;
  cancellationId: string;
}

export interface CheckpointRetryPolicy {
  retryable: boolean;
  maxAttempts: number;
  backoffUnits: number;
  budgetUnits: number;
  idempotencyKey: string;
}

export interface CompensationStep {
  capabilityId: string;
  authorizationDigest: string;
  order: number;
}

export interface DurableCheckpoint {
  governingSpec: string;
  executionId: string;
  snapshots: GoverningSnapshots;
  lease: ExecutionLease;
  completedNodeIds: string[];
  wait: DurableWait | null;
  retry: CheckpointRetryPolicy | null;
  compensation: CompensationStep[];
  /** Hex HMAC-SHA256 filled by `sealCheckpoint`; empty while unsealed. */
  authenticationTag: string;
}

/** The runtime's serde form: the bytes the authentication tag covers. */
export interface DurableCheckpointJson {
  governing_spec: string;
  execution_id: string;
  snapshots: {
    proposal_digest: string;
    manifest_digest: string;
    registry_digest: string;
    policy_digest: string;
    authorization_digest: string;
  };
  lease: { owner_id: string; fencing_token: number; expires_at: number };
  completed_node_ids: string[];
  wait: { kind: WaitKind; owner_id: string; deadline: number; cancellation_id: string } | null;
  retry: {
    retryable: boolean;
    max_attempts: number;
    backoff_units: number;
    budget_units: number;
    idempotency_key: string;
  } | null;
  compensation: { capability_id: string; authorization_digest: string; order: number }[];
  authentication_tag: string;
}

export type CheckpointError =
  | { kind: 'InvalidCheckpoint'; reason: string }
  | { kind: 'AuthenticationFailed' }
  | { kind: 'SnapshotMismatch'; fields: SnapshotField[] }
  | { kind: 'StaleLease' }
  | { kind: 'WaitExpired' }
  | { kind: 'Cancelled' }
  | { kind: 'RetryNotDeclared' }
  | { kind: 'RetryBudgetExhausted' }
  | { kind: 'CompensationUnauthorized' };

export type CheckpointErrorOf<K extends CheckpointError['kind']> = Extract<CheckpointError, { kind: K }>;
export type InvalidCheckpoint = CheckpointErrorOf<'InvalidCheckpoint'>;

export const invalidCheckpoint = (reason: string): InvalidCheckpoint => ({ kind: 'InvalidCheckpoint', reason });

export const isBlank = (value: string): boolean => value.trim() === '';

// Postgres bigint and the runtime's u64 both exceed what a JS number holds exactly,
// so anything at or above 2^53 is refused rather than silently rounded.
const isSafeCount = (value: number): boolean => Number.isSafeInteger(value) && value >= 0;
const isU32 = (value: number): boolean => isSafeCount(value) && value <= MAX_U32;

/** Names the snapshot digests that are blank; an empty list means complete. */
export function blankSnapshotFields(snapshots: GoverningSnapshots): SnapshotField[] {
  return SNAPSHOT_FIELDS.filter((field) => isBlank(snapshots[field]));
}

function integerProblem(checkpoint: DurableCheckpoint): string | null {
  const { lease, wait, retry, compensation } = checkpoint;
  if (!isSafeCount(lease.fencingToken)) return 'lease.fencing_token is not an integer below 2^53';
  if (!isSafeCount(lease.expiresAt)) return 'lease.expires_at is not an integer below 2^53';
  if (wait && !isSafeCount(wait.deadline)) return 'wait.deadline is not an integer below 2^53';
  if (retry) {
    if (!isU32(retry.maxAttempts)) return 'retry.max_attempts is not a u32';
    if (!isSafeCount(retry.backoffUnits)) return 'retry.backoff_units is not an integer below 2^53';
    if (!isSafeCount(retry.budgetUnits)) return 'retry.budget_units is not an integer below 2^53';
  }
  if (compensation.some((step) => !isU32(step.order))) return 'compensation.order is not a u32';
  return null;
}

// A lone surrogate has no UTF-8 form, so neither Postgres nor RFC 8785 can carry it.
const LONE_SURROGATE = /\p{Cs}/u;

function checkpointStrings(checkpoint: DurableCheckpoint): string[] {
  const { snapshots, lease, wait, retry } = checkpoint;
  return [
    checkpoint.governingSpec,
    checkpoint.executionId,
    ...SNAPSHOT_FIELDS.map((field) => snapshots[field]),
    lease.ownerId,
    ...checkpoint.completedNodeIds,
    ...(wait ? [wait.kind, wait.ownerId, wait.cancellationId] : []),
    ...(retry ? [retry.idempotencyKey] : []),
    ...checkpoint.compensation.flatMap((step) => [step.capabilityId, step.authorizationDigest]),
    checkpoint.authenticationTag,
  ];
}

/** The save-time rules (docs/design.md#checkpoint-rules): every refusal is InvalidCheckpoint with its reason. */
function validateCheckpointUnchecked(checkpoint: DurableCheckpoint): Result<DurableCheckpoint, InvalidCheckpoint> {
  if (checkpoint.governingSpec !== GOVERNING_SPEC) {
    return err(invalidCheckpoint(`unsupported governing spec ${JSON.stringify(checkpoint.governingSpec)}`));
  }
  if (isBlank(checkpoint.executionId)) return err(invalidCheckpoint('execution id is blank'));
  const blank = blankSnapshotFields(checkpoint.snapshots);
  if (blank.length > 0) return err(invalidCheckpoint(`snapshot digests are blank: ${blank.join(', ')}`));
  if (isBlank(checkpoint.lease.ownerId)) return err(invalidCheckpoint('lease owner is blank'));
  if (checkpoint.lease.fencingToken === 0) return err(invalidCheckpoint('fencing token must be above 0'));
  if (checkpoint.wait && !WAIT_KINDS.includes(checkpoint.wait.kind)) {
    return err(invalidCheckpoint(`unknown wait kind ${JSON.stringify(checkpoint.wait.kind)}`));
  }
  if (checkpointStrings(checkpoint).some((value) => LONE_SURROGATE.test(value))) {
    return err(invalidCheckpoint('a string is not well-formed Unicode'));
  }
  const problem = integerProblem(checkpoint);
  return problem === null ? ok(checkpoint) : err(invalidCheckpoint(problem));
}

export function toCheckpointJson(checkpoint: DurableCheckpoint): DurableCheckpointJson {
  const { snapshots, lease, wait, retry } = checkpoint;
  return {
    governing_spec: checkpoint.governingSpec,
    execution_id: checkpoint.executionId,
    snapshots: {
      proposal_digest: snapshots.proposalDigest,
      manifest_digest: snapshots.manifestDigest,
      registry_digest: snapshots.registryDigest,
      policy_digest: snapshots.policyDigest,
      authorization_digest: snapshots.authorizationDigest,
    },
    lease: { owner_id: lease.ownerId, fencing_token: lease.fencingToken, expires_at: lease.expiresAt },
    completed_node_ids: [...checkpoint.completedNodeIds],
    wait: wait
      ? { kind: wait.kind, owner_id: wait.ownerId, deadline: wait.deadline, cancellation_id: wait.cancellationId }
      : null,
    retry: retry
      ? {
          retryable: retry.retryable,
          max_attempts: retry.maxAttempts,
          backoff_units: retry.backoffUnits,
          budget_units: retry.budgetUnits,
          idempotency_key: retry.idempotencyKey,
        }
      : null,
    compensation: checkpoint.compensation.map((step) => ({
      capability_id: step.capabilityId,
      authorization_digest: step.authorizationDigest,
      order: step.order,
    })),
    authentication_tag: checkpoint.authenticationTag,
  };
}

// Malformed input (a missing field, a wrong type) is an error value or a safe answer, never a throw.
export const validateCheckpoint = totalResult(validateCheckpointUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
