'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { RATE_RANGE_SPANS, RATE_RANGES, type RateRange } from '@/lib/domain/rates';
import type { RateChartData, RatesPage } from '@/lib/queries/rates-types';
import { rateChartsQuery } from '@/lib/reads/queries';
import { ratesSearch } from '@/lib/url-state/rates';
import { PageHeader } from '../ui/page-header';
import { ErrorState } from '../ui/states';
import { type TimeZoneView, useTimeZone } from '../ui/time-zone';
import { RateChart } from './rate-chart';
import { formatMinute } from './rate-time';

const TAB = [
  'rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium hover:bg-zinc-100 dark:border-zinc-700',
  'dark:hover:bg-zinc-800 aria-[current=page]:border-zinc-900 aria-[current=page]:bg-zinc-900',
  'aria-[current=page]:text-white dark:aria-[current=page]:border-zinc-100 dark:aria-[current=page]:bg-zinc-100',
  'dark:aria-[current=page]:text-zinc-900',
].join(' ');
const LINK = 'text-sky-800 underline dark:text-sky-300';
const NOTE = 'text-sm text-zinc-600 dark:text-zinc-400';

/** The rates, the sampled levels and the takeovers and bulk jobs of one range; `hrefs` come from the server. */
export function RatesView({ hrefs }: { hrefs: Record<RateRange, string> }) {
  const [{ range }] = useQueryStates(ratesSearch);
  const { data, error } = useQuery({ ...rateChartsQuery.options({ range }), placeholderData: keepPreviousData });
  const tz = useTimeZone();
  return (
    <>
      <PageHeader
        title="Rates"
        description={`Counted per ${range === '7d' ? 'hour' : 'minute'}; times in ${tz.label(data?.nowMs ?? 0)}.`}
      >
        <nav aria-label="Range" className="flex gap-2">
          {RATE_RANGES.map((r) => (
            <Link key={r} href={hrefs[r]} aria-current={r === range ? 'page' : undefined} className={TAB}>
              {RATE_RANGE_SPANS[r].label}
            </Link>
          ))}
        </nav>
      </PageHeader>
      {error ? <ErrorState detail={error.message} /> : null}
      {data ? <RatesCharts data={data} tz={tz} /> : null}
    </>
  );
}

function RatesCharts({ data, tz }: { data: RatesPage; tz: TimeZoneView }) {
  const chart = (c: RateChartData) => (
    <RateChart key={c.id} chart={c} markers={data.markers} fromMs={data.fromMs} nowMs={data.nowMs} />
  );
  const byId = (id: string) => data.rates.filter((c) => c.id === id).map(chart);
  return (
    <>
      <CountedNote data={data} tz={tz} />
      <section aria-labelledby="settlement-rates" className="mt-4">
        <h2 id="settlement-rates" className="mb-2 text-sm font-semibold">
          Settlements
        </h2>
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-3">
          {byId('settlements_finished')}
          {byId('settlements_retried')}
          {byId('settlements_dead_lettered')}
        </div>
      </section>
      <section aria-labelledby="execution-rates" className="mt-8">
        <h2 id="execution-rates" className="mb-2 text-sm font-semibold">
          Executions
        </h2>
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
          {byId('executions_started')}
          {byId('executions_failed')}
        </div>
      </section>
      <section aria-labelledby="levels" className="mt-8">
        <h2 id="levels" className="mb-2 text-sm font-semibold">
          Levels (the largest of each minute's samples, taken every 15 s)
        </h2>
        {data.levels ? (
          <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">{data.levels.map(chart)}</div>
        ) : (
          <p className={NOTE}>Samples are kept for 2 days: the levels are drawn for 1 h and 24 h.</p>
        )}
      </section>
      <section aria-labelledby="markers" className="mt-8">
        <h2 id="markers" className="mb-2 text-sm font-semibold">
          Takeovers and bulk jobs (the dashed lines)
        </h2>
        {data.markers.length === 0 ? (
          <p className={NOTE}>None confirmed or started through Keel in this range.</p>
        ) : (
          <ol className="space-y-1 text-sm">
            {data.markers.map((m) => (
              <li key={`${m.kind}-${m.atMs}-${m.label}`} data-testid="rate-marker">
                <time dateTime={new Date(m.atMs).toISOString()} className="tabular-nums">
                  {tz.format(m.atMs)}
                </time>{' '}
                {m.href ? (
                  <Link href={m.href} className={LINK}>
                    {m.label}
                  </Link>
                ) : (
                  m.label
                )}
              </li>
            ))}
          </ol>
        )}
      </section>
    </>
  );
}

/** Says where the rollup's counting begins or lags, so an empty stretch is not read as nothing happening. */
function CountedNote({ data, tz }: { data: RatesPage; tz: TimeZoneView }) {
  if (!data.counted) return <p className={NOTE}>The rollup has not counted a minute yet; the charts fill in soon.</p>;
  const notes: string[] = [];
  if (data.counted.sinceMs > data.fromMs) notes.push(`Counted since ${formatMinute(data.counted.sinceMs, tz)}.`);
  if (data.nowMs - data.counted.rolledToMs > 3 * 60_000)
    notes.push(`Counted up to ${formatMinute(data.counted.rolledToMs, tz)}; the rollup is catching up.`);
  return notes.length ? <p className={NOTE}>{notes.join(' ')}</p> : null;
}
