/**
 * `g` then a letter: where each goes. The handler (keyboard-shortcuts.tsx)
 * and the list (shortcut-list.tsx) read this one map.
 */
export const GO: Record<string, { href: string; label: string }> = {
  o: { href: '/', label: 'Overview' },
  c: { href: '/rates', label: 'Rates' },
  e: { href: '/executions', label: 'Executions' },
  k: { href: '/retry-keys', label: 'Retry keys' },
  r: { href: '/recovery', label: 'Recovery' },
  s: { href: '/settlements', label: 'Settlements' },
  a: { href: '/audit', label: 'Audit' },
};

/** The header search's input, which `/` focuses. */
export const CONSOLE_SEARCH_ID = 'console-search';
