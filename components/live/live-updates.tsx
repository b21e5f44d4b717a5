'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { isLiveTopic, LIVE_TOPICS, type LiveTopic } from '@/lib/domain/live-topics';
import { TOPIC_QUERIES } from './topic-queries';

const POLL_FALLBACK_MS = 5_000;
/** At most one refetch round per second per tab, however fast the runtime writes. */
const COALESCE_MS = 1_000;
const HOLD_RETRY_MS = 500;

/** Never change what an open confirmation shows: what it says will change must hold still. */
const dialogOpen = () => Boolean(document.querySelector('dialog[open], [role="alertdialog"], [role="dialog"][data-state="open"]'));

/**
 * Keeps every open page current through TanStack Query alone: a server-sent change
 * event invalidates the queries of its topic (coalesced to once a second), and never
 * re-renders server components. When the stream keeps failing, the page polls instead.
 */
export function LiveUpdates() {
  const queryClient = useQueryClient();
  const [mode, setMode] = useState<'connecting' | 'live' | 'polling'>('connecting');

  useEffect(() => {
    const pending = new Set<LiveTopic>();
    let flushTimer: ReturnType<typeof setTimeout> | null = null;
    let pollTimer: ReturnType<typeof setInterval> | null = null;
    let lastFlush = 0;
    let failures = 0;

    const flush = () => {
      flushTimer = null;
      if (dialogOpen()) {
        flushTimer = setTimeout(flush, HOLD_RETRY_MS);
        return;
      }
      lastFlush = Date.now();
      const topics = [...pending];
      pending.clear();
      const keys = new Set<string>();
      for (const topic of topics) {
        for (const queryKey of TOPIC_QUERIES[topic]) {
          // Topics share keys (the overview): each is invalidated once per round.
          const id = JSON.stringify(queryKey);
          if (keys.has(id)) continue;
          keys.add(id);
          void queryClient.invalidateQueries({ queryKey });
        }
      }
    };
    const schedule = (topics: readonly LiveTopic[]) => {
      for (const topic of topics) pending.add(topic);
      if (flushTimer) return;
      flushTimer = setTimeout(flush, Math.max(0, lastFlush + COALESCE_MS - Date.now()));
    };

    const source = new EventSource('/api/events');
    source.addEventListener('open', () => {
      failures = 0;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = null;
      setMode('live');
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
    source.addEventListener('error', () => {
      failures += 1;
      if (failures >= 3 && !pollTimer) {
        setMode('polling');
        pollTimer = setInterval(() => schedule(LIVE_TOPICS), POLL_FALLBACK_MS);
      }
    });
    return () => {
      source.close();
      if (flushTimer) clearTimeout(flushTimer);
      if (pollTimer) clearInterval(pollTimer);
    };
  }, [queryClient]);

  const label = { connecting: 'Connecting…', live: 'Live', polling: 'Polling' }[mode];
  return (
    <span role="status" data-testid="live-status" data-mode={mode} className="inline-flex items-center gap-1.5 text-xs text-zinc-600 dark:text-zinc-400">
      <span aria-hidden className={`inline-block h-2 w-2 rounded-full ${mode === 'live' ? 'bg-emerald-500' : mode === 'polling' ? 'bg-amber-500' : 'bg-zinc-400'}`} />
      {label}
    </span>
  );
}
