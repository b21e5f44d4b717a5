import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { runtimeStaleBefore } from '../db/runtime-time';
import { staleExecution } from '../db/sql/stale-execution';
import { HOUR_MS, PENDING_LIMIT, type NeedsYouSnapshot, type PendingProposal } from '../domain/needs-you';
import { METRICS } from '../observability/metric-catalogue';

export interface NeedsYouReadOptions {
  staleThresholdMs: number;
  deadLetterThreshold: number;
  deadLetterWindowMs: number;
}

interface Row extends Record<string, unknown> {
  now: Date;
  pending: PendingRow[] | null;
  pending_count: string | number;
  samples: SampleRow[] | null;
  stale_last_hour: string | number;
  stale_hour_before: string | number;
  stale_oldest: Date | null;
  lapsed: string | number;
  lapsed_hour_ago: string | number;
  lapsed_oldest_ms: string | number | null;
}
interface PendingRow {
  id: number;
  kind: PendingProposal['kind'];
  target_kind: PendingProposal['targetKind'];
  target_id: string;
  proposer_id: string;
  proposer_login: string;
  created_at: string;
  wait_deadline: string;
}
/** A sampled value at one of the points in time the view compares. */
interface SampleRow {
  at: 'now' | 'window' | 'hour' | 'two' | 'first';
  metric: string;
  label: string;
  value: number;
}

// A sample counts for a point in time when taken at most this
// long before it: after a gap, no figure rather than an old one.
const SAMPLE_REACH_S = 600;

/**
 * The statement's one clock reading, as a value the planner can bound an index range with.
 * clock_timestamp() written into the bounds would be volatile: the stale part would then
 * test every active execution's updated_at (466,000 at 10M executions, 400 ms) instead of
 * reading the two hours it counts.
 */
const NOW_MS = sql`(select ms from clock)`;

/**
 * What needs someone, for every role at once, in one statement: each part through an
 * index (the pending-deadline index, the runtime's (status, updated_at) index, the
 * checkpoint expiry index, and the metric sample (metric, sampled_at) index for the
 * figures of now, of the dead-letter alert's window, of an hour and of two hours ago).
 */
export async function readNeedsYou(db: DbOrTx, options: NeedsYouReadOptions): Promise<NeedsYouSnapshot> {
  const threshold = options.staleThresholdMs;
  const windowS = options.deadLetterWindowMs / 1000;
  const metrics = [METRICS.pendingProposals, METRICS.corruptEnvelopes, METRICS.deadLettered];
  const { rows } = await db.execute<Row>(sql`
    with clock as (
      select clock_timestamp() as now, (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
    ),
    points as (
      select p.at, clock.now - make_interval(secs => p.secs) as t
      from clock, (values ('now', 0::float8), ('window', ${windowS}::float8), ('hour', 3600::float8),
      ('two', 7200::float8)) as p(at, secs)
    ),
    -- Materialized: fifteen indexed lookups, made once. Inlined into the join below, a planner that
    -- believes keel.metric_sample nearly empty (statistics taken before the sampler wrote, and
    -- autovacuum busy elsewhere) ran them again for every sample row: 1.5 s at 3,000 samples.
    taken as materialized (
      select p.at, w.metric, (
        select max(s.sampled_at) from keel.metric_sample s
        where s.metric = w.metric and s.sampled_at <= p.t
        and s.sampled_at > p.t - make_interval(secs => ${SAMPLE_REACH_S})
      ) as sampled_at
      from points p, unnest(${sql.param(metrics)}::text[]) as w(metric)
      union all
      -- The oldest sample of the last hour: the hour's start when the sampler has run for less than an hour.
      select 'first', w.metric, (
        select min(s.sampled_at) from keel.metric_sample s, clock
        where s.metric = w.metric and s.sampled_at > clock.now - interval '1 hour'
      )
      from unnest(${sql.param(metrics)}::text[]) as w(metric)
    ),
    stale as (
      select e.updated_at, ${runtimeStaleBefore(sql`e.updated_at`, threshold + HOUR_MS, NOW_MS)} as before_last_hour
      from oxide_batch.ob_job_execution e
      where ${staleExecution(threshold, 'e', NOW_MS)}
        and not ${runtimeStaleBefore(sql`e.updated_at`, threshold + 2 * HOUR_MS, NOW_MS)}
    )
    select clock.now,
      (select json_agg(p order by p.wait_deadline, p.id) from (
        select id, kind, target_kind, target_id, proposer_id, proposer_login, created_at, wait_deadline
        from keel.recovery_proposal where status = 'PENDING' order by wait_deadline, id limit ${PENDING_LIMIT}
      ) p) as pending,
      (select count(*) from keel.recovery_proposal where status = 'PENDING') as pending_count,
      (select json_agg(json_build_object('at', t.at, 'metric', m.metric, 'label', m.label, 'value', m.value))
         from taken t join keel.metric_sample m on m.metric = t.metric and m.sampled_at = t.sampled_at) as samples,
      (select count(*) from stale where not before_last_hour) as stale_last_hour,
      (select count(*) from stale where before_last_hour) as stale_hour_before,
      (select min(updated_at) from stale where not before_last_hour) as stale_oldest,
      (select count(*) from keel.durable_checkpoint c where c.lease_expires_at_ms <= clock.ms) as lapsed,
      (select count(*) from keel.durable_checkpoint c where c.lease_expires_at_ms <= clock.ms - ${HOUR_MS}) as
      lapsed_hour_ago,
      (select min(c.lease_expires_at_ms) from keel.durable_checkpoint c
      where c.lease_expires_at_ms <= clock.ms) as lapsed_oldest_ms
    from clock`);
  const row = rows[0]!;
  const samples = row.samples ?? [];
  const figure = (at: SampleRow['at'], metric: string, label = ''): number | null => {
    const found = samples.find((s) => s.at === at && s.metric === metric && s.label === label);
    return found ? Number(found.value) : null;
  };
  const reasons = [...new Set(samples.filter((s) => s.metric === METRICS.deadLettered).map((s) => s.label))].sort();
  const lapsedOldest = row.lapsed_oldest_ms === null ? null : Number(row.lapsed_oldest_ms);
  return {
    serverNow: new Date(row.now).toISOString(),
    staleThresholdMs: threshold,
    pending: (row.pending ?? []).map((p) => ({
      id: Number(p.id),
      kind: p.kind,
      targetKind: p.target_kind,
      targetId: p.target_id,
      proposerId: p.proposer_id,
      proposerLogin: p.proposer_login,
      createdAt: new Date(p.created_at).toISOString(),
      deadline: new Date(p.wait_deadline).toISOString(),
    })),
    pendingCount: Number(row.pending_count),
    pendingHourAgo: figure('hour', METRICS.pendingProposals),
    stale: {
      lastHour: Number(row.stale_last_hour),
      hourBefore: Number(row.stale_hour_before),
      oldestUpdatedAt: row.stale_oldest === null ? null : new Date(row.stale_oldest).toISOString(),
    },
    corrupt: { now: figure('now', METRICS.corruptEnvelopes), hourAgo: figure('hour', METRICS.corruptEnvelopes) },
    lapsed: {
      count: Number(row.lapsed),
      hourAgo: Number(row.lapsed_hour_ago),
      oldestExpiredAt: lapsedOldest === null ? null : new Date(lapsedOldest).toISOString(),
    },
    deadLetters: reasons.flatMap((reason) => {
      const now = figure('now', METRICS.deadLettered, reason);
      if (now === null) return [];
      const hour = figure('hour', METRICS.deadLettered, reason);
      const start = hour ?? figure('first', METRICS.deadLettered, reason) ?? now;
      const two = figure('two', METRICS.deadLettered, reason);
      const window = figure('window', METRICS.deadLettered, reason) ?? start;
      return [
        {
          reason,
          lastHour: now - start,
          hourBefore: hour !== null && two !== null ? hour - two : null,
          window: now - window,
        },
      ];
    }),
    deadLetterThreshold: options.deadLetterThreshold,
    deadLetterWindowMs: options.deadLetterWindowMs,
  };
}
