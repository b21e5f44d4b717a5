// What every demo driver is, apart from the index that lists them so a driver imports it without a cycle.
import type { Settings } from '../../config/settings';
import type { DbOrTx } from '../../db/client';
import type { RunningWorker, WorkerLog } from '../../workers/worker-loop';

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
