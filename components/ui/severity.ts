import type { NeedsYouSeverity } from '@/lib/domain/needs-you';

/** A needs-you severity's badge colours, light and dark (docs/console.md#needs-you). */
export const SEVERITY_BADGE: Record<NeedsYouSeverity, string> = {
  critical: 'bg-red-700 text-white dark:bg-red-400 dark:text-red-950',
  warning: 'bg-amber-200 text-amber-950 dark:bg-amber-300 dark:text-amber-950',
};
