import { describe, expect, it } from 'vitest';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { envelopeFor } from '../../lib/cli/load-scale-envelopes';
import { createDatabase } from '../../lib/db/client';
import type { Actor } from '../../lib/domain/actor';
import { DEFAULT_RETRY_POLICY, failureDetailSha256Hex, type FailureCode } from '../../lib/domain/settlement';
import { renderMetrics } from '../../lib/server/metrics-scrape';
import { replayDeadLetter } from '../../lib/services/dead-letter-actions';
import { freshDatabase } from '../support/database';
import { parsePrometheus, type Sample } from '../support/prometheus';

/**
 * The figures docs/alerts.yml reads, against real PostgreSQL: absent when unknown (never a
 * 0 that an alert would read as a value), a dead-lettered counter that replays do not
 * lower and every instance reports alike, and the scrape-time alerting figures.
 */

const { pool, db, newPool } = await freshDatabase();
const store = postgresSettlementStore(db);
const support: Actor = { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' };
const STALE_MS = 900_000;
// The metric sampler's advisory lock key (lib/workers/metric-sampler.ts).
const SAMPLER_LOCK_KEY = 0x6b65656c01;
let sequence = 0;

const scrape = async (database = db, settings: Parameters<typeof renderMetrics>[3] = null) =>
  parsePrometheus((await renderMetrics(database, STALE_MS, null, settings)).body);
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
const has = (samples: Sample[], name: string) => samples.some((s) => s.name === name);

/** The next scrape takes a sample of its own instead of reading the sampler's last one. */
const forgetSamples = () => pool.query('delete from keel.metric_sample');

/** A settlement dead-lettered the way a worker does it: claimed, then a permanent failure recorded. */
async function deadLetterThroughTheStore(receiptId: string, code: FailureCode, queued = false): Promise<void> {
  const nowMs = Date.now();
  if (!queued) {
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       updated_at_ms)
       values ($1, 41, 'pending_observation', 0, $2, 0, $2)`,
      [receiptId, nowMs - 1],
    );
  }
  const claim = await store.claimReceipt(receiptId, 'worker-1', nowMs, 30_000);
  if (!claim.ok || !claim.value) throw new Error(`could not claim ${receiptId}`);
  const route = await store.recordClaimedOutcome(
    claim.value,
    { kind: 'Permanent', code, detailSha256: failureDetailSha256Hex('x') },
    DEFAULT_RETRY_POLICY,
    nowMs + 1,
  );
  expect(route).toMatchObject({ ok: true, value: { kind: 'DeadLettered' } });
}

describe('alerting figures on /api/metrics', () => {
  it('leaves a series out when its value is unknown: no pending proposal, no replica lag, no sample', async () => {
    const empty = await scrape();
    // prom-client prints an unset unlabelled gauge as 0, which KeelProposalNearDeadline read as "expires now".
    expect(has(empty, 'keel_recovery_next_deadline_seconds')).toBe(false);
    expect(value(empty, 'keel_settlement_oldest_due_seconds')).toBe(0);
    const replica = parsePrometheus(
      (await renderMetrics(db, STALE_MS, { usable: false, reason: 'unchecked', lagMs: null, replayLsn: null })).body,
    );
    expect(value(replica, 'keel_read_replica_usable')).toBe(0);
    expect(has(replica, 'keel_read_replica_lag_seconds')).toBe(false);

    await pool.query(`
      insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_version,
      proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
      values ('batch', 'deadline-1', sha256('e'), '{}', 1, 'u1', 'operator', 'p',
      clock_timestamp() + interval '4 minutes', 'c1')`);
    const pending = value(await scrape(), 'keel_recovery_next_deadline_seconds');
    expect(pending).toBeGreaterThan(200);
    expect(pending).toBeLessThanOrEqual(240);
    await pool.query(
      `update keel.recovery_proposal set status = 'REJECTED', decided_at = clock_timestamp()
       where target_id = 'deadline-1'`,
    );
    expect(has(await scrape(), 'keel_recovery_next_deadline_seconds')).toBe(false);
  });

  it('counts dead-lettered settlements from history: a replay lowers the dead letters, never the counter', async () => {
    const receipts = ['dl-1', 'dl-2', 'dl-3'];
    for (const receipt of receipts) await deadLetterThroughTheStore(receipt, 'rpc');
    await deadLetterThroughTheStore('dl-4', 'signature');
    await forgetSamples();
    const first = await scrape();
    expect(value(first, 'keel_settlement_dead_letters', { reason: 'rpc' })).toBe(3);
    expect(value(first, 'keel_settlement_dead_lettered_total', { reason: 'rpc' })).toBe(3);
    expect(value(first, 'keel_settlement_dead_lettered_total', { reason: 'signature' })).toBe(1);
    // Every reason is there from the start, so a reason's first dead letters are an increase, not a new series.
    expect(value(first, 'keel_settlement_dead_lettered_total', { reason: 'backend' })).toBe(0);

    const deps = { unitOfWork: postgresSettlementUnitOfWork(db) };
    for (const receipt of ['dl-1', 'dl-2']) {
      const replayed = await replayDeadLetter(deps, support, {
        receiptId: receipt,
        note: 'rpc is back',
        operationId: `op-${(sequence += 1)}`,
      });
      expect(replayed.ok).toBe(true);
    }
    await forgetSamples();
    // Another instance (its own pool) scrapes first and takes the sample; both read the same figures.
    const other = await scrape(createDatabase(newPool(2)));
    const again = await scrape();
    for (const samples of [other, again]) {
      expect(value(samples, 'keel_settlement_dead_letters', { reason: 'rpc' })).toBe(1);
      expect(value(samples, 'keel_settlement_dead_lettered_total', { reason: 'rpc' })).toBe(3);
    }

    // A replayed settlement that fails again is counted again.
    await deadLetterThroughTheStore('dl-1', 'rpc', true);
    await forgetSamples();
    expect(value(await scrape(), 'keel_settlement_dead_lettered_total', { reason: 'rpc' })).toBe(4);
  });

  it('reports the age of the figures, and answers with the last ones when no sample can be taken', async () => {
    await forgetSamples();
    const sampled = await scrape();
    expect(value(sampled, 'keel_metric_sample_age_seconds')).toBeLessThan(5);
    // What the sample cost and the interval it set (KeelMetricsStale compares the age with it).
    expect(value(sampled, 'keel_metric_sample_duration_seconds')).toBeGreaterThan(0);
    expect(value(sampled, 'keel_metric_sample_interval_seconds')).toBe(15);

    const holder = await pool.connect();
    try {
      await holder.query('select pg_advisory_lock($1::bigint)', [SAMPLER_LOCK_KEY]);
      await forgetSamples();
      const none = await scrape();
      expect(value(none, 'keel_metric_sample_age_seconds')).toBe(Number.POSITIVE_INFINITY);
      expect(has(none, 'keel_settlement_queue_depth')).toBe(false);
      expect(has(none, 'keel_batch_stale_executions')).toBe(false);
      expect(has(none, 'keel_metric_sample_interval_seconds')).toBe(false);

      await pool.query(`insert into keel.metric_sample (sampled_at, metric, label, value)
        values (clock_timestamp() - interval '5 minutes', 'batch_stale_executions', '', 7)`);
      const old = await scrape();
      expect(value(old, 'keel_metric_sample_age_seconds')).toBeGreaterThanOrEqual(300);
      expect(value(old, 'keel_metric_sample_age_seconds')).toBeLessThan(330);
      expect(value(old, 'keel_batch_stale_executions')).toBe(7);
      // A sample written before the counter existed leaves it out rather than reporting 0.
      expect(has(old, 'keel_settlement_dead_lettered_total')).toBe(false);
    } finally {
      await holder.query('select pg_advisory_unlock($1::bigint)', [SAMPLER_LOCK_KEY]);
      holder.release();
    }
    expect(value(await scrape(), 'keel_metric_sample_age_seconds')).toBeLessThan(5);
  });

  it('reports failing webhooks, stalled bulk jobs, lapsed leases, bad envelopes, dead-letter threshold', async () => {
    await pool.query(
      `insert into keel.webhook_endpoint (name, origin, enabled)
       values ('ops', 'http://127.0.0.1:9', true), ('gone', 'http://127.0.0.1:9', false)`,
    );
    const { rows } = await pool.query(
      `insert into keel.webhook_event (kind, subject, payload) values ('proposal.created', 'proposal:1', '{}')
       returning id`,
    );
    const event = rows[0].id;
    await pool.query(
      `insert into keel.webhook_delivery (event_id, endpoint, status, attempts, delivered_at) values
         ($1, 'ops', 'PENDING', 2, null), ($2, 'ops', 'PENDING', 0, null), ($3, 'gone', 'PENDING', 3, null),
         ($4, 'ops', 'FAILED', 12, null), ($5, 'ops', 'DELIVERED', 1, clock_timestamp())`,
      [
        event,
        ...(await Promise.all(
          [1, 2, 3, 4].map(
            async () =>
              (
                await pool.query(
                  `insert into keel.webhook_event (kind, subject, payload)
                   values ('proposal.created', 'proposal:1', '{}') returning id`,
                )
              ).rows[0].id,
          ),
        )),
      ],
    );
    await pool.query(`
      insert into keel.bulk_replay (created_by_id, created_by_login, note,
      filter, item_count, status, started_at, started_by_id, started_by_login, started_by_role, worker_instance,
      worker_lease_until)
      values ('u', 'operator', 'lapsed', '{}', 0, 'RUNNING', clock_timestamp() - interval '1 hour', 'u', 'operator',
      'operator', 'keel-a', clock_timestamp() - interval '10 minutes'),
             ('u', 'operator', 'held', '{}', 0, 'RUNNING', clock_timestamp() - interval '1 hour', 'u', 'operator',
             'operator', 'keel-b', clock_timestamp() + interval '1 minute'),
             ('u', 'operator', 'previewed', '{}', 0, 'PREVIEWED', null, null, null, null, null, null)`);
    await pool.query(`
      insert into keel.durable_checkpoint (execution_id, checkpoint, authentication_tag, lease_owner, fencing_token,
      lease_expires_at_ms)
      values ('orch-lapsed', '{}', 't', 'o1', 1, (extract(epoch from clock_timestamp()) * 1000)::bigint - 60000),
             ('orch-live', '{}', 't', 'o2', 1, (extract(epoch from clock_timestamp()) * 1000)::bigint + 600000)`);
    // One valid retained envelope (written by the domain's own
    // writer), one corrupt, and a step with the default envelope.
    await pool.query(`insert into oxide_batch.ob_job_definition (id, job_name, definition_revision, manifest_format,
                      manifest_digest, manifest)
      values (1, 'job', 'r1', 1, sha256('m'), '{}')`);
    await pool.query(
      `insert into oxide_batch.ob_job_instance (id, job_name, instance_key) values (1, 'job', sha256('a'))`,
    );
    await pool.query(
      `insert into oxide_batch.ob_job_execution (id, job_instance_id, definition_id, attempt, status)
       values (1, 1, 1, 1, 'STARTED')`,
    );
    const valid = envelopeFor(
      { id: 1, logicalId: 'load', retryLimit: 3, stateLimit: 4, definitionDigest: Buffer.alloc(32, 1) },
      2,
    );
    await pool.query(
      `insert into oxide_batch.ob_step_execution (id, job_execution_id, step_name, step_logical_id, status,
       fault_state_payload, fault_state_checksum)
       values (1, 1, 'load', 'load', 'STARTED', $1, decode($2, 'hex')),
              (2, 1, 'write', 'write', 'STARTED', '{"checkpoint":"${'1'.repeat(64)}","entries":[]}',
              sha256('not the checksum')),
              (3, 1, 'notify', 'notify', 'STARTED', default, default)`,
      [JSON.stringify(valid.payload), valid.checksumHex],
    );
    await forgetSamples();
    const samples = await scrape(db, { deadLetterThreshold: 50 });
    expect(value(samples, 'keel_webhook_deliveries_retrying')).toBe(1);
    expect(value(samples, 'keel_webhook_deliveries_failed')).toBe(1);
    expect(value(samples, 'keel_bulk_jobs_stalled')).toBe(1);
    expect(value(samples, 'keel_orchestration_leases_lapsed')).toBe(1);
    expect(value(samples, 'keel_fault_state_corrupt_envelopes')).toBe(1);
    expect(value(samples, 'keel_dead_letter_alert_threshold')).toBe(50);
    // Without the settings (a caller that has none) the threshold is left out, not reported as 0.
    expect(has(await scrape(), 'keel_dead_letter_alert_threshold')).toBe(false);
  });
});
