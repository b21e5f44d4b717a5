import { postgresBatchRuntime } from '../../simulator/adapters/batch-runtime';
import { startWorkerLoop } from '../../workers/worker-loop';
import { registerDemoDefinitions, type DemoDefinition } from './batch-plan';
import { BatchWorker } from './batch-worker';
import { DEFAULT_BATCH_DEMO, type BatchDemoOptions, type BatchTally } from './batch-options';
import type { DemoDriver } from './driver';

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
        launched: 0,
        restarted: 0,
        completed: 0,
        failed: 0,
        stopped: 0,
        unknown: 0,
        silent: 0,
        chunks: 0,
        retriesReserved: 0,
        retriesResolved: 0,
        capacityExhausted: 0,
        staleReservations: 0,
        lost: 0,
      };
      let registered: Promise<DemoDefinition[]> | null = null;
      // Registered once for all workers; a failed registration is tried again on the next launch.
      const definitions = async () => {
        registered ??= registerDemoDefinitions(runtime).catch(() => []);
        const found = await registered;
        if (found.length === 0) registered = null;
        return found;
      };
      const workers = Array.from(
        { length: options.workers },
        () => new BatchWorker({ db, runtime, options, tally, log, definitions }),
      );
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
