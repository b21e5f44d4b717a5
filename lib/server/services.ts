import 'server-only';
import { postgresSettlementTransactions } from '../adapters/settlement-replay';
import { postgresTakeoverUnitOfWork } from '../adapters/takeover-unit-of-work';
import { systemProposerClock } from '../adapters/proposer-clock';
import type { SettlementTransactions } from '../ports/settlement-replay';
import type { RecoveryServiceDeps } from '../services/recovery-common';
import { runtime } from './runtime';

// One clock per process: the proposer compares each server time with the last one this process saw.
const holder = globalThis as typeof globalThis & { __keelProposerClock?: ReturnType<typeof systemProposerClock> };

/** The composition root: services get their Postgres adapters and settings here. */
export function recoveryDeps(): RecoveryServiceDeps {
  const { db, settings, ownerToken } = runtime();
  if (!settings.checkpointKey) throw new Error('KEEL_CHECKPOINT_KEY is required');
  return {
    uow: postgresTakeoverUnitOfWork(db, { checkpointKey: settings.checkpointKey }),
    clock: (holder.__keelProposerClock ??= systemProposerClock()),
    settings: {
      staleThresholdMs: settings.staleThresholdMs,
      maxClockSkewMs: settings.maxClockSkewMs,
      proposalTtlMs: settings.proposalTtlMs,
      orchestrationLeaseMs: settings.orchestrationLeaseMs,
    },
    ownerToken,
  };
}

/** The settlement services' transactions (replay, discard, requeue, bulk replay) over the server's pool. */
export function settlementTransactions(): SettlementTransactions {
  return postgresSettlementTransactions(runtime().db);
}
