/** The users list's words, without zod so the browser can use them (lib/domain/users.ts holds the schemas). */
export const USER_STATUSES = ['active', 'disabled'] as const;
