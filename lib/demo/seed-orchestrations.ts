import type { DbOrTx } from '../db/client';
import { durableCheckpoint } from '../db/schema/keel';
import {
  GOVERNING_SPEC,
  sealCheckpoint,
  toCheckpointJson,
  type DurableCheckpoint,
  type WaitKind,
} from '../domain/checkpoint';
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

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Each flow's completed nodes, the wait it sits in (deadline relative to seeding; one already
 * passed) and its undo steps in declared order, so the orchestration page has each case to show.
 */
const FLOWS: {
  flow: string;
  completed: string[];
  wait: { kind: WaitKind; inMs: number } | null;
  compensation: string[];
}[] = [
  {
    flow: 'payout-approval',
    completed: ['start', 'validate', 'screen'],
    wait: { kind: 'human_approval', inMs: 8 * HOUR },
    compensation: ['payout.release-hold', 'payout.reverse-transfer', 'payout.notify-reversal'],
  },
  {
    flow: 'merchant-onboarding',
    completed: ['start', 'collect'],
    wait: null,
    compensation: ['onboarding.revoke-credentials', 'onboarding.close-account'],
  },
  {
    flow: 'refund-review',
    completed: ['start', 'validate'],
    wait: { kind: 'human_approval', inMs: 2 * HOUR },
    compensation: ['refund.void-credit'],
  },
  {
    flow: 'ledger-close',
    completed: ['start', 'freeze', 'reconcile'],
    wait: { kind: 'schedule', inMs: -30 * MINUTE },
    compensation: ['ledger.reopen-period', 'ledger.unfreeze'],
  },
  {
    flow: 'dispute-intake',
    completed: ['start', 'validate', 'approve'],
    wait: { kind: 'event', inMs: 24 * HOUR },
    compensation: ['dispute.withdraw-case'],
  },
  { flow: 'kyc-refresh', completed: ['start'], wait: null, compensation: [] },
];

/** A few durable orchestrations with sealed checkpoints: live leases and lapsed ones. */
export async function seedOrchestrations(
  db: DbOrTx,
  random: SeededRandom,
  nowMs: number,
  key: Buffer,
): Promise<number> {
  const rows = FLOWS.map(({ flow, completed, wait, compensation }, index) => {
    const expired = index % 2 === 1;
    const ownerId = `orchestrator-${(index % 3) + 1}`;
    const snapshots = {
      proposalDigest: random.hex(32),
      manifestDigest: random.hex(32),
      registryDigest: random.hex(32),
      policyDigest: random.hex(32),
      authorizationDigest: random.hex(32),
    };
    const checkpoint: DurableCheckpoint = {
      governingSpec: GOVERNING_SPEC,
      executionId: `orch-${flow}-${String(index + 1).padStart(3, '0')}`,
      snapshots,
      lease: {
        ownerId,
        fencingToken: random.int(1, 40),
        expiresAt: expired ? nowMs - random.int(60_000, 6 * 3_600_000) : nowMs + random.int(60_000, 600_000),
      },
      completedNodeIds: [...completed],
      wait: wait
        ? { kind: wait.kind, ownerId, deadline: nowMs + wait.inMs, cancellationId: `cancel-${flow}-${index}` }
        : null,
      retry: { retryable: true, maxAttempts: 5, backoffUnits: 2, budgetUnits: 10, idempotencyKey: `idem-${flow}` },
      // Bound to the authorization snapshot, as a compensation plan requires of every step.
      compensation: compensation.map((capabilityId, order) => ({
        capabilityId,
        authorizationDigest: snapshots.authorizationDigest,
        order: order + 1,
      })),
      authenticationTag: '',
    };
    const sealed = sealCheckpoint(checkpoint, key);
    if (!sealed.ok) throw new Error(`demo checkpoint: ${sealed.error.reason}`);
    return checkpointRow(sealed.value);
  });
  await db.insert(durableCheckpoint).values(rows);
  return rows.length;
}
