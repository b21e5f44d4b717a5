/**
 * What the HTTP processes of one Keel server and their parent (lib/cli/http-primary.ts)
 * say to each other over Node's IPC channel: a scrape of /api/metrics asks the parent
 * for every process's counters, and the parent asks each process for its own.
 */
export const HTTP_PROCESS_MESSAGES = {
  /** process to parent: report every process's metrics to me. */
  request: 'keel:metrics-request',
  /** parent to every process: send me your metrics. */
  collect: 'keel:metrics-collect',
  /** process to parent: mine. */
  collected: 'keel:metrics-collected',
  /** parent to the asking process: everyone's that answered in time. */
  aggregate: 'keel:metrics-aggregate',
} as const;

/** One process's registry as `Registry.getMetricsAsJSON()` gives it. */
export type CollectedMetrics = unknown[];

export type HttpProcessMessage =
  | { type: typeof HTTP_PROCESS_MESSAGES.request; requestId: string }
  | { type: typeof HTTP_PROCESS_MESSAGES.collect; collectId: string }
  | { type: typeof HTTP_PROCESS_MESSAGES.collected; collectId: string; metrics: CollectedMetrics }
  | { type: typeof HTTP_PROCESS_MESSAGES.aggregate; requestId: string; metrics: CollectedMetrics[]; processes: number };
