/**
 * The rates Keel rolls up per minute and per hour (`keel.rate_minute`, `keel.rate_hour`) and
 * charts on /rates (docs/console.md#rates). Pure and zod-free: the browser reads the labels.
 * A dimension is a reason code (`other` outside the vocabulary) or a job name, never a receipt
 * id, retry key or token.
 */
export const RATE_METRICS = [
  'settlements_finished',
  'settlements_retried',
  'settlements_dead_lettered',
  'executions_started',
  'executions_failed',
] as const;
export type RateMetric = (typeof RATE_METRICS)[number];

/** What each metric counts, and what its dimension is (none, a reason code, a job name). */
export const RATE_METRIC_INFO: Record<RateMetric, { title: string; by: 'reason' | 'job' | null; counts: string }> = {
  settlements_finished: {
    title: 'Settlements finished',
    by: null,
    counts: 'settlements accepted or skipped (their `finished` history event)',
  },
  settlements_retried: {
    title: 'Settlements retried',
    by: null,
    counts: 'retries scheduled after a retryable failure',
  },
  settlements_dead_lettered: { title: 'Settlements dead-lettered', by: 'reason', counts: 'dead letters recorded' },
  executions_started: { title: 'Executions started', by: 'job', counts: 'executions by their start time' },
  executions_failed: { title: 'Executions failed', by: 'job', counts: 'executions that ended FAILED' },
};

export const RATE_RANGES = ['1h', '24h', '7d'] as const;
export type RateRange = (typeof RATE_RANGES)[number];

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** How far back a range reaches and the bucket it is drawn in: minutes up to a day, hours beyond. */
export const RATE_RANGE_SPANS: Record<RateRange, { spanMs: number; bucketMs: number; label: string }> = {
  '1h': { spanMs: HOUR_MS, bucketMs: MINUTE_MS, label: '1 h' },
  '24h': { spanMs: 24 * HOUR_MS, bucketMs: MINUTE_MS, label: '24 h' },
  '7d': { spanMs: 7 * 24 * HOUR_MS, bucketMs: HOUR_MS, label: '7 d' },
};

export const isRateRange = (value: unknown): value is RateRange =>
  typeof value === 'string' && (RATE_RANGES as readonly string[]).includes(value);

/** Minute rows are kept 48 h (the 1 h and 24 h charts), hour rows 30 d (the 7 d chart). */
export const RATE_MINUTE_RETENTION_MS = 48 * HOUR_MS;
export const RATE_HOUR_RETENTION_MS = 30 * 24 * HOUR_MS;

/** The audit actions drawn as markers: a confirmed takeover, and a bulk job started. */
export const RATE_MARKER_ACTIONS = ['recovery.confirm', 'settlement.bulk_replay.start'] as const;
