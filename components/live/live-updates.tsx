'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { isLiveTopic, LIVE_TOPICS, type LiveTopic } from '@/lib/domain/live-topics';
import type { NeedsYouView } from '@/lib/domain/needs-you';
import { asLiveRound, setLivePass } from '@/lib/http/read-json';
import { needsYouQuery } from '@/lib/reads/queries';
import {
  holdReason,
  REFRESH_INTERVAL_MS,
  REFRESH_LABELS,
  REFRESH_MODES,
  storedRefreshMode,
  storeRefreshMode,
  type RefreshMode,
} from './refresh-setting';
import { TOPIC_QUERIES } from './topic-queries';

const POLL_FALLBACK_MS = 5_000;
/** At most one refetch round per second per tab, however fast the runtime writes. */
const COALESCE_MS = 1_000;
const HOLD_RETRY_MS = 500;

/**
 * Keeps every open page current through TanStack Query alone: a server-sent change
 * event invalidates the queries of its topic (coalesced to once a second, or applied
 * every 5 or 30 s, or not at all while paused), and never re-renders server
 * components. While rows must hold still (an open dialog, a focused text field) the
 * changes wait behind an "Updates waiting" button; a list being read holds its own rows
 * (components/ui/calm-rows.ts). What needs the reader comes whole in the stream
 * (`needs-you`), read once by the server for every tab, and is set without a read.
 */
export function LiveUpdates({ userId }: { userId: string }) {
  const queryClient = useQueryClient();
  // Server-rendered as live; the remembered choice applies once mounted.
  const [refresh, setRefresh] = useState<RefreshMode>('live');
  const [stream, setStream] = useState<'connecting' | 'live' | 'polling'>('connecting');
  const [waiting, setWaiting] = useState(false);
  // No stream until the remembered choice is read: a paused tab must not connect even once.
  const [ready, setReady] = useState(false);
  const applyNow = useRef<() => void>(() => {});

  useEffect(() => {
    const stored = storedRefreshMode(userId);
    if (stored) setRefresh(stored);
    setReady(true);
  }, [userId]);

  useEffect(() => {
    // Paused means no request at all: no stream, and no refetch when the window regains focus.
    const paused = refresh === 'paused';
    queryClient.setDefaultOptions({
      queries: {
        ...queryClient.getDefaultOptions().queries,
        refetchOnWindowFocus: !paused,
        refetchOnReconnect: !paused,
      },
    });
    if (paused || !ready) return;

    const pending = new Set<LiveTopic>();
    let needsYou: NeedsYouView | null = null;
    const showNeedsYou = () => {
      if (needsYou) queryClient.setQueryData(needsYouQuery.key(), needsYou);
      needsYou = null;
    };
    let flushTimer: ReturnType<typeof setTimeout> | null = null;
    let pollTimer: ReturnType<typeof setInterval> | null = null;
    let lastFlush = 0;
    let failures = 0;

    const invalidate = () => {
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = null;
      lastFlush = Date.now();
      const keys = new Set<string>();
      showNeedsYou();
      asLiveRound(() => {
        for (const topic of pending) {
          for (const queryKey of TOPIC_QUERIES[topic]) {
            // Topics share keys (the overview): each is invalidated once per round.
            const id = JSON.stringify(queryKey);
            if (keys.has(id)) continue;
            keys.add(id);
            void queryClient.invalidateQueries({ queryKey });
          }
        }
      });
      pending.clear();
      setWaiting(false);
    };
    const flush = () => {
      flushTimer = null;
      if (pending.size === 0) return;
      if (holdReason()) {
        setWaiting(true);
        flushTimer = setTimeout(flush, HOLD_RETRY_MS);
        return;
      }
      invalidate();
    };
    applyNow.current = invalidate;
    const schedule = (topics: readonly LiveTopic[]) => {
      for (const topic of topics) pending.add(topic);
      if (flushTimer || refresh !== 'live') return;
      flushTimer = setTimeout(flush, Math.max(0, lastFlush + COALESCE_MS - Date.now()));
    };
    const interval = REFRESH_INTERVAL_MS[refresh];
    const every = interval
      ? setInterval(() => {
          showNeedsYou();
          if (!flushTimer) flush();
        }, interval)
      : null;

    const source = new EventSource('/api/events');
    source.addEventListener('open', () => {
      failures = 0;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = null;
      setStream('live');
    });
    source.addEventListener('change', (event) => {
      let topic: unknown = null;
      try {
        topic = (JSON.parse((event as MessageEvent<string>).data) as { topic?: unknown }).topic;
      } catch {
        // A garbled event names no topic: it refreshes nothing.
      }
      if (isLiveTopic(topic)) schedule([topic]);
    });
    source.addEventListener('pass', (event) => {
      try {
        setLivePass(String((JSON.parse((event as MessageEvent<string>).data) as { pass?: unknown }).pass ?? ''));
      } catch {
        setLivePass('');
      }
    });
    source.addEventListener('needs-you', (event) => {
      try {
        needsYou = JSON.parse((event as MessageEvent<string>).data) as NeedsYouView;
      } catch {
        return; // a garbled event changes nothing
      }
      // Counts, not rows: live, they show at once; every 5 or 30 s, with the rest.
      if (refresh === 'live') showNeedsYou();
    });
    // The server closes the stream when the session ends or the role changes: stop
    // reconnecting, and show the page for who the user is now (sign-in, once signed out).
    source.addEventListener('ended', (event) => {
      source.close();
      let reason: unknown = null;
      try {
        reason = (JSON.parse((event as MessageEvent<string>).data) as { reason?: unknown }).reason;
      } catch {}
      if (reason === 'ROLE_CHANGED') window.location.reload();
      else
        window.location.assign(
          `/sign-in?${new URLSearchParams({ next: window.location.pathname + window.location.search })}`,
        );
    });
    source.addEventListener('error', () => {
      failures += 1;
      setLivePass(''); // the stream is down: its pass ended with it
      if (failures >= 3 && !pollTimer) {
        setStream('polling');
        pollTimer = setInterval(() => {
          schedule(LIVE_TOPICS);
          void queryClient.invalidateQueries({ queryKey: needsYouQuery.prefix });
        }, POLL_FALLBACK_MS);
      }
    });
    return () => {
      source.close();
      setLivePass('');
      applyNow.current = () => {};
      if (flushTimer) clearTimeout(flushTimer);
      if (pollTimer) clearInterval(pollTimer);
      if (every) clearInterval(every);
      setWaiting(false);
    };
  }, [queryClient, refresh, ready]);

  const mode = refresh === 'paused' ? 'paused' : stream;
  const label = { connecting: 'Connecting…', live: 'Live', polling: 'Polling', paused: 'Paused' }[mode];
  return (
    <span className="inline-flex items-center gap-2">
      {waiting ? (
        <button
          type="button"
          onClick={() => applyNow.current()}
          className={
            'rounded-md border border-sky-700 bg-sky-50 px-2 py-0.5 text-xs font-medium text-sky-900 ' +
            'dark:border-sky-300 dark:bg-sky-950 dark:text-sky-100'
          }
        >
          Updates waiting
        </button>
      ) : null}
      <span
        role="status"
        data-testid="live-status"
        data-mode={mode}
        className="inline-flex items-center gap-1.5 text-xs text-zinc-600 dark:text-zinc-400"
      >
        <span
          aria-hidden
          className={
            `inline-block h-2 w-2 rounded-full ` +
            `${mode === 'live' ? 'bg-emerald-500' : mode === 'polling' ? 'bg-amber-500' : 'bg-zinc-400'}`
          }
        />
        {label}
      </span>
      <label className="inline-flex items-center gap-1 text-xs text-zinc-700 dark:text-zinc-300">
        <span className="sr-only sm:not-sr-only">Refresh</span>
        <select
          aria-label="Refresh"
          value={refresh}
          onChange={(event) => {
            const next = REFRESH_MODES.find((m) => m === event.target.value) ?? 'live';
            storeRefreshMode(userId, next);
            setRefresh(next);
          }}
          className={
            'rounded-md border border-zinc-300 bg-white px-1 py-0.5 ' + 'text-xs dark:border-zinc-700 dark:bg-zinc-950'
          }
        >
          {REFRESH_MODES.map((m) => (
            <option key={m} value={m}>
              {REFRESH_LABELS[m]}
            </option>
          ))}
        </select>
      </label>
    </span>
  );
}
