'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { rateChartsQuery } from '@/lib/reads/queries';
import { StatCard } from '../ui/page-header';

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * The last hour's rates as figures, each a link to its chart: the overview stays light (no
 * chart library); the charts, and the levels the overview used to draw, are on /rates.
 */
export function RatesLastHour() {
  const { data } = useQuery(rateChartsQuery.options({ range: '1h' }));
  return (
    <section aria-labelledby="last-hour" className="mt-8">
      <div className="mb-2 flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1">
        <h2 id="last-hour" className="text-sm font-semibold">
          Last hour
        </h2>
        <Link href="/rates" className="text-sm text-sky-800 underline dark:text-sky-300">
          Charts of these and of the queue and recovery levels, over 1 h, 24 h or 7 d
        </Link>
      </div>
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-5">
        {data?.rates.map((chart) => (
          <StatCard
            key={chart.id}
            label={chart.title}
            value={chart.total === null ? '—' : fmt(chart.total)}
            hint={chart.total === null ? 'not counted yet' : `at most ${fmt(chart.peak ?? 0)} in a minute`}
            href={`/rates#${chart.id}`}
          />
        ))}
      </div>
    </section>
  );
}
