import { randomBytes } from 'node:crypto';
import { postgresCheckpointStore } from '../../adapters/checkpoint-store';
import type { DbOrTx } from '../../db/client';
import { acquireLease, GOVERNING_SPEC, type DurableCheckpoint } from '../../domain/checkpoint';
import { err, ok, type Result } from '../../domain/result';
import { startWorkerLoop, type WorkerLog } from '../../workers/worker-loop';
import type { DemoDriver } from './driver';

export interface OrchestrationDemoOptions {
  orchestrators: number;
  /** How many orchestrations one orchestrator holds at once. */
  maxOwned: number;
  /** Every this-many-th orchestration an orchestrator creates is dropped after `lapseAfterRenewals`. */
  lapseEvery: number;
  lapseAfterRenewals: number;
  createEveryMs: number;
  /** Capped at a third of the lease, so a live orchestration never expires between renewals. */
  renewEveryMs: number;
  tickMs: number;
}

export const DEFAULT_ORCHESTRATION_DEMO: OrchestrationDemoOptions = {
  orchestrators: 2,
  maxOwned: 2,
  lapseEvery: 2,
  lapseAfterRenewals: 2,
  createEveryMs: 20_000,
  renewEveryMs: 10_000,
  tickMs: 1_000,
};

/** Each flow's nodes in order; the `approve` node waits on a human before it completes. */
const FLOWS: Record<string, string[]> = {
  'payout-approval': ['start', 'validate', 'screen', 'approve', 'execute', 'notify'],
  'merchant-onboarding': ['start', 'collect', 'verify', 'approve', 'provision'],
  'refund-review': ['start', 'validate', 'approve', 'refund', 'notify'],
  'ledger-close': ['start', 'freeze', 'reconcile', 'approve', 'post', 'unfreeze'],
};

interface Tally {
  created: number;
  renewed: number;
  nodesCompleted: number;
  lapsed: number;
  lost: number;
  refused: number;
}

interface Owned {
  executionId: string;
  nodes: string[];
  fencingToken: number;
  renewals: number;
  renewAt: number;
  /** Dealt at creation: this one's orchestrator stops renewing it after a few renewals. */
  lapses: boolean;
}

const hex32 = () => randomBytes(32).toString('hex');
const HOUR = 3_600_000;

function newCheckpoint(executionId: string, ownerId: string, expiresAt: number, flow: string): DurableCheckpoint {
  const authorizationDigest = hex32();
  return {
    governingSpec: GOVERNING_SPEC,
    executionId,
    snapshots: {
      proposalDigest: hex32(),
      manifestDigest: hex32(),
      registryDigest: hex32(),
      policyDigest: hex32(),
      authorizationDigest,
    },
    lease: { ownerId, fencingToken: 1, expiresAt },
    completedNodeIds: ['start'],
    wait: null,
    retry: { retryable: true, maxAttempts: 5, backoffUnits: 2, budgetUnits: 10, idempotencyKey: `idem-${executionId}` },
    compensation: [{ capabilityId: `${flow}.undo`, authorizationDigest, order: 1 }],
    authenticationTag: '',
  };
}

/**
 * The next node completes, unless it is waiting on a human: reaching `approve` opens a
 * human-approval wait, and the following renewal completes the node and clears it.
 */
function progressed(
  checkpoint: DurableCheckpoint,
  nodes: string[],
  ownerId: string,
  nowMs: number,
): { checkpoint: DurableCheckpoint; completed: boolean } {
  const next = nodes[checkpoint.completedNodeIds.length];
  if (next === undefined) return { checkpoint, completed: false };
  if (next === 'approve' && checkpoint.wait === null) {
    const wait = {
      kind: 'human_approval' as const,
      ownerId,
      deadline: nowMs + HOUR,
      cancellationId: `cancel-${randomBytes(4).toString('hex')}`,
    };
    return { checkpoint: { ...checkpoint, wait }, completed: false };
  }
  return {
    checkpoint: { ...checkpoint, completedNodeIds: [...checkpoint.completedNodeIds, next], wait: null },
    completed: true,
  };
}

type RenewOutcome = { kind: 'renewed'; fencingToken: number; completed: boolean } | { kind: 'lost' };

/**
 * Renews one lease as an orchestrator must: read the row under lock, confirm it still
 * holds that lease, move to a strictly newer token and later expiry, and re-seal and
 * save in the same transaction.
 */
async function renew(
  db: DbOrTx,
  key: Buffer,
  ownerId: string,
  owned: Owned,
  leaseMs: number,
): Promise<Result<RenewOutcome, string>> {
  return db.transaction(async (tx) => {
    const store = postgresCheckpointStore(tx, key);
    const loaded = await store.load(owned.executionId, { forUpdate: true });
    if (!loaded.ok) return err(loaded.error.kind);
    if (!loaded.value) return ok({ kind: 'lost' });
    const { checkpoint: current, serverTimeMs: now } = loaded.value;
    // Taken over: the successor's lease wins and this orchestrator lets go.
    if (current.lease.ownerId !== ownerId || current.lease.fencingToken !== owned.fencingToken)
      return ok({ kind: 'lost' });
    const step = progressed(current, owned.nodes, ownerId, now);
    const leased = acquireLease(
      step.checkpoint,
      ownerId,
      current.lease.fencingToken + 1,
      Math.max(now + leaseMs, current.lease.expiresAt + 1),
    );
    if (!leased.ok) return err(leased.error.kind);
    const saved = await store.save(leased.value);
    if (!saved.ok) return err(saved.error.kind);
    return ok({ kind: 'renewed', fencingToken: saved.value.lease.fencingToken, completed: step.completed });
  });
}

function startOrchestrator(
  db: DbOrTx,
  key: Buffer,
  ownerId: string,
  leaseMs: number,
  options: OrchestrationDemoOptions,
  tally: Tally,
  log: WorkerLog,
) {
  const owned: Owned[] = [];
  const renewEveryMs = Math.max(200, Math.min(options.renewEveryMs, Math.floor(leaseMs / 3)));
  let created = 0;
  let createAt = Date.now();

  async function create(now: number) {
    const flow = Object.keys(FLOWS)[created % Object.keys(FLOWS).length]!;
    const executionId = `orch-${flow}-${randomBytes(4).toString('hex')}`;
    created += 1;
    const saved = await postgresCheckpointStore(db, key).save(newCheckpoint(executionId, ownerId, now + leaseMs, flow));
    if (!saved.ok) {
      tally.refused += 1;
      return log('warn', 'demo orchestration not created', { error: saved.error.kind });
    }
    tally.created += 1;
    owned.push({
      executionId,
      nodes: FLOWS[flow]!,
      fencingToken: 1,
      renewals: 0,
      renewAt: now + renewEveryMs,
      lapses: created % options.lapseEvery === 0,
    });
  }

  return startWorkerLoop({
    name: 'demo orchestrator',
    log,
    errorDelayMs: 5_000,
    async step() {
      const now = Date.now();
      for (const orchestration of [...owned]) {
        if (orchestration.renewAt > now) continue;
        if (orchestration.lapses && orchestration.renewals >= options.lapseAfterRenewals) {
          // It stops renewing: once the lease runs out it is a takeover candidate.
          owned.splice(owned.indexOf(orchestration), 1);
          tally.lapsed += 1;
          continue;
        }
        const renewed = await renew(db, key, ownerId, orchestration, leaseMs);
        if (!renewed.ok) {
          tally.refused += 1;
          log('warn', 'demo orchestration lease not renewed', { error: renewed.error });
          orchestration.renewAt = now + renewEveryMs;
        } else if (renewed.value.kind === 'lost') {
          owned.splice(owned.indexOf(orchestration), 1);
          tally.lost += 1;
        } else {
          Object.assign(orchestration, {
            fencingToken: renewed.value.fencingToken,
            renewals: orchestration.renewals + 1,
            renewAt: now + renewEveryMs,
          });
          tally.renewed += 1;
          if (renewed.value.completed) tally.nodesCompleted += 1;
        }
      }
      if (owned.length < options.maxOwned && now >= createAt) {
        await create(now);
        createAt = now + options.createEveryMs;
      }
      return options.tickMs;
    },
  });
}

/**
 * The orchestration side of the demo: orchestrators create durable orchestrations with
 * sealed checkpoints, renew their leases and complete nodes through the CheckpointStore,
 * and some orchestrations are let go so their leases lapse and the Recovery page has
 * takeover candidates. Finished orchestrations stay held (renewed) while their
 * orchestrator lives, and each orchestrator creates only a few, so rows stay bounded.
 */
export function orchestrationsDriver(overrides: Partial<OrchestrationDemoOptions> = {}): DemoDriver {
  const options = { ...DEFAULT_ORCHESTRATION_DEMO, ...overrides };
  return {
    name: 'orchestration',
    start({ db, settings, log }) {
      const key = settings.checkpointKey;
      if (!key) {
        log('warn', 'demo orchestrations need KEEL_CHECKPOINT_KEY to seal checkpoints; not started');
        return { stop: async () => {} };
      }
      const tally: Tally = { created: 0, renewed: 0, nodesCompleted: 0, lapsed: 0, lost: 0, refused: 0 };
      // Owner ids are unique per process, so two demo runtimes never pose as one orchestrator.
      const instance = randomBytes(3).toString('hex');
      const loops = Array.from({ length: options.orchestrators }, (_, i) =>
        startOrchestrator(
          db,
          key,
          `demo-orchestrator-${instance}-${i + 1}`,
          settings.orchestrationLeaseMs,
          options,
          tally,
          log,
        ),
      );
      return {
        async stop() {
          await Promise.all(loops.map((loop) => loop.stop()));
          log('info', 'demo orchestrations stopped', { ...tally });
        },
      };
    },
  };
}
