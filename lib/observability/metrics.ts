import 'server-only';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import { HTTP_PROCESS_MESSAGES as M, type CollectedMetrics, type HttpProcessMessage } from './http-process-messages';
import { logger } from './logger';
import { singleton } from './singletons';

/**
 * Prometheus metrics (docs/design.md#metrics). Label values come only from closed sets (action
 * names, outcomes, codes, route patterns, statuses, reason codes): a retry key, owner
 * token or receipt id is never a label, and anything that does not look like a member
 * of its set is reported as "other" so an id can never slip in.
 */

export type ActionOutcome = 'APPLIED' | 'REFUSED' | 'ERROR';

interface ProcessMetrics {
  registry: Registry;
  actionOutcomes: Counter<'action' | 'outcome' | 'code'>;
  actionDuration: Histogram<'action' | 'outcome'>;
  requestDuration: Histogram<'route' | 'method' | 'status'>;
  liveEventFailures: Counter<string>;
  listReads: Counter<'source'>;
}

const ACTION_NAME = /^[a-z][A-Za-z0-9_.-]{0,63}$/;
const CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

/** The process's counters and histograms, made once (module copies and reloads share them). */
export const processMetrics = (): ProcessMetrics => singleton('metrics', createProcessMetrics);

function createProcessMetrics(): ProcessMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'keel_' });
  return {
    registry,
    actionOutcomes: new Counter({
      name: 'keel_action_outcomes_total',
      help: 'Server actions by action, outcome (APPLIED, REFUSED, ERROR) and refusal code.',
      labelNames: ['action', 'outcome', 'code'],
      registers: [registry],
    }),
    actionDuration: new Histogram({
      name: 'keel_action_duration_seconds',
      help: 'Time to run a server action, from the request to its result.',
      labelNames: ['action', 'outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'keel_api_request_duration_seconds',
      help: 'Latency of read API requests by route pattern, method and status (streamed bodies: until the first byte).',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    listReads: new Counter({
      name: 'keel_list_reads_total',
      help:
        'List page and list API reads by where they were sent (replica or primary), ' +
        'and replica reads that could not connect and ran on the primary (replica_failover).',
      labelNames: ['source'],
      registers: [registry],
    }),
    liveEventFailures: new Counter({
      name: 'keel_live_events_failures_total',
      help: 'Times the live-update listener (LISTEN and the runtime poll) failed to start or lost its connection.',
      registers: [registry],
    }),
  };
}

export function recordActionOutcome(
  action: string,
  outcome: ActionOutcome,
  code: string | null,
  seconds: number,
): void {
  const metrics = processMetrics();
  const actionLabel = ACTION_NAME.test(action) ? action : 'other';
  const codeLabel = code === null ? '' : CODE.test(code) ? code : 'OTHER';
  metrics.actionOutcomes.inc({ action: actionLabel, outcome, code: codeLabel });
  metrics.actionDuration.observe({ action: actionLabel, outcome }, seconds);
}

/**
 * The route pattern of a request: each path segment that is the value of a dynamic
 * route parameter becomes `[name]`, so `/api/executions/42` is counted as
 * `/api/executions/[id]` and no id reaches a label.
 */
export function routePattern(pathname: string, params: Record<string, string | string[] | undefined>): string {
  const byValue = new Map<string, string>();
  for (const [name, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) byValue.set(v, name);
  }
  return pathname
    .split('/')
    .map((segment) => {
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // A malformed escape is no parameter value Next decoded; keep the raw segment.
      }
      const name = byValue.get(decoded);
      return name ? `[${name}]` : segment;
    })
    .join('/');
}

export function recordLiveEventFailure(): void {
  processMetrics().liveEventFailures.inc();
}

export function recordListRead(source: 'replica' | 'primary' | 'replica_failover'): void {
  processMetrics().listReads.inc({ source });
}

export function recordApiRequest(route: string, method: string, status: number, seconds: number): void {
  processMetrics().requestDuration.observe({ route, method, status: String(status) }, seconds);
}

/** How long a scrape waits for the other HTTP processes' counters before reporting its own alone. */
const AGGREGATE_TIMEOUT_MS = 5_000;

type AggregateAnswer = { metrics: CollectedMetrics[]; processes: number };

const ipc = () =>
  singleton('metrics-ipc', () => ({ answering: false, waiting: new Map<string, (answer: AggregateAnswer) => void>() }));

/** Whether this process is one of several HTTP processes under lib/cli/http-primary.ts. */
const underHttpPrimary = () => typeof process.send === 'function' && process.env.KEEL_HTTP_PROCESS_INDEX !== undefined;

/**
 * In each of several HTTP processes (instrumentation.ts): answers the parent's call for
 * this process's counters, and takes the parent's answer to this process's own call.
 */
export function answerMetricsCollection(): void {
  const state = ipc();
  if (!underHttpPrimary() || state.answering) return;
  state.answering = true;
  process.on('message', (message: HttpProcessMessage) => {
    if (message?.type === M.collect) {
      void processMetrics()
        .registry.getMetricsAsJSON()
        .then((metrics) =>
          process.send?.({ type: M.collected, collectId: message.collectId, metrics } satisfies HttpProcessMessage),
        );
    } else if (message?.type === M.aggregate) {
      state.waiting.get(message.requestId)?.({ metrics: message.metrics, processes: message.processes });
    }
  });
}

/**
 * The server's counters and histograms: this process's, or with several HTTP processes
 * every process's summed, so a scrape reads the same totals whichever process answers it.
 */
export async function serverCounters(): Promise<{ registry: Registry; processes: number }> {
  const own = { registry: processMetrics().registry, processes: 1 };
  const state = ipc();
  if (!underHttpPrimary() || !state.answering) return own;
  const requestId = randomUUID();
  const answer = await new Promise<AggregateAnswer | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), AGGREGATE_TIMEOUT_MS);
    state.waiting.set(requestId, (a) => {
      clearTimeout(timer);
      resolve(a);
    });
    process.send?.({ type: M.request, requestId } satisfies HttpProcessMessage);
  });
  state.waiting.delete(requestId);
  if (!answer || answer.processes === 0) {
    logger.warn({}, 'metrics: the other HTTP processes did not answer; this scrape holds this process only');
    return own;
  }
  return {
    registry: AggregatorRegistry.aggregate(answer.metrics as Parameters<typeof AggregatorRegistry.aggregate>[0]),
    processes: answer.processes,
  };
}
