'use client';

import { useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
import { queryKeys } from '@/lib/query-keys';

const TOPIC_KEYS: Record<string, QueryKey[]> = {
  'oxide_batch.ob_job_execution': [queryKeys.executions.all, queryKeys.retryKeys.all, queryKeys.overview()],
  'keel.recovery_proposal': [queryKeys.proposals.all, queryKeys.executions.all, queryKeys.overview()],
  'keel.durable_checkpoint': [queryKeys.orchestrations.all],
  'keel.audit_event': [queryKeys.audit.all],
  'keel.user': [queryKeys.users.all],
  'keel.webhook_delivery': [queryKeys.webhooks.all],
  'keel.bulk_replay': [queryKeys.settlements.all],
  'keel.settlement_replay': [queryKeys.settlements.all],
  'keel.metric_sample': [queryKeys.overview()],
  'settle.attempts': [queryKeys.settlements.all, queryKeys.overview()],
  'settle.dead_letters': [queryKeys.settlements.all, queryKeys.overview()],
};
const POLL_FALLBACK_MS = 5_000;

/**
 * Keeps every open page current: server-sent change events invalidate the affected
 * queries and re-render server components; when the stream keeps failing, the page
 * polls instead.
 */
export function LiveUpdates() {
  const router = useRouter();
  const queryClient = useQueryClient();
  const [mode, setMode] = useState<'connecting' | 'live' | 'polling'>('connecting');

  useEffect(() => {
    let refreshTimer: ReturnType<typeof setTimeout> | null = null;
    let pollTimer: ReturnType<typeof setInterval> | null = null;
    let failures = 0;
    const refresh = (topic?: string) => {
      for (const key of (topic && TOPIC_KEYS[topic]) || []) void queryClient.invalidateQueries({ queryKey: key });
      if (refreshTimer) return;
      const refreshWhenNoDialog = () => {
        // Never re-render beneath an open confirmation: what it says will change must hold still.
        if (document.querySelector('dialog[open], [role="alertdialog"], [role="dialog"][data-state="open"]')) {
          refreshTimer = setTimeout(refreshWhenNoDialog, 500);
          return;
        }
        refreshTimer = null;
        router.refresh();
      };
      refreshTimer = setTimeout(refreshWhenNoDialog, 100);
    };
    const source = new EventSource('/api/events');
    source.addEventListener('open', () => {
      failures = 0;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = null;
      setMode('live');
    });
    source.addEventListener('change', (event) => {
      try {
        refresh((JSON.parse((event as MessageEvent<string>).data) as { topic?: string }).topic);
      } catch {
        refresh();
      }
    });
    source.addEventListener('error', () => {
      failures += 1;
      if (failures >= 3 && !pollTimer) {
        setMode('polling');
        pollTimer = setInterval(() => {
          void queryClient.invalidateQueries();
          router.refresh();
        }, POLL_FALLBACK_MS);
      }
    });
    return () => {
      source.close();
      if (refreshTimer) clearTimeout(refreshTimer);
      if (pollTimer) clearInterval(pollTimer);
    };
  }, [queryClient, router]);

  const label = { connecting: 'Connecting…', live: 'Live', polling: 'Polling' }[mode];
  return (
    <span role="status" data-testid="live-status" data-mode={mode} className="inline-flex items-center gap-1.5 text-xs text-zinc-600 dark:text-zinc-400">
      <span aria-hidden className={`inline-block h-2 w-2 rounded-full ${mode === 'live' ? 'bg-emerald-500' : mode === 'polling' ? 'bg-amber-500' : 'bg-zinc-400'}`} />
      {label}
    </span>
  );
}
