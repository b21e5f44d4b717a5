import 'server-only';
import type { Actor } from '../domain/actor';
import type { ErrorCode } from '../domain/error-code';
import { err, ok } from '../domain/result';
import { mayTake } from '../domain/roles';
import type { UnitOfWork } from '../ports/unit-of-work';
import type {
  ClaimedWebhookDelivery,
  WebhookAdminTransaction,
  WebhookDeliveryState,
  WebhookSender,
} from '../ports/webhook-deliveries';
import { refuse, serviceError, transact, type RefusalEvent, type ServiceResult } from './kernel';

/**
 * An admin's controls on the Webhooks page: send a test event to one endpoint, and retry
 * a pending or failed delivery now. Each claims its delivery (a lease, committed with its
 * audit event), sends it outside any transaction, and records the outcome as the worker
 * does. The lease is what keeps a delivery from being sent twice: the worker claims only
 * deliveries without a live lease, and Retry now refuses one that has it. An operation id
 * seen before (a double click, a resubmitted request) sends nothing and answers the state
 * of the delivery the first request made.
 */

export interface WebhookAdminPorts {
  unitOfWork: UnitOfWork<WebhookAdminTransaction>;
  sender: WebhookSender;
}

export interface WebhookAdminResult {
  delivery: WebhookDeliveryState;
  /** True when this operation id had already acted: nothing was sent this time. */
  repeated: boolean;
}

/** Refuses through the kernel (lib/services/kernel.ts), the message as the event's reason. */
function refuseWebhook(request: RefusalEvent, code: ErrorCode, message: string): never {
  return refuse(serviceError(code, message), { ...request, reason: message });
}

const FORBIDDEN = serviceError('FORBIDDEN', 'Only admins manage webhooks.');

type Claim =
  | { kind: 'claimed'; delivery: ClaimedWebhookDelivery }
  | { kind: 'repeated'; delivery: WebhookDeliveryState };

/** Sends what was claimed and records how it went; the delivery's state afterwards. */
async function sendClaimed(ports: WebhookAdminPorts, claimed: ClaimedWebhookDelivery): Promise<WebhookDeliveryState> {
  const outcome = await ports.sender.send(claimed);
  const recorded = await ports.unitOfWork.transaction((tx) => tx.deliveries.recordOutcome(claimed, outcome));
  // Null only if the row moved under the lease (it cannot, short of a manual edit): show what is there.
  if (recorded) return recorded;
  const current = await ports.unitOfWork.transaction((tx) => tx.deliveries.findDelivery(claimed.id));
  return (
    current ?? {
      id: claimed.id,
      endpoint: claimed.endpoint,
      status: claimed.status,
      attempts: claimed.attempts,
      lastHttpStatus: outcome.httpStatus,
      lastError: outcome.error,
    }
  );
}

export async function sendTestWebhook(
  ports: WebhookAdminPorts,
  actor: Actor,
  input: { endpoint: string; operationId: string },
): Promise<ServiceResult<WebhookAdminResult>> {
  const action = 'webhook.send_test';
  // Not audited here: action() has audited a refused role already; this holds callers without it.
  if (!mayTake(actor.role, action)) return err(FORBIDDEN);
  const request = {
    actor,
    action,
    target: { kind: 'webhook_endpoint', id: input.endpoint },
    operationId: input.operationId,
  };
  const claim = await transact(ports.unitOfWork, async (tx): Promise<ServiceResult<Claim>> => {
    await tx.deliveries.lockOperation(input.operationId);
    const earlier = await tx.deliveries.findAppliedOperation(action, input.operationId);
    const earlierId = earlier?.actorId === actor.id ? deliveryIdOf(earlier.after) : null;
    if (earlierId !== null) {
      const delivery = await tx.deliveries.findDelivery(earlierId);
      if (delivery) return ok({ kind: 'repeated', delivery });
    }
    if (!ports.sender.knows(input.endpoint) || !(await tx.deliveries.isEnabledEndpoint(input.endpoint))) {
      const message = `No endpoint named ${input.endpoint} is configured (KEEL_WEBHOOK_URLS).`;
      refuseWebhook(request, 'UNKNOWN_ENDPOINT', message);
    }
    const delivery = await tx.deliveries.createTestDelivery(input.endpoint, actor.login);
    await tx.audit.record({
      ...request,
      outcome: 'APPLIED',
      after: { deliveryId: delivery.id, eventId: delivery.event.id },
    });
    return ok({ kind: 'claimed', delivery });
  });
  if (!claim.ok) return claim;
  if (claim.value.kind === 'repeated') return ok({ delivery: claim.value.delivery, repeated: true });
  return ok({ delivery: await sendClaimed(ports, claim.value.delivery), repeated: false });
}

export async function retryWebhookDelivery(
  ports: WebhookAdminPorts,
  actor: Actor,
  input: { deliveryId: number; operationId: string },
): Promise<ServiceResult<WebhookAdminResult>> {
  const action = 'webhook.retry';
  // Not audited here: action() has audited a refused role already; this holds callers without it.
  if (!mayTake(actor.role, action)) return err(FORBIDDEN);
  const request = {
    actor,
    action,
    target: { kind: 'webhook_delivery', id: String(input.deliveryId) },
    operationId: input.operationId,
  };
  const claim = await transact(ports.unitOfWork, async (tx): Promise<ServiceResult<Claim>> => {
    // The row lock first: a second request with this operation id waits here, then finds the first's audit event.
    const locked = await tx.deliveries.lockForRetry(input.deliveryId);
    if (!locked) return refuseWebhook(request, 'NOT_FOUND', `There is no delivery #${input.deliveryId}.`);
    const earlier = await tx.deliveries.findAppliedOperation(action, input.operationId);
    if (earlier?.actorId === actor.id && earlier.targetId === String(input.deliveryId)) {
      const { id, endpoint, status, attempts, lastHttpStatus, lastError } = locked;
      return ok({ kind: 'repeated', delivery: { id, endpoint, status, attempts, lastHttpStatus, lastError } });
    }
    if (locked.status === 'DELIVERED')
      refuseWebhook(request, 'ALREADY_DELIVERED', `Delivery #${locked.id} was delivered already; nothing to retry.`);
    if (locked.leased) {
      const message = `Delivery #${locked.id} is being sent right now; its outcome shows in a moment.`;
      refuseWebhook(request, 'DELIVERY_IN_FLIGHT', message);
    }
    if (!ports.sender.knows(locked.endpoint)) {
      const message = `Endpoint ${locked.endpoint} is no longer configured (KEEL_WEBHOOK_URLS).`;
      refuseWebhook(request, 'UNKNOWN_ENDPOINT', message);
    }
    const delivery = await tx.deliveries.lease(locked.id);
    await tx.audit.record({
      ...request,
      outcome: 'APPLIED',
      before: {
        status: locked.status,
        attempts: locked.attempts,
        lastHttpStatus: locked.lastHttpStatus,
        lastError: locked.lastError,
      },
    });
    return ok({ kind: 'claimed', delivery });
  });
  if (!claim.ok) return claim;
  if (claim.value.kind === 'repeated') return ok({ delivery: claim.value.delivery, repeated: true });
  return ok({ delivery: await sendClaimed(ports, claim.value.delivery), repeated: false });
}

function deliveryIdOf(after: unknown): number | null {
  const id = typeof after === 'object' && after !== null ? (after as { deliveryId?: unknown }).deliveryId : undefined;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : null;
}
