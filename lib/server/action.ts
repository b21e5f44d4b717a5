import 'server-only';
import { randomUUID } from 'node:crypto';
import { headers } from 'next/headers';
import type { z } from 'zod';
import type { ErrorCode } from '../domain/error-code';
import { ACTION_PERMISSIONS, can, type ActionName } from '../domain/roles';
import { actionResult, serviceError, type ActionResult, type ServiceResult } from '../domain/service-result';
import {
  ACTION_BODY_PROBLEMS,
  isActionBodyProblem,
  REFUSED_BODY_HEADER,
  type ActionBodyProblem,
} from '../http/action-body';
import { isDatabaseBusy } from '../db/client';
import { cappedCountMemory } from '../queries/capped-count-memory';
import type { AuditLog } from '../ports/audit-log';
import { parseInput } from './parse-input';
import { logger } from '../observability/logger';
import { loggableError } from '../observability/safe-error';
import { recordActionOutcome } from '../observability/metrics';
import { withRequestId } from '../observability/request-context';
import { fenceWrite } from './write-fence';
import { actionAuditLog } from './composition-root';
import { currentActor, type Actor } from './session';

export type { ActionResult } from '../domain/service-result';

/** An action's own refusal, answered before or instead of the handler: the same fields as a service's. */
const refused = (code: ErrorCode, message: string): ActionResult<never> =>
  actionResult({ ok: false, error: serviceError(code, message) });

/**
 * The one wrapper for every server action (CONTRIBUTING.md#add-an-action): authenticate, check the
 * role, parse with zod, run the handler, map typed errors to the result union.
 * Unexpected errors are logged with a request id and never reach the client.
 * `name` (such as `user.create`) labels the audit events and outcome metrics and
 * names the permission, declared once in ACTION_PERMISSIONS. Refusals (forbidden
 * role, invalid input) are audited with the request id, which every audit event the
 * handler writes carries too. `options.deps` replaces the session and the audit log
 * (integration tests).
 */
export function action<S extends z.ZodType, T>(
  schema: S,
  name: ActionName,
  handler: (actor: Actor, input: z.output<S>, context: { requestId: string }) => Promise<ServiceResult<T>>,
  options: { deps?: ActionDeps } = {},
): (input: z.input<S>) => Promise<ActionResult<T>> {
  const permission = ACTION_PERMISSIONS[name];
  const deps = options.deps ?? serverDeps;
  return async (raw) => {
    const started = performance.now();
    const result = await run(raw);
    const outcome = result.ok ? 'APPLIED' : result.code === 'INTERNAL' ? 'ERROR' : 'REFUSED';
    recordActionOutcome(name, outcome, result.ok ? null : result.code, (performance.now() - started) / 1000);
    return result;
  };

  function run(raw: unknown): Promise<ActionResult<T>> {
    const requestId = randomUUID();
    return withRequestId(requestId, () => guarded(raw, requestId));
  }

  async function guarded(raw: unknown, requestId: string): Promise<ActionResult<T>> {
    const seen: { actor: Actor | null } = { actor: null };
    const result = await decided(raw, requestId, seen);
    // Whatever the outcome, a signed-in user's action may have written: its change, or a refusal's audit event.
    if (seen.actor) await deps.fenceWrite();
    // The counts this process remembers past their cap may hold rows the action changed: the next view counts.
    if (result.ok) cappedCountMemory().forgetAll();
    return result;
  }

  async function decided(raw: unknown, requestId: string, seen: { actor: Actor | null }): Promise<ActionResult<T>> {
    try {
      const actor = await deps.currentActor();
      if (!actor) return refused('UNAUTHENTICATED', 'Your session has ended; sign in again.');
      seen.actor = actor;
      if (!can(actor.role, permission)) {
        // A refused attempt is audited too: a forged call from a page that hides the button is worth knowing about.
        await deps.auditLog().record({
          actor,
          action: name,
          target: { kind: 'action', id: name },
          outcome: 'REFUSED',
          code: 'FORBIDDEN',
          requestId,
        });
        return refused('FORBIDDEN', `The ${actor.role} role may not do this.`);
      }
      const refusedBody = (await deps.refusedBody?.()) ?? null;
      if (refusedBody !== null) {
        // The front door replaced a body Keel's clients never send (lib/http/action-body.ts).
        await deps.auditLog().record({
          actor,
          action: name,
          target: { kind: 'action', id: name },
          reason: `Malformed action body: ${ACTION_BODY_PROBLEMS[refusedBody]}.`,
          outcome: 'REFUSED',
          code: 'INVALID_INPUT',
          requestId,
        });
        return refused('INVALID_INPUT', 'This request is not one the console sends.');
      }
      const input = parseInput(schema, raw);
      if (!input.ok) {
        // Audited like a forbidden call, naming the fields but never their bytes.
        await deps.auditLog().record({
          actor,
          action: name,
          target: { kind: 'action', id: name },
          reason: input.error.auditReason,
          outcome: 'REFUSED',
          code: 'INVALID_INPUT',
          requestId,
        });
        const error = {
          ...serviceError('INVALID_INPUT', 'Some fields are not valid.'),
          fieldErrors: input.error.fieldErrors,
        };
        return actionResult({ ok: false, error });
      }
      return actionResult(await handler(actor, input.value, { requestId }));
    } catch (error) {
      if (isDatabaseBusy(error)) return refused('DATABASE_BUSY', 'The database is busy; try again shortly.');
      logger.error({ requestId, error: loggableError(error) }, 'server action failed');
      return refused('INTERNAL', `Internal error (${requestId}).`);
    }
  }
}

/** What an action needs from the server besides its handler. */
export interface ActionDeps {
  currentActor: () => Promise<Actor | null>;
  auditLog: () => AuditLog;
  /** After a signed-in user's action: their later list reads must see what it wrote (lib/server/write-fence.ts). */
  fenceWrite: () => Promise<void>;
  /** The problem the front door found in the call's body, or null (lib/http/action-body.ts). */
  refusedBody?: () => Promise<ActionBodyProblem | null>;
}

async function refusedBody(): Promise<ActionBodyProblem | null> {
  const problem = (await headers()).get(REFUSED_BODY_HEADER);
  if (problem === null) return null;
  // Only the front door sets it, with one of its words; anything else is refused all the same.
  return isActionBodyProblem(problem) ? problem : 'NOT_JSON';
}

const serverDeps: ActionDeps = { currentActor, auditLog: actionAuditLog, fenceWrite, refusedBody };
