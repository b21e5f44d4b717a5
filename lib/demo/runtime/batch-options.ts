// The batch demo's knobs and counters, apart from its driver so the worker reads them without an import cycle.

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
