import type { DbOrTx } from '../db/client';
import { durableCheckpoint } from '../db/schema/keel';
import { GOVERNING_SPEC, sealCheckpoint, toCheckpointJson, type DurableCheckpoint } from '../domain/checkpoint';
import type { SeededRandom } from './random';

/** A sealed checkpoint's row: the JSON, and its lease lifted into columns for listing. */
export function checkpointRow(checkpoint: DurableCheckpoint) {
  return {
    executionId: checkpoint.executionId,
    checkpoint: toCheckpointJson(checkpoint),
    authenticationTag: checkpoint.authenticationTag,
    leaseOwner: checkpoint.lease.ownerId,
    fencingToken: checkpoint.lease.fencingToken,
    leaseExpiresAtMs: checkpoint.lease.expiresAt,
  };
}

/** A few durable orchestrations with sealed checkpoints: live leases and lapsed ones. */
export async function seedOrchestrations(db: DbOrTx, random: SeededRandom, nowMs: number, key: Buffer): Promise<number> {
  const flows = ['payout-approval', 'merchant-onboarding', 'refund-review', 'ledger-close', 'dispute-intake', 'kyc-refresh'];
  const rows = flows.map((flow, index) => {
    const expired = index % 2 === 1;
    const checkpoint: DurableCheckpoint = {
      governingSpec: GOVERNING_SPEC,
      executionId: `orch-${flow}-${String(index + 1).padStart(3, '0')}`,
      snapshots: {
        proposalDigest: random.hex(32),
        manifestDigest: random.hex(32),
        registryDigest: random.hex(32),
        policyDigest: random.hex(32),
        authorizationDigest: random.hex(32),
      },
      lease: {
        ownerId: `orchestrator-${(index % 3) + 1}`,
        fencingToken: random.int(1, 40),
        expiresAt: expired ? nowMs - random.int(60_000, 6 * 3_600_000) : nowMs + random.int(60_000, 600_000),
      },
      completedNodeIds: ['start', 'validate', ...(index % 3 === 0 ? ['approve'] : [])],
      wait: index % 2 === 0 ? { kind: 'human_approval', ownerId: `orchestrator-${(index % 3) + 1}`, deadline: nowMs + 3_600_000, cancellationId: `cancel-${index}` } : null,
      retry: { retryable: true, maxAttempts: 5, backoffUnits: 2, budgetUnits: 10, idempotencyKey: `idem-${flow}` },
      compensation: [],
      authenticationTag: '',
    };
    const sealed = sealCheckpoint(checkpoint, key);
    if (!sealed.ok) throw new Error(`demo checkpoint: ${sealed.error.reason}`);
    return checkpointRow(sealed.value);
  });
  await db.insert(durableCheckpoint).values(rows);
  return rows.length;
}
