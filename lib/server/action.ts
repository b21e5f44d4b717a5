import 'server-only';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { can, type Permission } from '../auth/roles';
import { postgresAuditLog } from '../adapters/audit-log';
import { isDatabaseBusy } from '../db/client';
import { logger } from './logger';
import { loggableError } from './safe-error';
import { recordActionOutcome } from './metrics';
import { runtime } from './runtime';
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
 * `options.name` (such as `user.create`) labels the action's outcome metrics; without
 * it the permission does.
 */
export function action<S extends z.ZodType, T>(
  schema: S,
  permission: Permission,
  handler: (actor: Actor, input: z.output<S>, context: { requestId: string }) => Promise<HandlerResult<T>>,
  options: { name?: string } = {},
): (input: z.input<S> | FormData) => Promise<ActionResult<T>> {
  const name = options.name ?? permission;
  return async (raw) => {
    const started = performance.now();
    const result = await run(raw);
    const outcome = result.ok ? 'APPLIED' : result.code === 'INTERNAL' ? 'ERROR' : 'REFUSED';
    recordActionOutcome(name, outcome, result.ok ? null : result.code, (performance.now() - started) / 1000);
    return result;
  };

  async function run(raw: z.input<S> | FormData): Promise<ActionResult<T>> {
    const requestId = randomUUID();
    try {
      const actor = await currentActor();
      if (!actor) return { ok: false, code: 'UNAUTHENTICATED', message: 'Your session has ended; sign in again.' };
      if (!can(actor.role, permission)) {
        // A refused attempt is audited too: a forged call from a page that hides the button is worth knowing about.
        await postgresAuditLog(runtime().db).record({
          actor,
          action: name,
          target: { kind: 'action', id: name },
          outcome: 'REFUSED',
          code: 'FORBIDDEN',
          requestId,
        });
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
      if (isDatabaseBusy(error)) return { ok: false, code: 'DATABASE_BUSY', message: 'The database is busy; try again shortly.' };
      logger.error({ requestId, error: loggableError(error) }, 'server action failed');
      return { ok: false, code: 'INTERNAL', message: `Internal error (${requestId}).` };
    }
  }
}
