import 'server-only';
import { err } from '../domain/result';
import type { ServiceError, ServiceResult } from '../domain/service-result';
import type { AuditEventInput, AuditLog } from '../ports/audit-log';
import type { UnitOfWork } from '../ports/unit-of-work';

export { serviceError, type ServiceError, type ServiceResult } from '../domain/service-result';

/**
 * The service kernel (CONTRIBUTING.md#add-an-action): every use case runs its work in one
 * unit of work with `transact`, answers a value with `ok(...)`, and refuses with `refuse(...)`,
 * which records the refusal's audit event (docs/design.md#audit). A refusal keeps either
 *
 * - `'event'` (the default): its audit event and nothing else; whatever the work wrote rolls
 *   back, then the event commits in a transaction of its own;
 * - `'changes'`: the work's writes as well, for the status change the refusal itself causes
 *   (a proposal closed as SUPERSEDED or EXPIRED, a REJECTED operator request), committed with
 *   the event.
 *
 * An error the work returns with `err(...)` is not audited: a read's NOT_FOUND, or a repeated
 * operation answering its first outcome. Any other throw rolls everything back and propagates.
 */

/** The audit event of a refusal, all but its outcome (REFUSED) and its code (the error's). */
export type RefusalEvent = Omit<AuditEventInput, 'outcome' | 'code'>;

/** What a refused unit of work commits besides nothing: its event only, or with the work's changes. */
export type RefusalKeeps = 'event' | 'changes';

class Refusal extends Error {
  override readonly name = 'Refusal';
  constructor(
    readonly error: ServiceError,
    readonly event: RefusalEvent,
    readonly keeps: RefusalKeeps,
  ) {
    super(error.message);
  }
}

/** Ends the unit of work with a refusal; it never returns. Call it only inside `transact`. */
export function refuse(error: ServiceError, event: RefusalEvent, keeps: RefusalKeeps = 'event'): never {
  throw new Refusal(error, event, keeps);
}

const record = (audit: AuditLog, refusal: Refusal) =>
  audit.record({ ...refusal.event, outcome: 'REFUSED', code: refusal.error.code });

/** Runs `work` in one transaction of `unitOfWork` and applies its refusal, if any, as `refuse` says. */
export async function transact<Ports extends { audit: AuditLog }, R extends ServiceResult<unknown>>(
  unitOfWork: UnitOfWork<Ports>,
  work: (ports: Ports) => Promise<R>,
): Promise<R | { ok: false; error: ServiceError }> {
  try {
    return await unitOfWork.transaction(async (ports) => {
      try {
        return await work(ports);
      } catch (error) {
        if (!(error instanceof Refusal) || error.keeps !== 'changes') throw error;
        await record(ports.audit, error);
        return err(error.error);
      }
    });
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    await unitOfWork.transaction((ports) => record(ports.audit, error));
    return err(error.error);
  }
}
