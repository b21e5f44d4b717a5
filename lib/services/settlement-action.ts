import 'server-only';
import { can, mayTake, type ActionName } from '../domain/roles';
import type { Actor } from '../domain/actor';
import type { ErrorCode } from '../domain/error-code';
import { err, ok } from '../domain/result';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import { refuse, serviceError, transact, type RefusalEvent, type ServiceResult } from './kernel';

/** What the settlement use cases run on: replays, bulk jobs and the audit log over one transaction. */
export interface SettlementServiceDeps {
  unitOfWork: UnitOfWork<SettlementReplayPorts>;
}

/** One settlement request as its audit event names it; the action also names the permission (ACTION_PERMISSIONS). */
export interface SettlementRequest extends RefusalEvent {
  action: ActionName;
}

export function settlementRequest(
  actor: Actor,
  action: ActionName,
  target: { kind: string; id: string },
  options: { operationId?: string; note?: string } = {},
): SettlementRequest {
  return { actor, action, target, operationId: options.operationId ?? null, reason: options.note || null };
}

/**
 * Refuses a settlement request through the kernel (lib/services/kernel.ts): whatever its work
 * wrote rolls back and its REFUSED event commits on its own (docs/design.md#audit).
 */
export function refuseSettlement(request: SettlementRequest, code: ErrorCode, message: string): never {
  return refuse(serviceError(code, message), request);
}

export interface Applied<T> {
  value: T;
  /** False for a repeated operation that changed nothing: its first audit event stands. */
  audit: boolean;
  before?: unknown;
  after?: unknown;
  /** The target's id once the work knows it (a new bulk job). */
  targetId?: string;
}

/** Role check, work and its APPLIED audit event in one unit of work; every refusal, the role's included, is audited. */
export function runSettlementAction<T>(
  deps: SettlementServiceDeps,
  request: SettlementRequest,
  work: (ports: SettlementReplayPorts) => Promise<Applied<T>>,
): Promise<ServiceResult<T>> {
  return transact(deps.unitOfWork, async (ports) => {
    if (!mayTake(request.actor.role, request.action))
      refuseSettlement(request, 'FORBIDDEN', `The ${request.actor.role} role may not do this.`);
    const applied = await work(ports);
    if (applied.audit) {
      await ports.audit.record({
        ...request,
        target: { kind: request.target.kind, id: applied.targetId ?? request.target.id },
        before: applied.before ?? null,
        after: applied.after ?? null,
        outcome: 'APPLIED',
      });
    }
    return ok(applied.value);
  });
}

/** Reads are role-checked like mutations but leave no audit event. */
export function runSettlementRead<T>(
  deps: SettlementServiceDeps,
  actor: Actor,
  read: (ports: SettlementReplayPorts) => Promise<ServiceResult<T>>,
): Promise<ServiceResult<T>> {
  if (!can(actor.role, 'read'))
    return Promise.resolve(err(serviceError('FORBIDDEN', `The ${actor.role} role may not read this.`)));
  return transact(deps.unitOfWork, read);
}
