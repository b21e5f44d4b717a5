import { randomBytes } from 'node:crypto';
import { postgresSettlementStore } from '../../simulator/adapters/settlement-store';
import {
  failureDetailSha256Hex,
  type FailureCode,
  type RetryPolicy,
  type SettlementAttemptClaim,
  type SettlementOutcome,
  type SkipReason,
} from '../../domain/settlement';
import type { SettlementOutcomeStore } from '../../simulator/ports/settlement-store';
import { startWorkerLoop, type RunningWorker, type WorkerLog } from '../../workers/worker-loop';
import type { DemoDriver } from './driver';

export interface SettlementDemoOptions {
  workers: number;
  /** New finalized receipts per second. */
  enqueuePerSecond: number;
  claimBatch: number;
  pollMs: number;
  leaseMs: number;
  /** Shorter than the runtime's default, so retries visibly come round within a minute. */
  policy: RetryPolicy;
  /** Share of claims a worker "crashes" on: never recorded, so the lease runs out and another worker takes over. */
  abandonShare: number;
  /** Simulated hook latency per receipt, ms. */
  hookLatencyMs: [number, number];
  /**
   * Now and then the ledger's RPC endpoint goes down for a while: most attempts fail
   * with rpc, retries run out and dead letters rise (an incident the alerting rules and
   * the dead-letter webhook see), until the demo's support desk replays them.
   */
  outage: { firstAfterMs: number; everyMs: number; lastsMs: number; failShare: number };
}

export const DEFAULT_SETTLEMENT_DEMO: SettlementDemoOptions = {
  workers: 3,
  enqueuePerSecond: 4,
  claimBatch: 16,
  pollMs: 1_000,
  leaseMs: 30_000,
  policy: { maxRetries: 5, initialBackoffMs: 1_000, backoffMultiplier: 2, backoffCapMs: 30_000 },
  abandonShare: 0.01,
  hookLatencyMs: [2, 25],
  outage: { firstAfterMs: 12 * 60_000, everyMs: 30 * 60_000, lastsMs: 90_000, failShare: 0.85 },
};

/** Whether the simulated RPC outage is on at `nowMs`, for a runtime started at `startedAtMs`. */
export function inOutage(outage: SettlementDemoOptions['outage'], startedAtMs: number, nowMs: number): boolean {
  const since = nowMs - startedAtMs - outage.firstAfterMs;
  return since >= 0 && since % outage.everyMs < outage.lastsMs;
}

const SKIPS: SkipReason[] = ['denied', 'no_economic_intent', 'zero_charge'];
const PERMANENT_CODES: FailureCode[] = [
  'invalid_receipt_signature',
  'invalid_action_hash',
  'malformed_financial_metadata',
  'untrusted_receipt_signer',
  'verification',
  'signature',
];

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const between = ([min, max]: [number, number]) => min + Math.floor(Math.random() * (max - min + 1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * What the settlement hook answered, in a realistic mix: mostly accepted, some skipped,
 * some transient rpc/backend failures (less likely on a retry, so most recover and a
 * few exhaust their retries), and a few permanent failures that dead-letter at once.
 */
export function demoOutcome(attempts: number, roll = Math.random()): SettlementOutcome {
  const failure = (code: FailureCode) =>
    failureDetailSha256Hex(`${code}: demo failure ${randomBytes(4).toString('hex')}`);
  if (attempts > 0) {
    if (roll < 0.3) {
      const code = pick<FailureCode>(['rpc', 'backend']);
      return { kind: 'Retryable', code, detailSha256: failure(code) };
    }
    return { kind: 'Accepted' };
  }
  if (roll < 0.8) return { kind: 'Accepted' };
  if (roll < 0.88) return { kind: 'Skipped', reason: pick(SKIPS) };
  if (roll < 0.975) {
    const code = pick<FailureCode>(['rpc', 'rpc', 'backend']);
    return { kind: 'Retryable', code, detailSha256: failure(code) };
  }
  if (roll < 0.98)
    return { kind: 'Retryable', code: 'invalid_observation', detailSha256: failure('invalid_observation') };
  const code = pick(PERMANENT_CODES);
  return { kind: 'Permanent', code, detailSha256: failure(code) };
}

interface Tally {
  outageFailures: number;
  enqueued: number;
  finished: number;
  retried: number;
  deadLettered: number;
  abandoned: number;
  conflicts: number;
}

/**
 * Runs the hook for each claim of a batch, then records the batch's outcomes in one
 * statement (the store's batch form, as a runtime's workers do); abandoned claims are
 * left to run out their lease.
 */
async function settleBatch(
  store: SettlementOutcomeStore,
  claims: SettlementAttemptClaim[],
  options: SettlementDemoOptions,
  tally: Tally,
  log: WorkerLog,
  startedAtMs: number,
) {
  const items = [];
  const outage = inOutage(options.outage, startedAtMs, Date.now());
  for (const claim of claims) {
    if (Math.random() < options.abandonShare) {
      tally.abandoned += 1;
      continue;
    }
    await sleep(between(options.hookLatencyMs));
    if (outage && Math.random() < options.outage.failShare) {
      tally.outageFailures += 1;
      items.push({
        claim,
        outcome: {
          kind: 'Retryable' as const,
          code: 'rpc' as const,
          detailSha256: failureDetailSha256Hex(`rpc: ledger endpoint unreachable ${randomBytes(4).toString('hex')}`),
        },
      });
      continue;
    }
    items.push({ claim, outcome: demoOutcome(claim.attempts) });
  }
  if (items.length === 0) return;
  const recorded = await store.recordClaimedOutcomes(items, options.policy, Date.now());
  if (!recorded.ok) {
    log('warn', 'demo settlement batch refused', { error: recorded.error.kind });
    return;
  }
  for (const routed of recorded.value) {
    if (!routed.ok) {
      // A Conflict is the design working: the lease ran out and another worker took over.
      if (routed.error.kind === 'Conflict') tally.conflicts += 1;
      else log('warn', 'demo settlement outcome refused', { error: routed.error.kind });
    } else if (routed.value.kind === 'NoAction') tally.finished += 1;
    else if (routed.value.kind === 'RetryScheduled') tally.retried += 1;
    else tally.deadLettered += 1;
  }
}

function startWorker(
  store: SettlementOutcomeStore,
  workerId: string,
  options: SettlementDemoOptions,
  tally: Tally,
  log: WorkerLog,
  startedAtMs: number,
): RunningWorker {
  return startWorkerLoop({
    name: 'demo settlement worker',
    log,
    errorDelayMs: 5_000,
    async step() {
      const claimed = await store.claimDue(workerId, Date.now(), options.leaseMs, options.claimBatch);
      if (!claimed.ok) {
        log('warn', 'demo settlement claim refused', { error: claimed.error.kind });
        return options.pollMs;
      }
      await settleBatch(store, claimed.value, options, tally, log, startedAtMs);
      // A full batch means a backlog: go again at once, as a real worker drains its queue.
      return claimed.value.length === options.claimBatch ? 0 : options.pollMs;
    },
  });
}

function startEnqueuer(
  store: SettlementOutcomeStore,
  options: SettlementDemoOptions,
  tally: Tally,
  log: WorkerLog,
): RunningWorker {
  const tickMs = 250;
  let owed = 0;
  return startWorkerLoop({
    name: 'demo settlement enqueuer',
    log,
    errorDelayMs: 5_000,
    async step() {
      owed += (options.enqueuePerSecond * tickMs) / 1_000;
      for (; owed >= 1; owed -= 1) {
        const now = Date.now();
        const receiptId = `rcpt_${randomBytes(10).toString('hex')}`;
        const queued = await store.enqueue({ receiptId, finalizedAt: now - between([50, 5_000]), nowMs: now });
        if (queued.ok) tally.enqueued += 1;
        else log('warn', 'demo receipt not queued', { error: queued.error.kind });
      }
      return tickMs;
    },
  });
}

/**
 * The settlement side of the demo: receipts are finalized at a steady rate and a few
 * workers claim due ones and record outcomes, all through the SettlementOutcomeStore.
 */
export function settlementWorkersDriver(overrides: Partial<SettlementDemoOptions> = {}): DemoDriver {
  const options = { ...DEFAULT_SETTLEMENT_DEMO, ...overrides };
  return {
    name: 'settlement',
    start({ db, log }) {
      const store = postgresSettlementStore(db);
      const startedAtMs = Date.now();
      const tally: Tally = {
        outageFailures: 0,
        enqueued: 0,
        finished: 0,
        retried: 0,
        deadLettered: 0,
        abandoned: 0,
        conflicts: 0,
      };
      // Worker ids are unique per process, so two demo runtimes never pose as one worker.
      const instance = randomBytes(3).toString('hex');
      const loops = [
        startEnqueuer(store, options, tally, log),
        ...Array.from({ length: options.workers }, (_, i) =>
          startWorker(store, `demo-settle-${instance}-${i + 1}`, options, tally, log, startedAtMs),
        ),
      ];
      return {
        async stop() {
          await Promise.all(loops.map((loop) => loop.stop()));
          log('info', 'demo settlement workers stopped', { ...tally });
        },
      };
    },
  };
}
