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

let lastPointerMove = 0;
if (typeof document !== 'undefined')
  document.addEventListener('pointermove', () => (lastPointerMove = Date.now()), { passive: true });
/** A pointer that has not moved for this long is resting, not reading a row. */
const HOVER_HOLD_MS = 5_000;

/**
 * Why new data must wait, if it must: rows never move under an open dialog (what it
 * confirms must hold still), a focused text field (typing is never disturbed) or the
 * row under the pointer.
 */
export function holdReason(): 'dialog' | 'typing' | 'hover' | null {
  if (document.querySelector('dialog[open], [role="alertdialog"], [role="dialog"][data-state="open"]')) return 'dialog';
  const active = document.activeElement;
  if (active instanceof HTMLTextAreaElement) return 'typing';
  if (
    active instanceof HTMLInputElement &&
    ['text', 'search', 'number', 'email', 'password', 'datetime-local', ''].includes(active.type)
  )
    return 'typing';
  if (Date.now() - lastPointerMove < HOVER_HOLD_MS && document.querySelector('tbody tr:hover')) return 'hover';
  return null;
}
