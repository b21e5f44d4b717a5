'use client';

import { lazy, Suspense, useEffect, useState } from 'react';
import type { RateChartData, RateMarker } from '@/lib/queries/rates-types';
import type { ChartReadout } from './chart-readout';
import { LINE_COLORS, MARKER_COLORS } from './palette';
import { type TimeZoneView, useTimeZone } from '../ui/time-zone';
import { formatBucket, formatMinute } from './rate-time';

// uPlot and its stylesheet load with the first chart, never with the pages that do not chart.
const RateChartCanvas = lazy(() => import('./rate-chart-canvas'));

const fmt = (n: number) => n.toLocaleString('en-US');

/** A chart with its title, its figures in words (the image's name), a readout of the bucket pointed at, its lines. */
export function RateChart({
  chart,
  markers,
  fromMs,
  nowMs,
}: {
  chart: RateChartData;
  markers: RateMarker[];
  fromMs: number;
  nowMs: number;
}) {
  const tz = useTimeZone();
  // Drawn in the browser only: the server renders the figure and its words, the canvas follows.
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  const [readout, setReadout] = useState<ChartReadout | null>(null);
  const summary = describe(chart, tz);
  const readoutId = `${chart.id}-readout`;
  const placeholder = <div role="img" aria-label={summary} aria-describedby={readoutId} className="h-40 w-full" />;
  const shown = markers.filter((m) => m.atMs >= Math.min(fromMs, chart.startMs) && m.atMs <= nowMs);
  return (
    <figure
      id={chart.id}
      data-chart={chart.id}
      className="min-w-0 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <figcaption className="flex flex-wrap items-baseline justify-between gap-x-3 text-sm">
        <span className="font-medium">{chart.title}</span>
        <span className="text-xs text-zinc-600 dark:text-zinc-400">{headline(chart)}</span>
      </figcaption>
      <div className="mt-2">
        {mounted ? (
          <Suspense fallback={placeholder}>
            <RateChartCanvas
              chart={chart}
              markers={shown}
              fromMs={fromMs}
              nowMs={nowMs}
              timeZone={tz.zone}
              summary={summary}
              describedBy={readoutId}
              onReadout={setReadout}
            />
          </Suspense>
        ) : (
          placeholder
        )}
      </div>
      <p
        id={readoutId}
        data-testid="chart-readout"
        aria-live="polite"
        className="mt-1 min-h-8 text-xs text-zinc-700 tabular-nums dark:text-zinc-300"
      >
        {readout
          ? readoutText(chart, readout, tz)
          : 'Point at the chart, or focus it and press the arrow keys, for values.'}
      </p>
      <ul aria-label={`Lines of ${chart.title}`} className="mt-1 flex flex-wrap gap-x-3 gap-y-1 text-xs">
        {chart.series.map((s, i) => (
          <li key={s.name} className="inline-flex items-center gap-1">
            <span
              aria-hidden="true"
              className={`inline-block h-2 w-3 rounded-sm ${LINE_COLORS[i % LINE_COLORS.length]!.swatch}`}
            />
            <span className="font-mono">{s.name}</span>
          </li>
        ))}
        {shown.length > 0 ? (
          <li className="inline-flex items-center gap-1">
            <span
              aria-hidden="true"
              className={`inline-block h-3 w-0 border-l-2 border-dashed ${MARKER_COLORS.bulk.swatch}`}
            />
            <span
              aria-hidden="true"
              className={`inline-block h-3 w-0 border-l-2 border-dashed ${MARKER_COLORS.takeover.swatch}`}
            />
            <span>
              {shown.length} {shown.length === 1 ? 'marker' : 'markers'}
            </span>
          </li>
        ) : null}
      </ul>
    </figure>
  );
}

const sumOf = (values: (number | null)[]) => values.reduce<number>((a, v) => a + (v ?? 0), 0);
const maxOf = (values: (number | null)[]) => values.reduce<number>((a, v) => Math.max(a, v ?? 0), 0);

function headline(chart: RateChartData): string {
  if (chart.total === null) return chart.unit === 'level' ? 'no samples' : 'not counted yet';
  if (chart.unit === 'level') return `largest ${fmt(chart.peak ?? 0)}`;
  return `${fmt(chart.total)} in all · at most ${fmt(chart.peak ?? 0)} ${chart.unit}`;
}

/** The chart in words, for the image's accessible name. */
function describe(chart: RateChartData, tz: TimeZoneView): string {
  const end = chart.startMs + chart.series[0]!.values.length * chart.stepMs;
  const span = `${formatMinute(chart.startMs, tz)} to ${formatMinute(end, tz)}`;
  if (chart.total === null) return `${chart.title}, ${span}: nothing counted or sampled yet.`;
  const lines = chart.series.map((s) =>
    chart.unit === 'level'
      ? `${s.name} at most ${fmt(maxOf(s.values))}`
      : `${s.name} ${fmt(sumOf(s.values))} in all, at most ${fmt(maxOf(s.values))} ${chart.unit}`,
  );
  return `${chart.title}, ${chart.unit === 'level' ? 'levels' : chart.unit}, ${span}: ${lines.join('; ')}.`;
}

function readoutText(chart: RateChartData, readout: ChartReadout, tz: TimeZoneView): string {
  const values = chart.series
    .map((s, i) => {
      const v = readout.values[i];
      if (v !== null && v !== undefined) return `${s.name} ${fmt(v)}`;
      return `${s.name} ${chart.unit === 'level' ? 'no sample' : 'not counted'}`;
    })
    .join(', ');
  const marks = readout.markers.length ? ` · ${readout.markers.join(' · ')}` : '';
  return `${formatBucket(readout.bucketMs, chart.stepMs, tz)}: ${values}${marks}`;
}
