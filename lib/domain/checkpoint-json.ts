import {
  invalidCheckpoint,
  validateCheckpoint,
  type CompensationStep,
  type DurableCheckpoint,
  type InvalidCheckpoint,
  type WaitKind,
} from './checkpoint-model';
import { err, type Result } from './result';

type JsonObject = Record<string, unknown>;

/** Reads untrusted JSON field by field, keeping the first problem instead of throwing. */
class ShapeReader {
  problem: string | null = null;

  private fail<T>(message: string, fallback: T): T {
    this.problem ??= message;
    return fallback;
  }

  // Unknown keys are refused: they would ride along without being covered by the tag.
  object(value: unknown, path: string, keys: readonly string[]): JsonObject {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return this.fail(`${path} is not an object`, {});
    }
    const extra = Object.keys(value).filter((key) => !keys.includes(key));
    if (extra.length > 0) return this.fail(`${path} has unknown fields: ${extra.join(', ')}`, {});
    return value as JsonObject;
  }

  nullableObject(value: unknown, path: string, keys: readonly string[]): JsonObject | null {
    return value === null ? null : this.object(value, path, keys);
  }

  string(from: JsonObject, key: string, path: string): string {
    const value = from[key];
    return typeof value === 'string' ? value : this.fail(`${path}.${key} is not a string`, '');
  }

  number(from: JsonObject, key: string, path: string): number {
    const value = from[key];
    return typeof value === 'number' ? value : this.fail(`${path}.${key} is not a number`, 0);
  }

  boolean(from: JsonObject, key: string, path: string): boolean {
    const value = from[key];
    return typeof value === 'boolean' ? value : this.fail(`${path}.${key} is not a boolean`, false);
  }

  array(from: JsonObject, key: string, path: string): unknown[] {
    const value = from[key];
    return Array.isArray(value) ? value : this.fail(`${path}.${key} is not an array`, []);
  }
}

const ROOT_KEYS = [
  'governing_spec',
  'execution_id',
  'snapshots',
  'lease',
  'completed_node_ids',
  'wait',
  'retry',
  'compensation',
  'authentication_tag',
] as const;
const SNAPSHOT_KEYS = [
  'proposal_digest',
  'manifest_digest',
  'registry_digest',
  'policy_digest',
  'authorization_digest',
] as const;
const RETRY_KEYS = ['retryable', 'max_attempts', 'backoff_units', 'budget_units', 'idempotency_key'];

function readCompensation(reader: ShapeReader, items: unknown[]): CompensationStep[] {
  return items.map((item, index) => {
    const path = `compensation[${index}]`;
    const step = reader.object(item, path, ['capability_id', 'authorization_digest', 'order']);
    return {
      capabilityId: reader.string(step, 'capability_id', path),
      authorizationDigest: reader.string(step, 'authorization_digest', path),
      order: reader.number(step, 'order', path),
    };
  });
}

function readCheckpoint(reader: ShapeReader, input: unknown): DurableCheckpoint {
  const root = reader.object(input, 'checkpoint', ROOT_KEYS);
  const snapshots = reader.object(root.snapshots, 'snapshots', SNAPSHOT_KEYS);
  const lease = reader.object(root.lease, 'lease', ['owner_id', 'fencing_token', 'expires_at']);
  const wait = reader.nullableObject(root.wait, 'wait', ['kind', 'owner_id', 'deadline', 'cancellation_id']);
  const retry = reader.nullableObject(root.retry, 'retry', RETRY_KEYS);
  return {
    governingSpec: reader.string(root, 'governing_spec', 'checkpoint'),
    executionId: reader.string(root, 'execution_id', 'checkpoint'),
    snapshots: {
      proposalDigest: reader.string(snapshots, 'proposal_digest', 'snapshots'),
      manifestDigest: reader.string(snapshots, 'manifest_digest', 'snapshots'),
      registryDigest: reader.string(snapshots, 'registry_digest', 'snapshots'),
      policyDigest: reader.string(snapshots, 'policy_digest', 'snapshots'),
      authorizationDigest: reader.string(snapshots, 'authorization_digest', 'snapshots'),
    },
    lease: {
      ownerId: reader.string(lease, 'owner_id', 'lease'),
      fencingToken: reader.number(lease, 'fencing_token', 'lease'),
      expiresAt: reader.number(lease, 'expires_at', 'lease'),
    },
    completedNodeIds: reader
      .array(root, 'completed_node_ids', 'checkpoint')
      .map((id, index) => reader.string({ id }, 'id', `completed_node_ids[${index}]`)),
    wait: wait && {
      // validateCheckpoint refuses a kind outside WAIT_KINDS.
      kind: reader.string(wait, 'kind', 'wait') as WaitKind,
      ownerId: reader.string(wait, 'owner_id', 'wait'),
      deadline: reader.number(wait, 'deadline', 'wait'),
      cancellationId: reader.string(wait, 'cancellation_id', 'wait'),
    },
    retry: retry && {
      retryable: reader.boolean(retry, 'retryable', 'retry'),
      maxAttempts: reader.number(retry, 'max_attempts', 'retry'),
      backoffUnits: reader.number(retry, 'backoff_units', 'retry'),
      budgetUnits: reader.number(retry, 'budget_units', 'retry'),
      idempotencyKey: reader.string(retry, 'idempotency_key', 'retry'),
    },
    compensation: readCompensation(reader, reader.array(root, 'compensation', 'checkpoint')),
    authenticationTag: reader.string(root, 'authentication_tag', 'checkpoint'),
  };
}

/**
 * Reads a stored snake_case checkpoint (a jsonb column, an import) back into the domain
 * type. A malformed or invalid one is InvalidCheckpoint; the tag is not checked here.
 */
export function parseCheckpointJson(input: unknown): Result<DurableCheckpoint, InvalidCheckpoint> {
  const reader = new ShapeReader();
  const checkpoint = readCheckpoint(reader, input);
  if (reader.problem !== null) return err(invalidCheckpoint(reader.problem));
  return validateCheckpoint(checkpoint);
}
