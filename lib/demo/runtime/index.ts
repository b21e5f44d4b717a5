import type { Settings } from '../../config/settings';
import type { DbOrTx } from '../../db/client';
import type { RunningWorker, WorkerLog } from '../../workers/worker-loop';
import { settlementWorkersDriver } from './settlement-workers';

export interface DemoRuntimeContext {
  db: DbOrTx;
  settings: Settings;
  log: WorkerLog;
}

/**
 * One simulated part of the systems Keel watches. A driver acts only through Keel's
 * ports, as the real runtime would through its own stores, so the demo exercises the
 * same rules (leases, compare-and-swap, the one-place trigger) the real thing meets.
 */
export interface DemoDriver {
  name: string;
  start(context: DemoRuntimeContext): RunningWorker;
}

/**
 * The drivers the demo runtime runs (DESIGN.md 8). Extension point: the batch-execution
 * driver (executions advance, reserve retries, owners go silent) and the orchestration
 * driver (checkpoints saved under leases) are added here once the fault-state, recovery
 * and checkpoint ports they drive exist.
 */
export const DEMO_DRIVERS: readonly DemoDriver[] = [settlementWorkersDriver()];

export interface DemoRuntime {
  stop(): Promise<void>;
}

/** Starts every driver; `stop` stops them all and waits for their in-flight steps. */
export function startDemoRuntime(options: DemoRuntimeContext & { drivers?: readonly DemoDriver[] }): DemoRuntime {
  const { drivers = DEMO_DRIVERS, ...context } = options;
  const running = drivers.map((driver) => ({ name: driver.name, worker: driver.start(context) }));
  context.log('info', 'demo runtime started', { drivers: running.map((r) => r.name).join(',') });
  let stopping: Promise<void> | null = null;
  return {
    stop() {
      stopping ??= Promise.all(running.map((r) => r.worker.stop())).then(() => {
        context.log('info', 'demo runtime stopped');
      });
      return stopping;
    },
  };
}
