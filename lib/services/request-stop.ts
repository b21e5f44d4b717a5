import 'server-only';
import { mayTake } from '../domain/roles';
import type { Actor } from '../domain/actor';
import type { BatchStatus } from '../domain/batch-status';
import { isErrorCode } from '../domain/error-code';
import { executionRequestDigestHex, KEEL_OPERATION_ID_PREFIX, stopDisposition } from '../domain/operator-request';
import { err, ok } from '../domain/result';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { UnitOfWork } from '../ports/unit-of-work';
import { serviceError, transact, type ServiceResult } from './kernel';
import { auditActor, refuseRecovery, refuseUnlessActorRef } from './recovery-common';

export interface RequestStopInput {
  executionId: number;
  /** Made when the stop dialog opens: the runtime's idempotency key of this request. */
  operationId: string;
}

export interface StopRequested {
  executionId: number;
  /** The execution's version, unchanged by a stop request. */
  version: number;
  /** False for a repeat (already requested, STOPPING or finished): nothing changed. */
  changed: boolean;
  /** False when the operation id had been recorded already: its first result, nothing written. */
  firstRequest: boolean;
  operatorRequestId: number;
  requestDigestHex: string;
}

/**
 * Request stop as the runtime's STOP operator request (docs/design.md#request-stop): allowed on
 * STARTING and STARTED, where it sets `stop_requested_at/by` and moves `updated_at`
 * forward without bumping the version, so the owner's next compare-and-set still
 * succeeds; a repeat on one already asked, STOPPING or finished succeeds and changes
 * nothing; UNKNOWN is INVALID_STATE. Every outcome is one `ob_operator_request`
 * (STOP, LIFECYCLE) and one audit event; a second submit with the same operation id
 * returns the first one's result and writes nothing.
 */
export async function requestStop(
  deps: { unitOfWork: UnitOfWork<TakeoverPorts> },
  actor: Actor,
  input: RequestStopInput,
): Promise<ServiceResult<StopRequested>> {
  return transact(deps.unitOfWork, async (ports) => {
    const context = {
      action: 'execution.request_stop',
      target: { kind: 'batch_execution', id: String(input.executionId) },
      operationId: input.operationId,
    };
    if (!mayTake(actor.role, 'execution.request_stop')) {
      return refuseRecovery(actor, context, 'FORBIDDEN', `The ${actor.role} role may not request a stop.`);
    }
    // In the runtime's table Keel's requests carry the `keel-` prefix, so its history tells them from its CLI's
    // (the schema keeps the dialog's id short enough for it: STOP_OPERATION_ID_MAX).
    const runtimeOperationId = `${KEEL_OPERATION_ID_PREFIX}stop-${input.operationId}`;
    // stop_requested_by and actor_ref are the runtime's varchar(128) actor reference.
    refuseUnlessActorRef(actor, context);
    const locked = await ports.executions.lockForOperatorRequest(input.executionId);
    if (!locked)
      return refuseRecovery(actor, context, 'EXECUTION_NOT_FOUND', `Execution ${input.executionId} does not exist.`);

    // Under the row lock, so a concurrent submit of the same operation id finds this one's row.
    const recorded = await ports.executions.findOperatorRequest('STOP', runtimeOperationId);
    if (recorded) {
      if (recorded.jobExecutionId !== input.executionId) {
        return refuseRecovery(
          actor,
          context,
          'OPERATION_ID_CONFLICT',
          'This operation id was used for another request.',
        );
      }
      if (recorded.outcome === 'REJECTED') {
        // The first outcome again, not a new refusal: nothing is audited twice.
        const recordedCode = recorded.rejectionCode ?? 'INVALID_STATE';
        const code = isErrorCode(recordedCode) ? recordedCode : 'INVALID_STATE';
        return err(serviceError(code, `This stop request was already refused (${recordedCode}).`));
      }
      return ok({
        executionId: input.executionId,
        version: locked.version,
        changed: false,
        firstRequest: false,
        operatorRequestId: recorded.id,
        requestDigestHex: recorded.requestDigestHex,
      });
    }

    const digest = executionRequestDigestHex({
      action: 'STOP',
      executionId: locked.executionId,
      expectedVersion: locked.version,
    });
    if (!digest.ok)
      return refuseRecovery(
        actor,
        context,
        'INVALID_INPUT',
        `The stop request cannot be encoded (${digest.error.kind}).`,
      );
    const auditContext = { ...context, digest: digest.value };
    const draft = {
      action: 'STOP' as const,
      operationId: runtimeOperationId,
      actorRef: actor.login,
      reasonCode: null,
      requestDigestHex: digest.value,
      jobExecutionId: locked.executionId,
      observedVersion: locked.version,
      requestedAtMs: locked.nowMs,
    };
    const disposition = stopDisposition(locked.status, locked.stopRequested);
    if (disposition === 'INVALID_STATE') {
      await ports.executions.appendOperatorRequest({
        ...draft,
        jobInstanceId: null,
        priorStatus: null,
        resultStatus: null,
        outcome: 'REJECTED',
        rejectionCode: 'INVALID_STATE',
      });
      return refuseRecovery(
        actor,
        auditContext,
        'INVALID_STATE',
        `An execution in ${locked.status} cannot be asked to stop.`,
        // The REJECTED operator request is the runtime's record of this refusal: it commits with the event.
        { observed: { status: locked.status, version: locked.version }, keeps: 'changes' },
      );
    }
    if (disposition === 'REQUEST') {
      const stopped = await ports.executions.requestStop(locked.executionId, locked.version, actor.login, locked.nowMs);
      // The row is locked, so the version cannot have moved; throwing rolls everything back.
      if (!stopped.ok) throw new Error(`execution ${locked.executionId} moved under its row lock`);
    }
    const changed = disposition === 'REQUEST';
    const status: BatchStatus = locked.status;
    const appended = await ports.executions.appendOperatorRequest({
      ...draft,
      jobInstanceId: locked.jobInstanceId,
      priorStatus: status,
      resultStatus: status,
      outcome: 'APPLIED',
      rejectionCode: null,
    });
    await ports.audit.record({
      ...auditContext,
      actor: auditActor(actor),
      before: { status, version: locked.version, stopRequested: locked.stopRequested },
      after: {
        stopRequestedBy: changed ? actor.login : null,
        version: locked.version,
        changed,
        operatorRequestId: appended.id,
      },
      outcome: 'APPLIED',
    });
    return ok({
      executionId: locked.executionId,
      version: locked.version,
      changed,
      firstRequest: true,
      operatorRequestId: appended.id,
      requestDigestHex: digest.value,
    });
  });
}
