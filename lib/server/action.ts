import 'server-only';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { can, type Permission } from '../auth/roles';
import { logger } from './logger';
import { currentActor, type Actor } from './session';

export type ActionResult<T> =
  | { ok: true; value: T }
  | { ok: false; code: string; message: string; fieldErrors?: Record<string, string[]> };

/** What a handler returns: a value, or a typed refusal with its code. */
export type HandlerResult<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };

/**
 * The one wrapper for every server action (STYLE.md 1): authenticate, check the
 * role, parse with zod, run the handler, map typed errors to the result union.
 * Unexpected errors are logged with a request id and never reach the client.
 */
export function action<S extends z.ZodType, T>(
  schema: S,
  permission: Permission,
  handler: (actor: Actor, input: z.output<S>, context: { requestId: string }) => Promise<HandlerResult<T>>,
): (input: z.input<S> | FormData) => Promise<ActionResult<T>> {
  return async (raw) => {
    const requestId = randomUUID();
    try {
      const actor = await currentActor();
      if (!actor) return { ok: false, code: 'UNAUTHENTICATED', message: 'Your session has ended; sign in again.' };
      if (!can(actor.role, permission)) {
        return { ok: false, code: 'FORBIDDEN', message: `The ${actor.role} role may not do this.` };
      }
      const data = raw instanceof FormData ? Object.fromEntries(raw.entries()) : raw;
      const parsed = schema.safeParse(data);
      if (!parsed.success) {
        const fieldErrors: Record<string, string[]> = {};
        for (const issue of parsed.error.issues) {
          const key = issue.path.join('.') || '_';
          (fieldErrors[key] ??= []).push(issue.message);
        }
        return { ok: false, code: 'INVALID_INPUT', message: 'Some fields are not valid.', fieldErrors };
      }
      const result = await handler(actor, parsed.data, { requestId });
      return result.ok ? result : { ok: false, code: result.error.code, message: result.error.message };
    } catch (error) {
      logger.error({ requestId, err: error }, 'server action failed');
      return { ok: false, code: 'INTERNAL', message: `Internal error (${requestId}).` };
    }
  };
}
