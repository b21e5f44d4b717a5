/** The users list's words, without zod so the browser can use them (lib/domain/users.ts holds the schemas). */
export const USER_STATUSES = ['active', 'disabled'] as const;

/** The users list's query params in a fixed order: its query key and its API URL. */
export function userSearch(state: {
  role?: string | null;
  status?: string | null;
  cursor?: string | null;
}): Record<string, string> {
  const search: Record<string, string> = {};
  for (const key of ['role', 'status', 'cursor'] as const) {
    const value = state[key]?.trim();
    if (value) search[key] = value;
  }
  return search;
}
