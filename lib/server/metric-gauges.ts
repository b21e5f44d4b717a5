import 'server-only';
import { Counter, Gauge, type Registry } from 'prom-client';
import { BATCH_STATUSES } from '../domain/batch-status';
import { QUEUE_STATES } from '../domain/queue-state';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';
import type { AlertGauges } from '../queries/alert-gauges';
import type { LastSample } from '../queries/last-sample';
import { DEAD_LETTER_REASON_LABELS, METRICS } from '../workers/metric-sampler';
import type { ReplicaState } from './read-replica';

/**
 * The gauges of a scrape, computed from the database (DESIGN.md 7, docs/alerts.md). A
 * series whose value is unknown is absent, never 0: prom-client prints an unlabelled gauge
 * that was never set as 0, so such a gauge is registered only when it has a value.
 */

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
export function registerSampledGauges(registry: Registry, sample: LastSample): void {
  gauge(
    registry,
    'keel_metric_sample_age_seconds',
    'Age of the metric sampler figures this scrape reports (+Inf when there is none): it grows when no sample can be taken.',
    sample.sampledAt === null
      ? Number.POSITIVE_INFINITY
      : Math.max(0, sample.nowMs - sample.sampledAt.getTime()) / 1000,
  );
  if (sample.sampledAt === null) return;
  const rows = new Map(sample.rows.map((r) => [`${r.metric}\u0000${r.label}`, r.value]));
  const figure = (metric: string, label = '') => rows.get(`${metric}\u0000${label}`);

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
    'KEEL_DEAD_LETTER_ALERT_THRESHOLD: dead letters of one reason within the window that make a dead_letters.rising webhook and the KeelDeadLettersGrowing alert.',
    settings.deadLetterThreshold,
  );
}

export function registerReplicaGauges(registry: Registry, replica: ReplicaState): void {
  gauge(
    registry,
    'keel_read_replica_usable',
    'Whether list reads go to the read replica (1) or, it being unreachable, not streaming or too far behind, to the primary (0).',
    replica.usable ? 1 : 0,
  );
  gauge(
    registry,
    'keel_read_replica_lag_seconds',
    'How far the read replica is behind the primary, in seconds (absent when unknown).',
    replica.lagMs === null ? null : replica.lagMs / 1000,
  );
}
