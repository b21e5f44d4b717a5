'use client';

import { type KeyboardEvent, useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import type { RateChartData, RateMarker } from '@/lib/queries/rates-types';
import { LINE_COLORS, MARKER_COLORS } from './palette';
import type { ChartReadout } from './chart-readout';

const HEIGHT = 160;
/** How near (CSS px) the pointer must come to a marker's line for its label to show. */
const MARKER_REACH_PX = 8;
// Whole numbers on the value axis: these are counts.
const COUNT_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];

const FOCUS =
  'h-40 w-full rounded focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-700';
// uPlot's own layout rules as utilities: its stylesheet would come in a lazy chunk, after the chart it lays out.
const LAYOUT = [
  '[&_.u-wrap]:relative [&_.u-wrap]:select-none [&_.u-over]:absolute [&_.u-under]:absolute',
  '[&_.u-under]:overflow-hidden [&_canvas]:relative [&_canvas]:block [&_canvas]:h-full [&_canvas]:w-full',
  '[&_.u-axis]:absolute [&_.u-select]:absolute [&_.u-select]:pointer-events-none [&_.u-off]:hidden',
  '[&_.u-cursor-x]:pointer-events-none [&_.u-cursor-x]:absolute [&_.u-cursor-x]:top-0 [&_.u-cursor-x]:left-0',
  '[&_.u-cursor-x]:h-full [&_.u-cursor-x]:border-r [&_.u-cursor-x]:border-dashed [&_.u-cursor-x]:border-zinc-500',
  '[&_.u-cursor-pt]:pointer-events-none [&_.u-cursor-pt]:absolute [&_.u-cursor-pt]:top-0 [&_.u-cursor-pt]:left-0',
  '[&_.u-cursor-pt]:rounded-full',
].join(' ');
const BOX = `${FOCUS} ${LAYOUT}`;

const isDark = () => document.documentElement.classList.contains('dark');

export interface RateChartCanvasProps {
  chart: RateChartData;
  markers: RateMarker[];
  fromMs: number;
  nowMs: number;
  timeZone: string;
  summary: string;
  describedBy: string;
  onReadout: (readout: ChartReadout | null) => void;
}

/**
 * One chart drawn with uPlot, loaded only by the pages that chart (components/rates/rate-chart.tsx
 * imports this file lazily). The pointer, or the arrow keys once focused, picks a bucket; its values
 * and any marker within reach go to `onReadout`. Markers are dashed lines laid over the canvas.
 */
export default function RateChartCanvas(props: RateChartCanvasProps) {
  const { chart, markers, fromMs, nowMs, timeZone, summary, describedBy, onReadout } = props;
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  // What the hooks read: the latest props, without rebuilding the chart on every refetch.
  const latest = useRef({ chart, markers, fromMs, nowMs, onReadout });
  latest.current = { chart, markers, fromMs, nowMs, onReadout };
  const [dark, setDark] = useState(isDark);
  const lines = chart.series.map((s) => s.name).join('\n');

  useEffect(() => {
    const watch = new MutationObserver(() => setDark(isDark()));
    watch.observe(document.documentElement, { attributes: true, attributeFilter: ['class'] });
    return () => watch.disconnect();
  }, []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuilt only when its lines, unit, zone or theme change
  useEffect(() => {
    const target = box.current;
    if (!target) return;
    const ink = dark ? '#d4d4d8' : '#3f3f46';
    const grid = dark ? '#3f3f46' : '#e4e4e7';
    const counts = chart.unit !== 'level';
    const u = new uPlot(
      {
        width: Math.max(target.clientWidth, 200),
        height: HEIGHT,
        // The axis in the user's zone (components/ui/time-zone.tsx), as every other time on the page.
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timeZone),
        legend: { show: false },
        cursor: { y: false, drag: { x: false, y: false, setScale: false }, points: { size: 7 } },
        scales: {
          x: {
            time: true,
            range: () => {
              const { chart: c, fromMs: from, nowMs: now } = latest.current;
              // To the end of the bucket running now, so a marker of a moment ago is not on the edge.
              return [Math.min(from, c.startMs) / 1000, (Math.floor(now / c.stepMs) + 1) * (c.stepMs / 1000)];
            },
          },
          y: { range: (_u, _min, max) => [0, max > 0 ? Math.ceil(max * 1.15) : 1] },
        },
        axes: [
          { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } },
          {
            stroke: ink,
            grid: { stroke: grid, width: 1 },
            ticks: { stroke: grid, width: 1 },
            size: 52,
            ...(counts ? { incrs: COUNT_STEPS } : {}),
            values: (_u, splits) => splits.map((v) => v.toLocaleString('en-US')),
          },
        ],
        series: [
          {},
          ...chart.series.map((s, i) => {
            const color = LINE_COLORS[i % LINE_COLORS.length]!;
            return {
              label: s.name,
              stroke: dark ? color.dark : color.light,
              width: 1.5,
              // A count holds for its whole bucket; a level is a sample.
              ...(counts ? { paths: uPlot.paths.stepped?.({ align: 1 }) } : {}),
              points: { show: false },
            };
          }),
        ],
        hooks: {
          draw: [(self) => placeMarkers(self, latest.current.markers, dark)],
          setCursor: [(self) => report(self)],
        },
      },
      dataOf(chart),
      target,
    );
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(target.clientWidth, 200), height: HEIGHT }));
    resize.observe(target);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [lines, chart.unit, timeZone, dark]);

  // A refetch (live updates, a new minute) replaces the data in place.
  useEffect(() => {
    plot.current?.setData(dataOf(chart));
  }, [chart]);

  function report(u: uPlot) {
    const { chart: c, markers: ms, onReadout: send } = latest.current;
    const idx = u.cursor.idx;
    const left = u.cursor.left ?? -1;
    if (idx == null || left < 0) {
      send(null);
      return;
    }
    const near = ms.filter((m) => Math.abs(u.valToPos(m.atMs / 1000, 'x') - left) <= MARKER_REACH_PX);
    send({
      bucketMs: c.startMs + idx * c.stepMs,
      values: c.series.map((s) => s.values[idx] ?? null),
      markers: near.map((m) => m.label),
    });
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const u = plot.current;
    if (!u) return;
    const last = (u.data[0]?.length ?? 1) - 1;
    const current = u.cursor.idx ?? last;
    const next =
      event.key === 'ArrowLeft'
        ? Math.max(0, current - 1)
        : event.key === 'ArrowRight'
          ? Math.min(last, current + 1)
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : null;
    if (next === null) return;
    event.preventDefault();
    const x = u.data[0]?.[next];
    if (x !== undefined) u.setCursor({ left: u.valToPos(x, 'x'), top: HEIGHT / 3 });
  }

  return (
    <div
      ref={box}
      role="img"
      aria-label={summary}
      aria-describedby={describedBy}
      tabIndex={0}
      onKeyDown={onKeyDown}
      onBlur={() => {
        plot.current?.setCursor({ left: -10, top: -10 });
        onReadout(null);
      }}
      className={BOX}
    />
  );
}

function dataOf(chart: RateChartData): uPlot.AlignedData {
  const length = chart.series[0]?.values.length ?? 0;
  const xs = Array.from({ length }, (_, i) => (chart.startMs + i * chart.stepMs) / 1000);
  return [xs, ...chart.series.map((s) => s.values)];
}

/** Lays one dashed line per marker in range over the plot (kept in step with each redraw). */
function placeMarkers(u: uPlot, markers: RateMarker[], dark: boolean) {
  const layer = u.over;
  for (const old of layer.querySelectorAll('[data-testid="chart-marker"]')) old.remove();
  const [min, max] = [u.scales.x?.min ?? 0, u.scales.x?.max ?? 0];
  for (const m of markers) {
    const at = m.atMs / 1000;
    if (at < min || at > max) continue;
    const line = document.createElement('div');
    line.dataset.testid = 'chart-marker';
    line.dataset.kind = m.kind;
    line.dataset.label = m.label;
    line.setAttribute('aria-hidden', 'true');
    const color = MARKER_COLORS[m.kind];
    // The pointer passes through to the plot (uPlot reads only its own events), whose cursor names the marker.
    const left = u.valToPos(at, 'x') - 4;
    line.style.cssText = `position:absolute;top:0;bottom:0;left:${left}px;width:9px;pointer-events:none;`;
    const stroke = document.createElement('div');
    stroke.style.cssText = `margin-left:4px;height:100%;border-left:2px dashed ${dark ? color.dark : color.light};`;
    line.appendChild(stroke);
    layer.appendChild(line);
  }
}
