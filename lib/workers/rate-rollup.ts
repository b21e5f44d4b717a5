import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { BATCH_STATUSES } from '../domain/batch-status';
import { RATE_HOUR_RETENTION_MS, RATE_MINUTE_RETENTION_MS } from '../domain/rates';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
// Serializes rollups of several Keel processes on one database: "keel" + 2 (the sampler is + 1).
const ROLLUP_LOCK_KEY = 0x6b65656c02;
/** keel.meta row holding how far the rollup has counted: `{ since, rolledTo }`, epoch ms. */
export const RATE_ROLLUP_META_KEY = 'rate_rollup';
/** Closed minutes counted again on each pass: history committed a little after its own time is still counted. */
export const RATE_RECOUNT_MINUTES = 5;
/** At most this many new minutes per pass: a first start or a long outage catches up in steps of 6 h. */
export const RATE_ROLLUP_STEP_MINUTES = 360;

export interface RateRollupState {
  /** The first minute counted, epoch ms: buckets before it are unknown, not zero. */
  since: number;
  /** Every minute before this one is closed and counted, epoch ms. */
  rolledTo: number;
}

export interface RateRollupResult extends RateRollupState {
  /** The minutes counted (again) by this pass: [from, rolledTo). */
  from: number;
  minuteRows: number;
  hourRows: number;
  pruned: number;
  /** More closed minutes wait: the caller runs again soon. */
  behind: boolean;
}

const EPOCH = sql.raw(`timestamptz 'epoch'`);
const at = (ms: number) => sql`(timestamptz 'epoch' + ${ms}::bigint * interval '1 millisecond')`;

/** Reads the rollup's progress (null before its first pass). */
export async function readRateRollupState(db: DbOrTx): Promise<RateRollupState | null> {
  const { rows } = await db.execute<{ value: RateRollupState }>(
    sql`select value from keel.meta where key = ${RATE_ROLLUP_META_KEY}`,
  );
  const value = rows[0]?.value;
  return value && Number.isFinite(value.since) && Number.isFinite(value.rolledTo) ? value : null;
}

/**
 * Counts, per closed minute, settlements finished, retried and dead-lettered (by reason code)
 * and executions started and failed (by job name) into `keel.rate_minute`, sums the touched
 * hours into `keel.rate_hour`, and prunes both past retention, in one transaction
 * (docs/architecture.md#rates). Each pass counts the new closed minutes and the last
 * few again, replacing what it finds, so a pass repeated, raced or interrupted leaves the
 * same rows. Returns null when another process is rolling up right now.
 */
export async function rollupRates(db: DbOrTx): Promise<RateRollupResult | null> {
  return db.transaction(async (tx) => {
    const locked = await tx.execute<{ locked: boolean }>(
      sql`select pg_try_advisory_xact_lock(${ROLLUP_LOCK_KEY}::bigint) as locked`,
    );
    if (!locked.rows[0]?.locked) return null;
    const clock = await tx.execute<{ ms: string }>(
      sql`select (extract(epoch from date_bin('1 minute', clock_timestamp(), ${EPOCH})) * 1000)::bigint as ms`,
    );
    // The minute now running is open; every minute before it is closed.
    const closedTo = Number(clock.rows[0]!.ms);
    // The oldest minute worth counting: whole hours, inside the minutes' retention.
    const earliest = Math.floor((closedTo - RATE_MINUTE_RETENTION_MS) / HOUR_MS) * HOUR_MS + HOUR_MS;
    const state = await readRateRollupState(tx);
    // A first pass, or one after the minutes it stopped at were pruned, starts counting afresh.
    const fresh = state === null || state.rolledTo < earliest;
    const since = fresh ? earliest : state.since;
    const resumeAt = fresh ? earliest : state.rolledTo;
    const from = Math.max(resumeAt - RATE_RECOUNT_MINUTES * MINUTE_MS, since, earliest);
    const to = Math.max(from, Math.min(resumeAt + RATE_ROLLUP_STEP_MINUTES * MINUTE_MS, closedTo));
    let minuteRows = 0;
    let hourRows = 0;
    if (to > from) {
      minuteRows = await recountMinutes(tx, from, to);
      hourRows = await recountHours(tx, Math.floor(from / HOUR_MS) * HOUR_MS, to);
    }
    const prunedMinutes = await tx.execute(sql`delete from keel.rate_minute
      where minute < ${at(closedTo - RATE_MINUTE_RETENTION_MS)}`);
    const prunedHours = await tx.execute(sql`delete from keel.rate_hour
      where hour < ${at(closedTo - RATE_HOUR_RETENTION_MS)}`);
    const rolledTo = Math.max(to, fresh ? to : state.rolledTo);
    const value = JSON.stringify({ since, rolledTo } satisfies RateRollupState);
    await tx.execute(sql`
      insert into keel.meta (key, value, updated_at)
      values (${RATE_ROLLUP_META_KEY}, ${value}::jsonb, clock_timestamp())
      on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at`);
    return {
      since,
      rolledTo,
      from,
      minuteRows,
      hourRows,
      pruned: (prunedMinutes.rowCount ?? 0) + (prunedHours.rowCount ?? 0),
      behind: rolledTo < closedTo,
    };
  });
}

/** Replaces the minute rows of [from, to) with a fresh count; a minute that now counts nothing loses its row. */
async function recountMinutes(tx: DbOrTx, from: number, to: number): Promise<number> {
  const result = await tx.execute(sql`
    with counted (metric, dimension, minute, count) as (
      select
        case e.kind when 'finished' then 'settlements_finished' when 'retry_scheduled' then 'settlements_retried'
          else 'settlements_dead_lettered' end,
        case when e.kind <> 'dead_lettered' then ''
          when e.reason_code = any(${sql.param([...FAILURE_CODES])}::text[]) then e.reason_code else 'other' end,
        timestamptz 'epoch' + (e.at_ms / 60000) * interval '1 minute',
        count(*)::int
      from keel.settlement_event e
      where e.at_ms >= ${from}::bigint and e.at_ms < ${to}::bigint
        and e.kind in ('finished', 'retry_scheduled', 'dead_lettered')
      group by 1, 2, 3
      union all
      -- The runtime writes updated_at with every change, so an execution that started or ended in the window
      -- was updated since it opened: the (status, updated_at) index finds those few, whatever the table's size.
      select 'executions_started', i.job_name::text, date_bin('1 minute', x.started_at, ${EPOCH}), count(*)::int
      from oxide_batch.ob_job_execution x join oxide_batch.ob_job_instance i on i.id = x.job_instance_id
      where x.status = any(${sql.param([...BATCH_STATUSES])}::text[]) and x.updated_at >= ${at(from)}
        and x.started_at >= ${at(from)} and x.started_at < ${at(to)}
      group by 1, 2, 3
      union all
      select 'executions_failed', i.job_name::text, date_bin('1 minute', x.ended_at, ${EPOCH}), count(*)::int
      from oxide_batch.ob_job_execution x join oxide_batch.ob_job_instance i on i.id = x.job_instance_id
      where x.status = 'FAILED' and x.updated_at >= ${at(from)}
        and x.ended_at >= ${at(from)} and x.ended_at < ${at(to)}
      group by 1, 2, 3
    ),
    emptied as (
      delete from keel.rate_minute r
      where r.minute >= ${at(from)} and r.minute < ${at(to)}
        and not exists (
          select 1 from counted c where (c.metric, c.dimension, c.minute) = (r.metric, r.dimension, r.minute))
    )
    insert into keel.rate_minute (metric, dimension, minute, count)
    select metric, dimension, minute, count from counted
    on conflict (metric, minute, dimension) do update set count = excluded.count
    where keel.rate_minute.count <> excluded.count`);
  return result.rowCount ?? 0;
}

/** Replaces the hour rows of [from, to) with the sums of their minutes (the last hour partial until it closes). */
async function recountHours(tx: DbOrTx, from: number, to: number): Promise<number> {
  const result = await tx.execute(sql`
    with summed (metric, dimension, hour, count) as (
      select metric, dimension, date_bin('1 hour', minute, ${EPOCH}), sum(count)::int
      from keel.rate_minute
      where minute >= ${at(from)} and minute < ${at(to)}
      group by 1, 2, 3
    ),
    emptied as (
      delete from keel.rate_hour h
      where h.hour >= ${at(from)} and h.hour < ${at(to)}
        and not exists (select 1 from summed s where (s.metric, s.dimension, s.hour) = (h.metric, h.dimension, h.hour))
    )
    insert into keel.rate_hour (metric, dimension, hour, count)
    select metric, dimension, hour, count from summed
    on conflict (metric, hour, dimension) do update set count = excluded.count
    where keel.rate_hour.count <> excluded.count`);
  return result.rowCount ?? 0;
}
