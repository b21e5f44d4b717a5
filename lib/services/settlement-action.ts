import 'server-only';
import { can, mayTake, type ActionName } from '../domain/roles';
import type { Actor } from '../domain/actor';
import { err, ok, type Result } from '../domain/result';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import { isOperationId, operationIdMessage } from '../domain/identifier-patterns';

export interface ServiceError {
  /** SCREAMING_SNAKE reason: FORBIDDEN, CONFLICT, NOTE_REQUIRED, ... */
  code: string;
  message: string;
}
export type ServiceResult<T> = Result<T, ServiceError>;

/**
 * A refusal decided inside the transaction. It is thrown so the transaction rolls back
 * whatever it wrote, then recorded on its own: a refused mutation commits its audit
 * event and nothing else (docs/design.md#audit). It never leaves this module's callers.
 */
class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function refuse(code: string, message: string): never {
  throw new Refusal(code, message);
}

export const MAX_NOTE_LENGTH = 2_000;

/** The checks every settlement mutation makes on its free-text note and idempotency key. */
export function inputProblem(input: {
  note?: string;
  noteRequired: boolean;
  operationId?: string;
}): ServiceError | null {
  const note = input.note?.trim() ?? '';
  if (input.noteRequired && note === '') return { code: 'NOTE_REQUIRED', message: 'A note saying why is required.' };
  if (note.length > MAX_NOTE_LENGTH)
    return { code: 'NOTE_TOO_LONG', message: `The note is longer than ${MAX_NOTE_LENGTH} characters.` };
  if (input.operationId !== undefined && !isOperationId(input.operationId)) {
    return { code: 'INVALID_OPERATION_ID', message: operationIdMessage() };
  }
  return null;
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

export interface SettlementAction<T> {
  actor: Actor;
  /** Names the audit event and the permission (ACTION_PERMISSIONS), the one action() checked. */
  action: ActionName;
  target: { kind: string; id: string };
  operationId?: string;
  note?: string;
  /** Refused before any work, still audited (an invalid note, say). */
  invalid?: ServiceError | null;
  work: (ports: SettlementReplayPorts) => Promise<Applied<T>>;
}

/**
 * Role check, work and audit event in one transaction. Every refusal, the role's
 * included, is audited as REFUSED with its code in a transaction of its own.
 */
export async function runSettlementAction<T>(
  transactions: UnitOfWork<SettlementReplayPorts>,
  spec: SettlementAction<T>,
): Promise<ServiceResult<T>> {
  const { actor, action, target, operationId, note } = spec;
  const event = { actor, action, target, operationId: operationId ?? null, reason: note?.trim() || null };
  try {
    if (!mayTake(actor.role, spec.action)) refuse('FORBIDDEN', `The ${actor.role} role may not do this.`);
    if (spec.invalid) refuse(spec.invalid.code, spec.invalid.message);
    return await transactions.transaction(async (ports) => {
      const applied = await spec.work(ports);
      if (applied.audit) {
        await ports.audit.record({
          ...event,
          target: { kind: target.kind, id: applied.targetId ?? target.id },
          before: applied.before ?? null,
          after: applied.after ?? null,
          outcome: 'APPLIED',
        });
      }
      return ok(applied.value);
    });
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    await transactions.transaction((ports) => ports.audit.record({ ...event, outcome: 'REFUSED', code: error.code }));
    return err({ code: error.code, message: error.message });
  }
}

/** Reads are role-checked like mutations but leave no audit event. */
export async function runSettlementRead<T>(
  transactions: UnitOfWork<SettlementReplayPorts>,
  actor: Actor,
  read: (ports: SettlementReplayPorts) => Promise<ServiceResult<T>>,
): Promise<ServiceResult<T>> {
  if (!can(actor.role, 'read')) return err({ code: 'FORBIDDEN', message: `The ${actor.role} role may not read this.` });
  return transactions.transaction(read);
}
