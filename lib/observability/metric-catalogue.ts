import 'server-only';
import { Counter, Gauge, type Registry } from 'prom-client';
import { BATCH_STATUSES } from '../domain/batch-status';
import { QUEUE_STATES } from '../domain/queue-state';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';

/**
 * The catalogue of Keel's metrics (docs/design.md#metrics, docs/alerts.md): the series the
 * metric sampler writes to `keel.metric_sample`, and the name, help and labels of every gauge
 * a scrape of /api/metrics reports (the process's counters and histograms are in metrics.ts).
 * A series whose value is unknown is absent, never 0: prom-client prints an unlabelled gauge
 * that was never set as 0, so such a gauge is registered only when it has a value.
 */

/**
 * The series `keel.metric_sample` holds for the overview charts. Labels are queue
 * states and reason codes only: never a receipt id, retry key or token.
 */
export const METRICS = {
  /** label due | leased | retry_scheduled: the same states the overview counts. */
  queueDepth: 'settlement_queue_depth',
  /** Attempts queued after at least one retryable failure. */
  retrying: 'settlement_retrying',
  /** Retries scheduled during the sample interval. */
  retriesScheduled: 'settlement_retries',
  /** label = reason code. */
  deadLetters: 'settlement_dead_letters',
  deadLettersTotal: 'settlement_dead_letters_total',
  /**
   * label = reason code (every code, and `other`): settlements dead-lettered ever, counted
   * from their history events, so it never drops when dead letters are replayed or discarded.
   */
  deadLettered: 'settlement_dead_lettered',
  staleExecutions: 'batch_stale_executions',
  /** label = execution status, every status (zero or not): the overview's and /api/metrics' counts. */
  executions: 'batch_executions',
  pendingProposals: 'recovery_pending_proposals',
  /** Retained fault-state envelopes that fail validation (the Retry keys page's CORRUPT rows). */
  corruptEnvelopes: 'fault_state_corrupt_envelopes',
  /** Seconds this sample took to take (lib/workers/metric-sampler.ts). */
  sampleSeconds: 'metric_sample_seconds',
  /** Seconds until the next sample: 15, or longer so that sampling takes at most a tenth of the time. */
  sampleIntervalSeconds: 'metric_sample_interval_seconds',
} as const;

/** The reason labels of the dead-lettered counter: each failure code, and `other` for a code outside it. */
export const DEAD_LETTER_REASON_LABELS = [...FAILURE_CODES, 'other'] as const;

/** The sampler's figures a scrape reports (lib/queries/last-sample.ts reads them). */
export interface SampledFigures {
  /** The server's clock in epoch ms. */
  nowMs: number;
  sampledAt: Date | null;
  rows: { metric: string; label: string; value: number }[];
}

/** The figures alerting reads at scrape time, by the database's clock (lib/queries/alert-gauges.ts). */
export interface AlertGauges {
  /** Seconds from now to the earliest approval deadline of a PENDING proposal; null when none waits. */
  nextProposalDeadlineSeconds: number | null;
  /** How long the oldest claimable settlement has been due, in seconds; 0 when nothing is due. */
  oldestDueSettlementSeconds: number;
  /** PENDING deliveries to enabled webhook endpoints whose last attempt failed: each waits for its next one. */
  webhookDeliveriesRetrying: number;
  /** Deliveries given up after their last attempt (FAILED); a retry from the Webhooks page takes one back out. */
  webhookDeliveriesFailed: number;
  /** RUNNING bulk jobs no worker holds a live lease on: not taken yet, or their worker stopped renewing. */
  bulkJobsStalled: number;
  /** Durable orchestrations whose lease has lapsed: takeover candidates. */
  orchestrationLeasesLapsed: number;
}

/** What a scrape reports of the read replica (lib/server/read-replica.ts's state). */
export interface ReplicaFigures {
  usable: boolean;
  lagMs: number | null;
}

/** A dead letter's reason as a label: its code when the vocabulary knows it, else "other". */
export const deadLetterReasonLabel = (reason: string): string =>
  (FAILURE_CODES as readonly string[]).includes(reason) ? reason : 'other';

function gauge(registry: Registry, name: string, help: string, value: number | null): void {
  if (value === null) return;
  new Gauge({ name, help, registers: [registry] }).set(value);
}

/**
 * The metric sampler's figures (lib/workers/metric-sampler.ts). Without any sample they
 * are absent, and the sample age is +Inf; a series the sample lacks (one written before
 * the series existed) is absent too, so a counter never starts at 0 and jumps.
 */
export function registerSampledGauges(registry: Registry, sample: SampledFigures): void {
  gauge(
    registry,
    'keel_metric_sample_age_seconds',
    'Age of the metric sampler figures this scrape reports (+Inf when there is none): ' +
      'it grows when no sample can be taken.',
    sample.sampledAt === null
      ? Number.POSITIVE_INFINITY
      : Math.max(0, sample.nowMs - sample.sampledAt.getTime()) / 1000,
  );
  if (sample.sampledAt === null) return;
  const rows = new Map(sample.rows.map((r) => [`${r.metric}\u0000${r.label}`, r.value]));
  const figure = (metric: string, label = '') => rows.get(`${metric}\u0000${label}`);
  gauge(
    registry,
    'keel_metric_sample_duration_seconds',
    'How long the metric sampler took to take the figures this scrape reports.',
    figure(METRICS.sampleSeconds) ?? null,
  );
  gauge(
    registry,
    'keel_metric_sample_interval_seconds',
    'Seconds between metric samples: 15, stretched so that sampling takes at most a tenth of the time.',
    figure(METRICS.sampleIntervalSeconds) ?? null,
  );

  const queueDepth = new Gauge({
    name: 'keel_settlement_queue_depth',
    help: 'Settlement attempts by state: due (claimable now), leased, retry_scheduled (not yet visible).',
    labelNames: ['state'],
    registers: [registry],
  });
  for (const state of QUEUE_STATES) queueDepth.set({ state }, figure(METRICS.queueDepth, state) ?? 0);

  const deadLetters = new Gauge({
    name: 'keel_settlement_dead_letters',
    help: 'Dead-lettered settlements by reason code, as they stand (replayed and discarded ones are gone).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const row of sample.rows) {
    if (row.metric === METRICS.deadLetters) deadLetters.inc({ reason: deadLetterReasonLabel(row.label) }, row.value);
  }

  const deadLettered = new Counter({
    name: 'keel_settlement_dead_lettered_total',
    help: 'Settlements dead-lettered ever, by reason code, from their history: a replay or discard does not lower it.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of DEAD_LETTER_REASON_LABELS) {
    const value = figure(METRICS.deadLettered, reason);
    if (value !== undefined) deadLettered.inc({ reason }, value);
  }

  const executions = new Gauge({
    name: 'keel_batch_executions',
    help: 'Batch job executions by status.',
    labelNames: ['status'],
    registers: [registry],
  });
  for (const status of BATCH_STATUSES) executions.set({ status }, figure(METRICS.executions, status) ?? 0);

  gauge(
    registry,
    'keel_batch_stale_executions',
    'Active executions (STARTING, STARTED, STOPPING) with no update for longer than KEEL_STALE_THRESHOLD_MS.',
    figure(METRICS.staleExecutions) ?? 0,
  );
  gauge(
    registry,
    'keel_recovery_pending_proposals',
    'Recovery proposals waiting for an approver.',
    figure(METRICS.pendingProposals) ?? 0,
  );
  gauge(
    registry,
    'keel_fault_state_corrupt_envelopes',
    'Retained fault-state envelopes that fail validation (the CORRUPT rows of the Retry keys page).',
    figure(METRICS.corruptEnvelopes) ?? null,
  );
}

/** The figures read at scrape time for alerting (lib/queries/alert-gauges.ts). */
export function registerAlertGauges(registry: Registry, alerting: AlertGauges): void {
  gauge(
    registry,
    'keel_recovery_next_deadline_seconds',
    'Seconds until the earliest approval deadline of a pending recovery proposal (absent when none is pending).',
    alerting.nextProposalDeadlineSeconds,
  );
  gauge(
    registry,
    'keel_settlement_oldest_due_seconds',
    'How long the oldest claimable settlement attempt has been due, in seconds (0 when none is due).',
    alerting.oldestDueSettlementSeconds,
  );
  gauge(
    registry,
    'keel_webhook_deliveries_retrying',
    'Pending webhook deliveries to enabled endpoints whose last attempt failed, waiting for their next attempt.',
    alerting.webhookDeliveriesRetrying,
  );
  gauge(
    registry,
    'keel_webhook_deliveries_failed',
    'Webhook deliveries given up after their last attempt (FAILED); a retry from the Webhooks page lowers it.',
    alerting.webhookDeliveriesFailed,
  );
  gauge(
    registry,
    'keel_bulk_jobs_stalled',
    'RUNNING bulk jobs that no worker holds a live lease on (not taken yet, or their worker stopped renewing).',
    alerting.bulkJobsStalled,
  );
  gauge(
    registry,
    'keel_orchestration_leases_lapsed',
    'Durable orchestrations whose lease has lapsed (takeover candidates on the Recovery page).',
    alerting.orchestrationLeasesLapsed,
  );
}

/** The settings the alerting rules compare with, so a changed setting moves the rule too. */
export function registerAlertSettings(registry: Registry, settings: { deadLetterThreshold: number }): void {
  gauge(
    registry,
    'keel_dead_letter_alert_threshold',
    'KEEL_DEAD_LETTER_ALERT_THRESHOLD: dead letters of one reason within the window that make a dead_letters.rising ' +
      'webhook and the KeelDeadLettersGrowing alert.',
    settings.deadLetterThreshold,
  );
}

export function registerReplicaGauges(registry: Registry, replica: ReplicaFigures): void {
  gauge(
    registry,
    'keel_read_replica_usable',
    'Whether list reads go to the read replica (1) or, it being unreachable, not streaming or too far behind, ' +
      'to the primary (0).',
    replica.usable ? 1 : 0,
  );
  gauge(
    registry,
    'keel_read_replica_lag_seconds',
    'How far the read replica is behind the primary, in seconds (absent when unknown).',
    replica.lagMs === null ? null : replica.lagMs / 1000,
  );
}

/** How many HTTP processes' counters and histograms a scrape holds. */
export function registerProcessCount(registry: Registry, processes: number): void {
  gauge(
    registry,
    'keel_http_processes',
    'HTTP processes of this server whose counters and histograms this scrape holds (KEEL_HTTP_PROCESSES; ' +
      'fewer when one did not answer in time).',
    processes,
  );
}
