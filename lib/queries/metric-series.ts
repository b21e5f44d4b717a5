import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import type { Series } from './metric-series-types';

/** The overview charts: each sampled series over the last hour, oldest first. */
export async function readLastHour(
  db: DbOrTx,
  metrics: { metric: string; label?: string; name: string }[],
): Promise<Series[]> {
  const result = await db.execute<{ metric: string; label: string; sampled_at: string; value: number }>(sql`
    select metric, label, sampled_at, value from keel.metric_sample
    where sampled_at > clock_timestamp() - interval '1 hour'
      and metric = any(${sql.param(metrics.map((m) => m.metric))}::text[])
    order by sampled_at`);
  return metrics.map((m) => ({
    name: m.name,
    points: result.rows
      .filter((r) => r.metric === m.metric && (m.label === undefined || r.label === m.label))
      .map((r) => ({ at: new Date(r.sampled_at).toISOString(), value: Number(r.value) })),
  }));
}
