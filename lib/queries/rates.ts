import 'server-only';
import { sql } from 'drizzle-orm';
import { METRICS } from '../observability/metric-catalogue';
import type { DbOrTx } from '../db/client';
import {
  RATE_MARKER_ACTIONS,
  RATE_METRIC_INFO,
  RATE_METRICS,
  RATE_RANGE_SPANS,
  type RateMetric,
  type RateRange,
} from '../domain/rates';
import { SAMPLE_TIME_SHARE } from '../workers/metric-sampler';
import { readRateRollupState } from '../workers/rate-rollup';
import type { RateChartData, RateMarker, RateSeries, RatesPage } from './rates-types';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** A chart draws its largest dimensions one by one and sums the rest into one line. */
const MAX_LINES = 6;
/** Samples are kept 2 days (lib/workers/metric-sampler.ts): a longer range has no levels. */
const LEVELS_KEPT_MS = 48 * HOUR_MS;
const MAX_MARKERS = 500;

/** The overview's former sparklines, in two charts whose scales differ by orders of magnitude. */
const LEVEL_CHARTS = [
  {
    id: 'levels_queue',
    title: 'Settlement queue and dead letters',
    lines: [
      { metric: 'settlement_queue_depth', label: 'due', name: 'Due' },
      { metric: 'settlement_queue_depth', label: 'leased', name: 'Leased' },
      { metric: 'settlement_queue_depth', label: 'retry_scheduled', name: 'Retry scheduled' },
      { metric: 'settlement_dead_letters_total', label: '', name: 'Dead letters' },
    ],
  },
  {
    id: 'levels_recovery',
    title: 'Stale executions and pending proposals',
    lines: [
      { metric: 'batch_stale_executions', label: '', name: 'Stale executions' },
      { metric: 'recovery_pending_proposals', label: '', name: 'Pending proposals' },
    ],
  },
] as const;

const msOf = (ms: number) => sql`(timestamptz 'epoch' + ${ms}::bigint * interval '1 millisecond')`;

/**
 * The /rates page: each rate per bucket of the range (minutes up to a day, hours beyond, from
 * `keel.rate_minute` and `keel.rate_hour`), the sampled levels per minute, and the takeovers and
 * bulk jobs of the range from the audit log. A bucket the rollup has not counted is null, not zero.
 */
export async function readRates(db: DbOrTx, range: RateRange): Promise<RatesPage> {
  const { spanMs, bucketMs } = RATE_RANGE_SPANS[range];
  const clock = await db.execute<{ ms: string }>(
    sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`,
  );
  const nowMs = Number(clock.rows[0]!.ms);
  const fromMs = nowMs - spanMs;
  // Minute charts end at the last closed minute; hour charts include the hour running, partly counted.
  const endMs = bucketMs === MINUTE_MS ? floorTo(nowMs, MINUTE_MS) : floorTo(nowMs, HOUR_MS) + HOUR_MS;
  const startMs = Math.max(floorTo(fromMs, bucketMs), endMs - spanMs);
  const buckets = Math.round((endMs - startMs) / bucketMs);
  const [counted, rows, levels, markers] = await Promise.all([
    readRateRollupState(db),
    readCounts(db, bucketMs === MINUTE_MS ? 'minute' : 'hour', startMs, endMs),
    nowMs - fromMs <= LEVELS_KEPT_MS ? readLevels(db, fromMs, nowMs) : Promise.resolve(null),
    readMarkers(db, fromMs),
  ]);
  // A bucket is known once the rollup has counted it: wholly for minutes, at least partly for hours.
  const known = (at: number) =>
    counted !== null &&
    at < counted.rolledTo &&
    (bucketMs === MINUTE_MS ? at >= counted.since : at + bucketMs > counted.since);
  const rates = RATE_METRICS.map((metric) =>
    rateChart(
      metric,
      rows.filter((r) => r.metric === metric),
      { startMs, bucketMs, buckets },
      known,
    ),
  );
  return {
    range,
    nowMs,
    fromMs,
    rates,
    levels,
    markers,
    counted: counted ? { sinceMs: counted.since, rolledToMs: counted.rolledTo } : null,
  };
}

const floorTo = (ms: number, step: number) => Math.floor(ms / step) * step;

interface CountRow {
  metric: RateMetric;
  dimension: string;
  ms: number;
  count: number;
}

async function readCounts(db: DbOrTx, grain: 'minute' | 'hour', startMs: number, endMs: number): Promise<CountRow[]> {
  const query =
    grain === 'minute'
      ? sql`select metric, dimension, (extract(epoch from minute) * 1000)::bigint as ms, count from keel.rate_minute
          where minute >= ${msOf(startMs)} and minute < ${msOf(endMs)}`
      : sql`select metric, dimension, (extract(epoch from hour) * 1000)::bigint as ms, count from keel.rate_hour
          where hour >= ${msOf(startMs)} and hour < ${msOf(endMs)}`;
  const { rows } = await db.execute<{ metric: RateMetric; dimension: string; ms: string; count: number }>(query);
  return rows.map((r) => ({ metric: r.metric, dimension: r.dimension, ms: Number(r.ms), count: Number(r.count) }));
}

function rateChart(
  metric: RateMetric,
  rows: CountRow[],
  grid: { startMs: number; bucketMs: number; buckets: number },
  known: (at: number) => boolean,
): RateChartData {
  const info = RATE_METRIC_INFO[metric];
  const totals = new Map<string, number>();
  for (const r of rows) totals.set(r.dimension, (totals.get(r.dimension) ?? 0) + r.count);
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([d]) => d);
  const shown = ranked.length > MAX_LINES ? ranked.slice(0, MAX_LINES - 1) : ranked;
  const rest = ranked.length - shown.length;
  const noun = info.by === 'reason' ? 'reasons' : 'jobs';
  const lines: { name: string; dimensions: Set<string> }[] =
    info.by === null || ranked.length === 0
      ? [{ name: info.by === null ? info.title : `All ${noun}`, dimensions: new Set(ranked) }]
      : shown.map((d) => ({ name: d, dimensions: new Set([d]) }));
  if (rest > 0) lines.push({ name: `${rest} more ${noun}`, dimensions: new Set(ranked.slice(shown.length)) });
  const series: RateSeries[] = lines.map((line) => {
    const values: (number | null)[] = Array.from({ length: grid.buckets }, (_, i) =>
      known(grid.startMs + i * grid.bucketMs) ? 0 : null,
    );
    for (const r of rows) {
      if (!line.dimensions.has(r.dimension)) continue;
      const i = Math.round((r.ms - grid.startMs) / grid.bucketMs);
      if (i >= 0 && i < values.length) values[i] = (values[i] ?? 0) + r.count;
    }
    return { name: line.name, values };
  });
  const all = series.flatMap((s) => s.values).filter((v): v is number => v !== null);
  return {
    id: metric,
    title: info.title,
    unit: grid.bucketMs === MINUTE_MS ? 'per minute' : 'per hour',
    startMs: grid.startMs,
    stepMs: grid.bucketMs,
    series,
    total: all.length ? all.reduce((a, b) => a + b, 0) : null,
    peak: all.length ? Math.max(...all) : null,
  };
}

/**
 * The largest sample of each level in each minute of the range. On tables large enough that
 * a sample takes over 6 s, samples come less than once a minute (lib/workers/metric-sampler.ts):
 * a minute without one shows the last sample's figure while the interval that sample set
 * lasts. Past it, the minute is a gap.
 */
async function readLevels(db: DbOrTx, fromMs: number, nowMs: number): Promise<RateChartData[]> {
  const startMs = floorTo(fromMs, MINUTE_MS) + MINUTE_MS;
  const buckets = Math.round((floorTo(nowMs, MINUTE_MS) - startMs) / MINUTE_MS) + 1;
  const metrics = [...new Set(LEVEL_CHARTS.flatMap((c) => c.lines.map((l) => l.metric)))];
  const { rows } = await db.execute<{ metric: string; label: string; ms: string; value: number }>(sql`
    select metric, label, max(value) as value,
      (extract(epoch from date_bin('1 minute', sampled_at, timestamptz 'epoch')) * 1000)::bigint as ms
    from keel.metric_sample
    where metric = any(${sql.param([...metrics, METRICS.sampleIntervalSeconds])}::text[])
      and sampled_at >= ${msOf(startMs)}
    group by metric, label, ms`);
  // Until when a minute's figures hold: until the next sample was due at the latest, its
  // sample taken at the minute's end, the interval it set and the next sample's own time past it.
  const heldUntil = new Map<number, number>();
  for (const r of rows) {
    if (r.metric !== METRICS.sampleIntervalSeconds) continue;
    heldUntil.set(Number(r.ms), Number(r.ms) + MINUTE_MS + r.value * 1000 * (1 + SAMPLE_TIME_SHARE));
  }
  return LEVEL_CHARTS.map((chart) => {
    const series = chart.lines.map((line) => {
      const values: (number | null)[] = Array.from({ length: buckets }, () => null);
      for (const r of rows) {
        if (r.metric !== line.metric || r.label !== line.label) continue;
        const i = Math.round((Number(r.ms) - startMs) / MINUTE_MS);
        if (i >= 0 && i < buckets) values[i] = Number(r.value);
      }
      let held: { value: number; untilMs: number } | null = null;
      for (let i = 0; i < buckets; i += 1) {
        const minuteMs = startMs + i * MINUTE_MS;
        const value = values[i];
        if (value !== null && value !== undefined) {
          held = { value, untilMs: heldUntil.get(minuteMs) ?? minuteMs + MINUTE_MS };
        } else if (held && minuteMs + MINUTE_MS <= held.untilMs) {
          values[i] = held.value;
        }
      }
      return { name: line.name, values };
    });
    const latest = series.map((s) => s.values.findLast((v) => v !== null) ?? null);
    const all = series.flatMap((s) => s.values).filter((v): v is number => v !== null);
    return {
      id: chart.id,
      title: chart.title,
      unit: 'level',
      startMs,
      stepMs: MINUTE_MS,
      series,
      total: latest.some((v) => v !== null) ? latest.reduce<number>((a, b) => a + (b ?? 0), 0) : null,
      peak: all.length ? Math.max(...all) : null,
    };
  });
}

const BULK_WORDS: Record<string, { noun: string; items: string }> = {
  REPLAY: { noun: 'Bulk replay', items: 'dead letters' },
  DISCARD: { noun: 'Bulk discard', items: 'dead letters' },
  REQUEUE: { noun: 'Bulk requeue', items: 'retries' },
};

/** Takeovers confirmed and bulk jobs started through Keel since `fromMs`, oldest first (the audit log's own index). */
async function readMarkers(db: DbOrTx, fromMs: number): Promise<RateMarker[]> {
  const { rows } = await db.execute<{
    ms: string;
    action: string;
    target_kind: string;
    target_id: string;
    actor_login: string;
    bulk_action: string | null;
    item_count: number | null;
  }>(sql`
    select (extract(epoch from a.at) * 1000)::bigint as ms, a.action, a.target_kind, a.target_id, a.actor_login,
      b.action as bulk_action, b.item_count
    from keel.audit_event a
    left join keel.bulk_replay b on a.action = 'settlement.bulk_replay.start' and b.id::text = a.target_id
    where a.action = any(${sql.param([...RATE_MARKER_ACTIONS])}::text[]) and a.outcome = 'APPLIED'
      and a.at >= ${msOf(fromMs)}
    order by a.at desc, a.id desc
    limit ${MAX_MARKERS}`);
  return rows.reverse().map((r): RateMarker => {
    const atMs = Number(r.ms);
    if (r.action === 'recovery.confirm') {
      const batch = r.target_kind === 'batch_execution';
      return {
        atMs,
        kind: 'takeover',
        label: `Takeover of ${batch ? 'execution' : 'orchestration'} ${r.target_id} confirmed by ${r.actor_login}`,
        href: batch
          ? `/executions/${encodeURIComponent(r.target_id)}`
          : `/orchestrations/${encodeURIComponent(r.target_id)}`,
      };
    }
    const words = BULK_WORDS[r.bulk_action ?? 'REPLAY'] ?? BULK_WORDS.REPLAY!;
    const items = r.item_count === null ? '' : ` of ${r.item_count.toLocaleString('en-US')} ${words.items}`;
    return {
      atMs,
      kind: 'bulk',
      label: `${words.noun} ${r.target_id}${items} started by ${r.actor_login}`,
      href: `/settlements/bulk/${encodeURIComponent(r.target_id)}`,
    };
  });
}
