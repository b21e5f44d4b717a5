/** How often a tab applies live changes; chosen in the header and remembered per user in this browser. */
export const REFRESH_MODES = ['live', '5s', '30s', 'paused'] as const;
export type RefreshMode = (typeof REFRESH_MODES)[number];

export const REFRESH_LABELS: Record<RefreshMode, string> = {
  live: 'Live',
  '5s': 'Every 5 s',
  '30s': 'Every 30 s',
  paused: 'Paused',
};
/** The interval at which a non-live mode applies what changed meanwhile. */
export const REFRESH_INTERVAL_MS: Partial<Record<RefreshMode, number>> = { '5s': 5_000, '30s': 30_000 };

const storageKey = (userId: string) => `keel.refresh.${userId}`;

export function storedRefreshMode(userId: string): RefreshMode | null {
  try {
    const value = window.localStorage.getItem(storageKey(userId));
    return REFRESH_MODES.find((m) => m === value) ?? null;
  } catch {
    return null; // storage refused (private mode, quota): the default applies
  }
}

export function storeRefreshMode(userId: string, mode: RefreshMode): void {
  try {
    window.localStorage.setItem(storageKey(userId), mode);
  } catch {
    // Not remembered, still applied to this tab.
  }
}

/**
 * Why new data must wait, if it must: rows never move under an open dialog (what it
 * confirms must hold still) or a focused text field (typing is never disturbed). A list
 * under the pointer, holding focus or scrolled into holds its own rows (components/ui/calm-rows.ts).
 */
export function holdReason(): 'dialog' | 'typing' | null {
  if (document.querySelector('dialog[open], [role="alertdialog"], [role="dialog"][data-state="open"]')) return 'dialog';
  const active = document.activeElement;
  if (active instanceof HTMLTextAreaElement) return 'typing';
  if (
    active instanceof HTMLInputElement &&
    ['text', 'search', 'number', 'email', 'password', 'datetime-local', ''].includes(active.type)
  )
    return 'typing';
  return null;
}
