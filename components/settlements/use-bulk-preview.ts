'use client';

import { useRouter } from 'next/navigation';
import { useRef, useState } from 'react';
import { startBulkReplayAction } from '@/app/actions/settlements';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction, type Result } from '../actions/use-server-action';
import { bulkReplayHref } from './links';

const INVALIDATE = [queryKeys.settlements.all, queryKeys.audit.all];

/**
 * The two steps every bulk job dialog takes (replay, discard, requeue): a note, a preview
 * that freezes the job's items (once per dialog: a preview is a job of its own, so a
 * second click must not make another), then start, which opens the job's page.
 */
export function useBulkPreview<I, P extends { jobId: number; itemCount: number }>(
  preview: (input: I) => Promise<Result<P>>,
  words: {
    previewed: (value: P) => string;
    started: (value: { jobId: number; itemCount: number }) => string;
    onPreviewed?: () => void;
  },
) {
  const router = useRouter();
  const [note, setNote] = useState('');
  const [previewed, setPreviewed] = useState<P | null>(null);
  const previewing = useRef(false);
  const previewAction = useServerAction(preview, {
    success: words.previewed,
    invalidate: INVALIDATE,
    onSuccess: (value) => {
      setPreviewed(value);
      words.onPreviewed?.();
    },
    // The dialogs show a refused note under the note field.
    shownInline: (refusal) => Boolean(refusal.fieldErrors?.note),
  });
  const start = useServerAction(startBulkReplayAction, {
    success: words.started,
    invalidate: INVALIDATE,
    onSuccess: (value) => router.push(bulkReplayHref(value.jobId)),
  });
  const requestPreview = async (input: I) => {
    if (previewing.current) return;
    previewing.current = true;
    const result = await previewAction.execute(input);
    if (!result.ok) previewing.current = false;
  };
  return { note, setNote, preview: previewed, previewAction, requestPreview, start };
}
