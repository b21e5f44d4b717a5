import type { RateRange } from '../domain/rates';

/** One line of a chart: a value per bucket, null where nothing was counted or sampled. */
export interface RateSeries {
  name: string;
  values: (number | null)[];
}

export interface RateChartData {
  /** A rate metric (lib/domain/rates.ts), or `levels_queue` / `levels_recovery`. */
  id: string;
  title: string;
  /** What a value is: `per minute`, `per hour`, or `level` (the largest sample in the minute). */
  unit: string;
  /** The first bucket's start and the bucket's length, epoch ms: bucket i starts at start + i * step. */
  startMs: number;
  stepMs: number;
  series: RateSeries[];
  /** Counts: the range's sum; levels: the latest sample. */
  total: number | null;
  /** The largest value of any one series in one bucket. */
  peak: number | null;
}

/** A takeover confirmed or a bulk job started through Keel, from the audit log. */
export interface RateMarker {
  atMs: number;
  kind: 'takeover' | 'bulk';
  label: string;
  href: string | null;
}

export interface RatesPage {
  range: RateRange;
  /** The database's clock when read, epoch ms; the time axis runs from `fromMs` to it. */
  nowMs: number;
  fromMs: number;
  rates: RateChartData[];
  /** The overview's former sparklines, per minute; null for a range longer than samples are kept (2 days). */
  levels: RateChartData[] | null;
  markers: RateMarker[];
  /** The minutes the rollup has counted, [sinceMs, rolledToMs); null before its first pass. */
  counted: { sinceMs: number; rolledToMs: number } | null;
}
