import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { staleExecution } from '../db/sql/stale-execution';
import { inQueueState } from '../db/sql/queue-state';
import { pruneExpiredLeaseGrants } from '../db/sql/lease-grants';
import { BATCH_STATUSES } from '../domain/batch-status';
import { QUEUE_STATES } from '../domain/queue-state';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';
import { DEAD_LETTER_REASON_LABELS, METRICS } from '../observability/metric-catalogue';
import { countCorruptEnvelopes } from '../queries/corrupt-envelopes';
import { rollupRates } from './rate-rollup';
import { startWorkerLoop, type RunningWorker, type WorkerLog, type WorkerWait } from './worker-loop';

export const METRIC_SAMPLE_INTERVAL_MS = 15_000;
/**
 * The most of the time between two samples a sample may take. Its statements count whole
 * tables, so their cost grows with the rows: under a second at a million, 3 to 5 s at ten million
 * (docs/performance.md). Past a tenth of the interval the interval stretches instead.
 */
export const SAMPLE_TIME_SHARE = 0.1;
export const METRIC_RETENTION_MS = 2 * 24 * 3_600_000;
// Serializes samplers of several Keel processes on one database: "keel" + 1.
const SAMPLER_LOCK_KEY = 0x6b65656c01;

export interface MetricSamplerOptions {
  db: DbOrTx;
  log: WorkerLog;
  staleThresholdMs: number;
  intervalMs?: number;
  /** How the sampler waits between samples (a timer unless a test drives it). */
  wait?: WorkerWait;
}

/** The interval that follows a sample that took `tookMs`: the base, or longer when the sample took over its share. */
const sampleIntervalAfter = (baseMs: number, tookMs: number): number =>
  Math.max(baseMs, Math.ceil(tookMs / SAMPLE_TIME_SHARE));

/**
 * Writes one sample of every series, stamped with the server's clock, and deletes
 * samples past retention and expired lease grants, in one transaction. Returns null when another process
 * sampled within the last sample's interval, so several Keel servers still write one series, and when
 * another process is sampling right now: no caller (a scrape, a page) ever waits behind a sample.
 * The sample records how long it took and the interval that follows it (`sampleIntervalAfter`).
 */
export async function sampleMetrics(
  db: DbOrTx,
  options: { staleThresholdMs: number; intervalMs?: number },
): Promise<{ written: number; deleted: number; intervalMs: number } | null> {
  const intervalMs = options.intervalMs ?? METRIC_SAMPLE_INTERVAL_MS;
  return db.transaction(async (tx) => {
    const locked = await tx.execute<{ locked: boolean }>(
      sql`select pg_try_advisory_xact_lock(${SAMPLER_LOCK_KEY}::bigint) as locked`,
    );
    if (!locked.rows[0]?.locked) return null;
    // Within the interval the last sample set (this process's base at least) is recent.
    const recent = await tx.execute<{ recent: boolean }>(sql`
      with last as (select max(sampled_at) as at from keel.metric_sample)
      select coalesce(last.at > clock_timestamp() - make_interval(secs => 0.9 * greatest(
        ${intervalMs / 1000}::float8,
        (select m.value from keel.metric_sample m
         where m.metric = ${METRICS.sampleIntervalSeconds} and m.label = '' and m.sampled_at = last.at)
      )), false) as recent
      from last`);
    if (recent.rows[0]?.recent) return null;
    const started = performance.now();
    const corruptEnvelopes = await countCorruptEnvelopes(tx);
    const reasonCodes = sql.param([...FAILURE_CODES]);
    const queueCountPairs = sql.join(
      QUEUE_STATES.map(
        (state) => sql`${state}::text, count(*) filter (where ${inQueueState(state, sql`clock.ms`, 'a')})`,
      ),
      sql`, `,
    );
    const written = await tx.execute(sql`
      with clock as (
        select clock_timestamp() as at, (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
      ),
      -- Filtered aggregates over one scan of the queue, the retrying count included: a GROUP BY on the state's
      -- CASE sorted a million rows and spilled to disk.
      queue_scan as (
        select jsonb_build_object(${queueCountPairs}) as states,
               count(*) filter (where a.work_kind = 'retry_scheduled') as retrying
        from settle.attempts a, clock
      ),
      queue as (
        select counts.key as state, counts.value::bigint as n
        from queue_scan, jsonb_each_text(queue_scan.states) as counts
      ),
      dead_by_reason as (
        select reason, count(*) as n from settle.dead_letters group by reason
      ),
      executions as (
        select status, count(*) as n from oxide_batch.ob_job_execution group by status
      )
      insert into keel.metric_sample (sampled_at, metric, label, value)
      select clock.at, m.metric, m.label, m.value from clock, (
        select ${METRICS.queueDepth} as metric, s.state as label, coalesce(queue.n, 0)::float8 as value
        from unnest(${sql.param([...QUEUE_STATES])}::text[]) as s(state) left join queue using (state)
        union all
        select ${METRICS.retrying}, '', retrying::float8 from queue_scan
        union all
        select ${METRICS.retriesScheduled}, '', count(*)::float8 from keel.settlement_event, clock
        where kind = 'retry_scheduled' and at_ms > clock.ms - ${intervalMs}::bigint
        union all
        select ${METRICS.deadLetters}, reason, n::float8 from dead_by_reason
        union all
        select ${METRICS.deadLettersTotal}, '', coalesce(sum(n), 0)::float8 from dead_by_reason
        union all
        select ${METRICS.deadLettered}, r.reason, coalesce(d.n, 0)::float8
        from unnest(${sql.param([...DEAD_LETTER_REASON_LABELS])}::text[]) as r(reason)
        left join (
          select case when e.reason_code = any(${reasonCodes}::text[]) then e.reason_code
          else 'other' end as reason, count(*) as n
          from keel.settlement_event e where e.kind = 'dead_lettered' group by 1
        ) d using (reason)
        union all
        select ${METRICS.corruptEnvelopes}, '', ${corruptEnvelopes}::float8
        union all
        select ${METRICS.staleExecutions}, '', count(*)::float8 from oxide_batch.ob_job_execution
        where ${staleExecution(options.staleThresholdMs)}
        union all
        select ${METRICS.pendingProposals}, '', count(*)::float8 from keel.recovery_proposal where status = 'PENDING'
        union all
        select ${METRICS.executions}, s.status, coalesce(executions.n, 0)::float8
        from unnest(${sql.param([...BATCH_STATUSES])}::text[]) as s(status) left join executions using (status)
      ) as m`);
    const tookMs = performance.now() - started;
    const next = sampleIntervalAfter(intervalMs, tookMs);
    // Stamped as the sample just written, the newest: only the sampler writes samples, under its lock.
    const stamped = await tx.execute(sql`
      insert into keel.metric_sample (sampled_at, metric, label, value)
      select last.at, m.metric, '', m.value
      from (select max(sampled_at) as at from keel.metric_sample) last,
      (values (${METRICS.sampleSeconds}, ${tookMs / 1000}::float8),
              (${METRICS.sampleIntervalSeconds}, ${next / 1000}::float8)) as m(metric, value)`);
    const deleted = await tx.execute(sql`
      delete from keel.metric_sample
      where sampled_at < clock_timestamp() - make_interval(secs => ${METRIC_RETENTION_MS / 1000}::float8)`);
    // Lease grants expired past their grace hold no lease any
    // more (lib/db/sql/lease-grants.ts); their index finds them.
    await tx.execute(pruneExpiredLeaseGrants(sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`));
    const rows = (written.rowCount ?? 0) + (stamped.rowCount ?? 0);
    return { written: rows, deleted: deleted.rowCount ?? 0, intervalMs: next };
  });
}

/**
 * Samples every 15 s, or at the longer interval the last sample set (docs/design.md#metrics), starting
 * at once, and rolls up the rates' closed minutes.
 */
export function startMetricSampler({
  db,
  log,
  staleThresholdMs,
  intervalMs = METRIC_SAMPLE_INTERVAL_MS,
  wait,
}: MetricSamplerOptions): RunningWorker {
  return startWorkerLoop({
    name: 'metric sampler',
    announce: { intervalMs },
    log,
    errorDelayMs: intervalMs,
    wait,
    async step() {
      // The rates' rollup rides along (lib/workers/rate-rollup.ts), before the sample: the
      // sample's `metrics` announcement makes open rates pages read again, and they then find
      // the minute that just closed counted, not 15 s later. The sample is taken even when the
      // rollup fails. With closed minutes left to count, the next pass comes at once.
      let rates: Awaited<ReturnType<typeof rollupRates>> | undefined;
      let sampled: Awaited<ReturnType<typeof sampleMetrics>> = null;
      try {
        rates = await rollupRates(db);
      } finally {
        sampled = await sampleMetrics(db, { staleThresholdMs, intervalMs });
      }
      return rates?.behind ? 0 : (sampled?.intervalMs ?? intervalMs);
    },
  });
}
