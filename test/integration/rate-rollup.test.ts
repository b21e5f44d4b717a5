import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../lib/db/client';
import { RATE_HOUR_RETENTION_MS, RATE_MINUTE_RETENTION_MS } from '../../lib/domain/rates';
import { readRates } from '../../lib/queries/rates';
import {
  RATE_RECOUNT_MINUTES,
  RATE_ROLLUP_META_KEY,
  RATE_ROLLUP_STEP_MINUTES,
  readRateRollupState,
  rollupRates,
} from '../../lib/workers/rate-rollup';
import { freshDatabase } from '../support/database';

const { pool, db, newPool } = await freshDatabase();
const MINUTE = 60_000;
const HOUR = 3_600_000;

/** The start of the minute running now, by the database's clock (every minute before it is closed). */
const openMinute = async () =>
  Number(
    (
      await pool.query(
        `select (extract(epoch from date_bin('1 minute', clock_timestamp(), 'epoch')) * 1000)::bigint as ms`,
      )
    ).rows[0].ms,
  );

/** Passes until every closed minute is counted, as the sampler's loop runs them back to back. */
async function rollUntilCurrent(database = db): Promise<number> {
  for (let passes = 1; passes <= 20; passes += 1) {
    const result = await rollupRates(database);
    if (result && !result.behind) return passes;
  }
  throw new Error('the rollup never caught up');
}

async function minuteRows(): Promise<string[]> {
  const { rows } = await pool.query(`select metric, dimension, (extract(epoch from minute) * 1000)::bigint as ms, count
    from keel.rate_minute order by 1, 2, 3`);
  return rows.map((r) => `${r.metric}|${r.dimension}|${r.ms}|${r.count}`);
}

const event = (receipt: string, kind: string, atMs: number, reason: string | null = null) =>
  pool.query(
    `insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms) values ($1, $2, 1, $3, $4)`,
    [receipt, kind, reason, atMs],
  );

let nextInstance = 1;
/** One execution of `job` in `status`, started (and for a finished status ended) at the given instants. */
async function execution(job: string, status: string, startedMs: number, endedMs: number | null = null) {
  const instance = nextInstance++;
  await pool.query(`insert into oxide_batch.ob_job_instance (id, job_name, instance_key) values ($1, $2, sha256($3))`, [
    instance,
    job,
    Buffer.from(`instance-${instance}`),
  ]);
  await pool.query(
    `insert into oxide_batch.ob_job_execution
       (job_instance_id, definition_id, attempt, status, started_at, ended_at, updated_at)
     values ($1, 1, 1, $2, to_timestamp($3 / 1000.0), to_timestamp($4 / 1000.0), to_timestamp($5 / 1000.0))`,
    [instance, status, startedMs, endedMs, Math.max(startedMs, endedMs ?? 0) + 1_000],
  );
}

describe('rate rollup', () => {
  let closed = 0;

  it('counts each closed minute by metric and by reason or job, and a pass repeated changes nothing', async () => {
    await pool.query(`insert into oxide_batch.ob_job_definition (id, job_name, definition_revision, manifest_format,
      manifest_digest, manifest) values (1, 'payouts', 'r1', 1, sha256('m'), '{}')`);
    closed = await openMinute();
    const m3 = closed - 3 * MINUTE;
    const m2 = closed - 2 * MINUTE;
    await event('r-1', 'finished', m3 + 1_000);
    await event('r-2', 'finished', m3 + 59_999);
    await event('r-3', 'finished', m2);
    await event('r-4', 'retry_scheduled', m2 + 5_000, 'rpc');
    await event('r-5', 'dead_lettered', m2 + 6_000, 'rpc');
    await event('r-6', 'dead_lettered', m2 + 7_000, 'cosmic_ray');
    // Neither counted: a claim is no rate, and a minute in the future has not closed.
    await event('r-7', 'claimed', m2 + 8_000);
    await event('r-8', 'finished', closed + 10 * MINUTE);
    await execution('payouts', 'STARTED', m3 + 2_000);
    await execution('payouts', 'FAILED', m3 + 3_000, m2 + 4_000);
    await execution('reports', 'COMPLETED', m2 + 1_000, m2 + 2_000);

    const passes = await rollUntilCurrent();
    // A first start counts the last 47 hours or so, in steps of six hours.
    expect(passes).toBeGreaterThanOrEqual(
      Math.floor((RATE_MINUTE_RETENTION_MS - HOUR) / (RATE_ROLLUP_STEP_MINUTES * MINUTE)),
    );
    const expected = [
      `executions_failed|payouts|${m2}|1`,
      `executions_started|payouts|${m3}|2`,
      `executions_started|reports|${m2}|1`,
      `settlements_dead_lettered|other|${m2}|1`,
      `settlements_dead_lettered|rpc|${m2}|1`,
      `settlements_finished||${m3}|2`,
      `settlements_finished||${m2}|1`,
      `settlements_retried||${m2}|1`,
    ];
    expect(await minuteRows()).toEqual(expected);
    // Again: the same closed minutes recounted give the same rows, and no row is rewritten.
    const again = await rollupRates(db);
    expect(again).toMatchObject({ minuteRows: 0, hourRows: 0, behind: false });
    expect(await minuteRows()).toEqual(expected);
    // No dimension is ever a receipt id.
    const dims = await pool.query(`select distinct dimension from keel.rate_minute`);
    expect(dims.rows.map((r) => r.dimension).sort()).toEqual(['', 'other', 'payouts', 'reports', 'rpc']);
  });

  it('counts history written late into a recent minute, and forgets a count that went away', async () => {
    const m2 = closed - 2 * MINUTE;
    await event('r-late', 'finished', m2 + 30_000);
    // The failed execution is abandoned since: it no longer counts as failed.
    await pool.query(`update oxide_batch.ob_job_execution set status = 'ABANDONED', updated_at = clock_timestamp()
      where status = 'FAILED'`);
    await rollUntilCurrent();
    const rows = await minuteRows();
    expect(rows).toContain(`settlements_finished||${m2}|2`);
    expect(rows.some((r) => r.startsWith('executions_failed|'))).toBe(false);
    // Further back than the recount window, history is no longer looked at again.
    const old = closed - (RATE_RECOUNT_MINUTES + 30) * MINUTE;
    await event('r-too-late', 'finished', old);
    await rollUntilCurrent();
    expect((await minuteRows()).some((r) => r.includes(`|${old}|`))).toBe(false);
    // (A fresh start would count it: the race below starts afresh.)
    await pool.query(`delete from keel.settlement_event where receipt_id = 'r-too-late'`);
  });

  it('sums the minutes of each hour into keel.rate_hour', async () => {
    const { rows } = await pool.query(`
      select h.metric, h.dimension, h.hour, h.count, (
        select sum(m.count)::int from keel.rate_minute m where m.metric = h.metric and m.dimension = h.dimension
          and m.minute >= h.hour and m.minute < h.hour + interval '1 hour') as minutes
      from keel.rate_hour h`);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.count).toBe(row.minutes);
  });

  it('rolls up once at a time across processes, and racing passes leave the same rows', async () => {
    const before = await minuteRows();
    // Another process holds the rollup's lock: this pass steps aside instead of waiting.
    const holder = await pool.connect();
    try {
      await holder.query('begin');
      await holder.query(`select pg_advisory_xact_lock(${0x6b65656c02}::bigint)`);
      expect(await rollupRates(db)).toBeNull();
      await holder.query('rollback');
    } finally {
      holder.release();
    }
    await pool.query(`delete from keel.meta where key = $1`, [RATE_ROLLUP_META_KEY]);
    const racers = Array.from({ length: 4 }, () => createDatabase(newPool(1)));
    // Four samplers from a fresh start, each looping until it sees no backlog.
    await Promise.all(
      racers.map(async (racer) => {
        for (let i = 0; i < 40; i += 1) {
          const result = await rollupRates(racer);
          if (result && !result.behind) return;
          if (!result) await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }),
    );
    expect(await minuteRows()).toEqual(before);
    const state = await readRateRollupState(db);
    expect(state!.rolledTo).toBeGreaterThanOrEqual(closed);
  });

  it('prunes minutes after 48 hours and hours after 30 days', async () => {
    await pool.query(
      `insert into keel.rate_minute (metric, dimension, minute, count) values
      ('settlements_finished', '', date_bin('1 minute', clock_timestamp() - $1::bigint * interval '1 ms', 'epoch'), 1),
      ('settlements_finished', '', date_bin('1 minute', clock_timestamp() - $2::bigint * interval '1 ms', 'epoch'), 1)`,
      [RATE_MINUTE_RETENTION_MS + 2 * MINUTE, RATE_MINUTE_RETENTION_MS - 2 * HOUR],
    );
    await pool.query(
      `insert into keel.rate_hour (metric, dimension, hour, count) values
      ('settlements_finished', '', date_bin('1 hour', clock_timestamp() - $1::bigint * interval '1 ms', 'epoch'), 1),
      ('settlements_finished', '', date_bin('1 hour', clock_timestamp() - $2::bigint * interval '1 ms', 'epoch'), 1)`,
      [RATE_HOUR_RETENTION_MS + 2 * HOUR, RATE_HOUR_RETENTION_MS - 2 * HOUR],
    );
    const result = await rollupRates(db);
    expect(result!.pruned).toBe(2);
    const oldest = await pool.query(`select
      (select extract(epoch from clock_timestamp() - min(minute)) * 1000 from keel.rate_minute) as minute_age,
      (select extract(epoch from clock_timestamp() - min(hour)) * 1000 from keel.rate_hour) as hour_age`);
    expect(Number(oldest.rows[0].minute_age)).toBeLessThan(RATE_MINUTE_RETENTION_MS);
    expect(Number(oldest.rows[0].minute_age)).toBeGreaterThan(RATE_MINUTE_RETENTION_MS - 3 * HOUR);
    expect(Number(oldest.rows[0].hour_age)).toBeLessThan(RATE_HOUR_RETENTION_MS);
    expect(Number(oldest.rows[0].hour_age)).toBeGreaterThan(RATE_HOUR_RETENTION_MS - 3 * HOUR);
  });

  it('reads each range in its buckets, with the takeovers and bulk jobs of the range as markers', async () => {
    await pool.query(`insert into keel.bulk_replay (id, created_by_id, created_by_login, note, filter, item_count,
      status, action, started_at, started_by_id, started_by_login, started_by_role) overriding system value
      values (7, 'u', 'support', 'n', '{}', 40, 'RUNNING', 'REPLAY', clock_timestamp(), 'u', 'support', 'support')`);
    const audit = `insert into keel.audit_event
      (at, actor_login, actor_role, action, target_kind, target_id, outcome, code)
      values (clock_timestamp() - $1::bigint * interval '1 ms', $2, $3, $4, $5, $6, $7, $8)`;
    await pool.query(audit, [
      5 * MINUTE,
      'support',
      'support',
      'settlement.bulk_replay.start',
      'bulk_replay',
      '7',
      'APPLIED',
      null,
    ]);
    await pool.query(audit, [
      2 * HOUR,
      'approver2',
      'approver',
      'recovery.confirm',
      'batch_execution',
      '42',
      'APPLIED',
      null,
    ]);
    await pool.query(audit, [
      MINUTE,
      'viewer',
      'viewer',
      'recovery.confirm',
      'batch_execution',
      '43',
      'REFUSED',
      'FORBIDDEN',
    ]);

    const hour = await readRates(db, '1h');
    expect(hour.rates.map((c) => c.id)).toEqual([
      'settlements_finished',
      'settlements_retried',
      'settlements_dead_lettered',
      'executions_started',
      'executions_failed',
    ]);
    const finished = hour.rates[0]!;
    expect(finished).toMatchObject({ unit: 'per minute', stepMs: MINUTE });
    expect(finished.series[0]!.values).toHaveLength(60);
    // The bucket three minutes before the minute running now holds the two finished then.
    const at = (startMs: number) => Math.round((closed - 3 * MINUTE - startMs) / MINUTE);
    expect(finished.series[0]!.values[at(finished.startMs)]).toBe(2);
    const byReason = hour.rates[2]!;
    expect(byReason.series.map((s) => s.name).sort()).toEqual(['other', 'rpc']);
    expect(hour.markers).toEqual([
      {
        atMs: expect.any(Number),
        kind: 'bulk',
        label: 'Bulk replay 7 of 40 dead letters started by support',
        href: '/settlements/bulk/7',
      },
    ]);
    expect(hour.levels).toHaveLength(2);

    const day = await readRates(db, '24h');
    expect(day.rates[0]!.series[0]!.values).toHaveLength(1440);
    expect(day.markers.map((m) => m.label)).toEqual([
      'Takeover of execution 42 confirmed by approver2',
      'Bulk replay 7 of 40 dead letters started by support',
    ]);
    expect(day.markers[0]!.href).toBe('/executions/42');

    const week = await readRates(db, '7d');
    const weekFinished = week.rates[0]!;
    expect(weekFinished).toMatchObject({ unit: 'per hour', stepMs: HOUR });
    expect(weekFinished.series[0]!.values).toHaveLength(168);
    // Hours before the rollup's first minute are unknown, not zero; the last hour is the one running.
    expect(weekFinished.series[0]!.values[0]).toBeNull();
    expect(weekFinished.series[0]!.values.at(-1)).not.toBeNull();
    const hourOf = Math.floor((closed - 3 * MINUTE) / HOUR) * HOUR;
    const finishedThatHour = weekFinished.series[0]!.values[Math.round((hourOf - weekFinished.startMs) / HOUR)];
    expect(finishedThatHour).toBeGreaterThanOrEqual(2);
    // Samples are kept two days: a week has no levels.
    expect(week.levels).toBeNull();
  });

  it('holds a level across minutes without a sample while the interval its sample set lasts', async () => {
    const { rows } = await pool.query<{ ms: string }>(
      `select (extract(epoch from date_bin('1 minute', clock_timestamp() - interval '40 minutes', 'epoch'))
       * 1000)::bigint as ms`,
    );
    const base = Number(rows[0]!.ms);
    // Samples of a table large enough that each set an interval of 150 s, then one back at 15 s.
    const samples: [secondsIn: number, due: number, intervalSeconds: number][] = [
      [50, 7, 150],
      [190, 9, 150],
      [620, 4, 15],
      [785, 5, 15],
    ];
    for (const [seconds, due, interval] of samples) {
      await pool.query(
        `insert into keel.metric_sample (sampled_at, metric, label, value) values
         (to_timestamp($1::bigint / 1000.0), 'settlement_queue_depth', 'due', $2),
         (to_timestamp($1::bigint / 1000.0), 'metric_sample_interval_seconds', '', $3)`,
        [base + seconds * 1000, due, interval],
      );
    }
    const levels = (await readRates(db, '1h')).levels!;
    const chart = levels.find((c) => c.id === 'levels_queue')!;
    const dueLine = chart.series.find((s) => s.name === 'Due')!;
    const minute = (n: number) => dueLine.values[Math.round((base + n * MINUTE - chart.startMs) / MINUTE)];
    // Minutes 1 and 2 have no sample: the one of minute 0 holds until the next was due (165 s
    // past minute 0's end at the latest). Minutes 6 to 9 are past that: gaps, as is minute 11,
    // which a 15 s interval does not reach.
    expect([0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13].map(minute)).toEqual([
      7,
      7,
      7,
      9,
      9,
      9,
      null,
      null,
      4,
      null,
      null,
      5,
    ]);
  });
});
