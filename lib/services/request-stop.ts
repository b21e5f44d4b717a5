import 'server-only';
import { mayTake } from '../auth/roles';
import type { Actor } from '../domain/actor';
import { isActorRef } from '../domain/batch-status';
import { ok } from '../domain/result';
import type { StopRequested } from '../ports/batch-execution-commands';
import type { TakeoverUnitOfWork } from '../ports/takeover-unit-of-work';
import { auditActor, failure, isPositiveId, refuse, type ServiceResult } from './recovery-common';

/**
 * Asks the runtime to stop an active execution (DESIGN.md 5.3). Keel only records
 * the request; the runtime acts on it. A second request finds one already set and
 * is refused, so a double submit never writes twice.
 */
export async function requestStop(
  deps: { uow: TakeoverUnitOfWork },
  actor: Actor,
  input: { executionId: number },
): Promise<ServiceResult<StopRequested>> {
  return deps.uow.transaction(async (ports) => {
    const context = { action: 'execution.request_stop', target: { kind: 'batch_execution', id: String(input.executionId) } };
    if (!mayTake(actor.role, 'execution.request_stop')) {
      return refuse(ports.audit, actor, context, failure('FORBIDDEN', `The ${actor.role} role may not request a stop.`));
    }
    if (!isPositiveId(input.executionId)) return refuse(ports.audit, actor, context, failure('INVALID_INPUT', 'executionId must be a positive integer.'));
    // stop_requested_by is the runtime's varchar(128) actor reference.
    if (!isActorRef(actor.login)) {
      return refuse(ports.audit, actor, context, failure('INVALID_ACTOR_REF', 'Your login cannot be recorded as the runtime actor reference.'));
    }
    const result = await ports.executions.requestStop(input.executionId, actor.login);
    if (!result.ok) {
      const error = result.error;
      const refusal =
        error.kind === 'ExecutionNotFound'
          ? failure('EXECUTION_NOT_FOUND', `Execution ${input.executionId} does not exist.`)
          : error.kind === 'NotActive'
            ? failure('NOT_ACTIVE', `An execution in ${error.status} cannot be asked to stop.`)
            : failure('STOP_ALREADY_REQUESTED', 'A stop was already requested for this execution.');
      return refuse(ports.audit, actor, context, refusal);
    }
    await ports.audit.record({
      ...context,
      actor: auditActor(actor),
      after: { stopRequestedBy: actor.login, version: result.value.version },
      outcome: 'APPLIED',
    });
    return ok(result.value);
  });
}
