import type { Series } from '@/lib/queries/metric-series-types';

const WIDTH = 280;
const HEIGHT = 64;

/** A small line chart of one series; the accessible name carries the latest, lowest and highest value. */
export function Sparkline({ series }: { series: Series }) {
  const values = series.points.map((p) => p.value);
  const latest = values[values.length - 1];
  const min = values.length ? Math.min(...values) : 0;
  const max = values.length ? Math.max(...values) : 0;
  const span = max - min || 1;
  const path = series.points
    .map((p, i) => {
      const x = series.points.length > 1 ? (i / (series.points.length - 1)) * WIDTH : WIDTH / 2;
      const y = HEIGHT - 4 - ((p.value - min) / span) * (HEIGHT - 8);
      return `${i === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
  const summary = values.length
    ? `${series.name}: now ${latest}, lowest ${min}, highest ${max} over the last hour (${values.length} samples)`
    : `${series.name}: no samples in the last hour`;
  return (
    <figure className="rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900">
      <figcaption className="flex items-baseline justify-between text-xs font-medium text-zinc-600 dark:text-zinc-400">
        <span>{series.name}</span>
        <span className="text-base font-semibold tabular-nums text-zinc-900 dark:text-zinc-100">{latest ?? '—'}</span>
      </figcaption>
      <svg
        role="img"
        aria-label={summary}
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        className="mt-2 h-16 w-full text-sky-700 dark:text-sky-400"
        preserveAspectRatio="none"
      >
        {values.length ? (
          <path d={path} fill="none" stroke="currentColor" strokeWidth="2" vectorEffect="non-scaling-stroke" />
        ) : null}
      </svg>
    </figure>
  );
}
