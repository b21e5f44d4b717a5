import { postgresBatchRuntime } from '../../adapters/batch-runtime';
import { startWorkerLoop } from '../../workers/worker-loop';
import { registerDemoDefinitions, type DemoDefinition } from './batch-plan';
import { BatchWorker } from './batch-worker';
import type { DemoDriver } from './index';

export interface BatchDemoOptions {
  workers: number;
  /** Between one runtime action and the next (a chunk, a retry, a status move). */
  tickMs: [number, number];
  /** Between the end of one execution and the launch of the next. */
  pauseMs: [number, number];
  chunksPerStep: [number, number];
  itemsPerChunk: [number, number];
  /** Chance that a chunk of a step with a fault policy hits a retryable fault. */
  faultShare: number;
  /** Chance that a retry fails again and reserves the next ordinal. */
  retryFailsShare: number;
  /** Share of executions that fail for good part-way (spent retries fail a few more). */
  failShare: number;
  /** Share of FAILED or STOPPED executions the runtime restarts as the next attempt. */
  restartShare: number;
  /** In every cycle of this many launches, one owner goes silent and one execution is left UNKNOWN. */
  fateCycle: number;
  /** How long a silenced owner's process takes to come back, with a new owner token. */
  silentRestartMs: number;
  classifierRevision: string;
}

/** About one launch every three seconds across the workers: lively, and light on a small machine. */
export const DEFAULT_BATCH_DEMO: BatchDemoOptions = {
  workers: 3,
  tickMs: [400, 800],
  pauseMs: [500, 2_500],
  chunksPerStep: [2, 4],
  itemsPerChunk: [100, 500],
  faultShare: 0.25,
  retryFailsShare: 0.25,
  failShare: 0.04,
  restartShare: 0.5,
  fateCycle: 40,
  silentRestartMs: 3_000,
  classifierRevision: 'classifier_v3',
};

export interface BatchTally {
  launched: number;
  restarted: number;
  completed: number;
  failed: number;
  stopped: number;
  unknown: number;
  silent: number;
  chunks: number;
  retriesReserved: number;
  retriesResolved: number;
  capacityExhausted: number;
  staleReservations: number;
  lost: number;
}

/**
 * The batch side of the demo: a few runtime workers launch executions of the demo job
 * definitions and drive them through the BatchRuntime and FaultStateStore ports, as the
 * real runtime drives its own rows. Stopping stops the executions in hand (STOPPED), as
 * a runtime shutting down cleanly would; only silent owners leave executions to go stale.
 */
export function batchExecutionsDriver(overrides: Partial<BatchDemoOptions> = {}): DemoDriver {
  const options = { ...DEFAULT_BATCH_DEMO, ...overrides };
  return {
    name: 'batch',
    start({ db, log }) {
      const runtime = postgresBatchRuntime(db);
      const tally: BatchTally = {
        launched: 0, restarted: 0, completed: 0, failed: 0, stopped: 0, unknown: 0, silent: 0,
        chunks: 0, retriesReserved: 0, retriesResolved: 0, capacityExhausted: 0, staleReservations: 0, lost: 0,
      };
      let registered: Promise<DemoDefinition[]> | null = null;
      // Registered once for all workers; a failed registration is tried again on the next launch.
      const definitions = async () => {
        registered ??= registerDemoDefinitions(runtime).catch(() => []);
        const found = await registered;
        if (found.length === 0) registered = null;
        return found;
      };
      const workers = Array.from({ length: options.workers }, () => new BatchWorker({ db, runtime, options, tally, log, definitions }));
      const loops = workers.map((worker) =>
        startWorkerLoop({ name: 'demo batch worker', log, errorDelayMs: 5_000, step: () => worker.tick() }),
      );
      return {
        async stop() {
          await Promise.all(loops.map((loop) => loop.stop()));
          await Promise.all(workers.map((worker) => worker.shutdown().catch(() => undefined)));
          log('info', 'demo batch executions stopped', { ...tally });
        },
      };
    },
  };
}
