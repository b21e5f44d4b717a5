import 'server-only';
import type { ActionName } from '../domain/roles';
import type { Actor } from '../domain/actor';
import type { DeadLetter, DeadLetterReplayStore, QueuedAttempt, ReplayRecord } from '../ports/settlement-replay';
import { requeueRefusal, type RequeueRefusal } from '../domain/requeue-rule';
import { DISCARD_ACTION, REPLAY_ACTION, REQUEUE_ACTION } from '../domain/settlement-vocabulary';
import type { ServiceResult } from './kernel';
import {
  refuseSettlement,
  runSettlementAction,
  settlementRequest,
  type SettlementRequest,
  type SettlementServiceDeps,
} from './settlement-action';

export { DISCARD_ACTION, REPLAY_ACTION, REQUEUE_ACTION };
// Each is one of the action names the access table declares.
const SETTLEMENT_ACTION_NAMES = [REPLAY_ACTION, DISCARD_ACTION, REQUEUE_ACTION] satisfies ActionName[];
void SETTLEMENT_ACTION_NAMES;

// The inputs as the actions' schemas parse them (app/actions/settlement-schemas.ts): a receipt id of
// 1 to 1,000 characters, a trimmed note of at most 2,000, a well-formed operation id.

export interface DeadLetterActionInput {
  receiptId: string;
  note: string;
  /** The idempotency key of this submit: the same id twice acts once. */
  operationId: string;
}

export type ReplayResult = ReplayRecord;

export interface DiscardResult {
  receiptId: string;
  attempts: number;
  reason: string;
  canonicalJson: string;
  discardedAtMs: number;
}

export interface RequeueInput {
  receiptId: string;
  /** The row version the person saw: a row that changed since is not requeued. */
  expectedRowVersion: number;
  operationId: string;
  note?: string;
}

export interface RequeueResult {
  receiptId: string;
  nextVisibleAtMs: number;
  rowVersion: number;
}

function requeueRefusalMessage(refusal: RequeueRefusal, expectedRowVersion: number): string {
  switch (refusal.kind) {
    case 'not_queued':
      return 'The receipt is not queued.';
    case 'not_retry_scheduled':
      return 'Only a retry-scheduled settlement can be requeued.';
    case 'changed':
      return (
        `The settlement changed since it was shown (row version ${refusal.rowVersion}, ` +
        `expected ${expectedRowVersion}); reload it.`
      );
    case 'leased':
      return 'A worker holds this settlement right now.';
  }
}

/** The attempt as a requeue's audit event keeps it (single and bulk alike); attempts are never touched. */
export const requeueAuditBefore = (attempt: QueuedAttempt) => ({
  nextVisibleAtMs: attempt.nextVisibleAtMs,
  rowVersion: attempt.rowVersion,
  attempts: attempt.attempts,
});

const target = (receiptId: string) => ({ kind: 'settlement', id: receiptId });

/** The dead letter as the audit event keeps it: the JSON itself, so a discard loses nothing. */
export const deadLetterSummary = (deadLetter: DeadLetter) => ({
  attempts: deadLetter.attempts,
  reason: deadLetter.reason,
  recordedAtMs: deadLetter.recordedAtMs,
  canonicalJson: deadLetter.canonicalJson,
});

/**
 * The first result of an earlier submit with the same operation id, if any; call it
 * holding the operation's lock. One id belongs to one action on one receipt.
 */
async function priorResult<T>(
  replays: DeadLetterReplayStore,
  request: SettlementRequest & { operationId: string },
  receiptId: string,
): Promise<T | null> {
  const prior = await replays.findAppliedOperation(request.operationId);
  if (!prior) return null;
  if (prior.action !== request.action || prior.targetId !== receiptId) {
    const message = 'This operation id was already used for another action; reload and submit again.';
    refuseSettlement(request, 'OPERATION_ID_REUSED', message);
  }
  return prior.after as T;
}

/** A request carrying its operation id, as replay, discard and requeue always do. */
const requestWithId = (
  actor: Actor,
  action: SettlementRequest['action'],
  input: { receiptId: string; operationId: string; note?: string },
) => ({ ...settlementRequest(actor, action, target(input.receiptId), input), operationId: input.operationId });

/**
 * Replays one dead letter (docs/design.md#dead-letter-replay): in one transaction the dead letter goes, a
 * fresh attempt is queued, and the replay and its audit event are recorded.
 */
export function replayDeadLetter(
  deps: SettlementServiceDeps,
  actor: Actor,
  input: DeadLetterActionInput,
): Promise<ServiceResult<ReplayResult>> {
  const { receiptId, operationId, note } = input;
  const request = requestWithId(actor, REPLAY_ACTION, input);
  return runSettlementAction(deps, request, async ({ replays }) => {
    // The replay row is the authority (its operation id is unique); the audit lookup
    // only catches an id first spent on a different action.
    await replays.lockOperation(operationId);
    const [previous] = await replays.findReplays([operationId]);
    if (previous) {
      if (previous.receiptId !== receiptId)
        refuseSettlement(request, 'OPERATION_ID_REUSED', 'This operation id already replayed another receipt.');
      return { value: previous, audit: false };
    }
    await priorResult(replays, request, receiptId);
    const [deadLetter] = await replays.lockDeadLetters([receiptId]);
    if (!deadLetter) refuseSettlement(request, 'CONFLICT', NOT_DEAD_LETTERED);
    const nowMs = await replays.serverNowMs();
    const [record] = await replays.replay([{ deadLetter, operationId }], { actor, note, nowMs, bulkJob: null });
    if (!record) throw new Error('replay recorded nothing');
    return {
      value: record,
      audit: true,
      before: deadLetterSummary(deadLetter),
      after: { queued: 'pending_observation', attempts: 0, visibleAtMs: nowMs },
    };
  });
}

const NOT_DEAD_LETTERED = 'The receipt is not dead-lettered (already replayed, discarded, or never failed).';

/** Deletes a dead letter for good (docs/design.md#discard-and-requeue); its JSON lives on in the audit event. */
export function discardDeadLetter(
  deps: SettlementServiceDeps,
  actor: Actor,
  input: DeadLetterActionInput,
): Promise<ServiceResult<DiscardResult>> {
  const { receiptId, operationId } = input;
  const request = requestWithId(actor, DISCARD_ACTION, input);
  return runSettlementAction(deps, request, async ({ replays }) => {
    await replays.lockOperation(operationId);
    const previous = await priorResult<DiscardResult>(replays, request, receiptId);
    if (previous) return { value: previous, audit: false };
    const [deadLetter] = await replays.lockDeadLetters([receiptId]);
    if (!deadLetter) refuseSettlement(request, 'CONFLICT', NOT_DEAD_LETTERED);
    const nowMs = await replays.serverNowMs();
    await replays.discard(deadLetter, nowMs);
    const value: DiscardResult = { ...deadLetterSummary(deadLetter), receiptId, discardedAtMs: nowMs };
    return { value, audit: true, before: deadLetterSummary(deadLetter), after: value };
  });
}

/** Makes a retry-scheduled settlement due now (docs/design.md#discard-and-requeue), guarded by its row version. */
export function requeueSettlement(
  deps: SettlementServiceDeps,
  actor: Actor,
  input: RequeueInput,
): Promise<ServiceResult<RequeueResult>> {
  const { receiptId, operationId, expectedRowVersion } = input;
  const request = requestWithId(actor, REQUEUE_ACTION, input);
  return runSettlementAction(deps, request, async ({ replays }) => {
    await replays.lockOperation(operationId);
    const previous = await priorResult<RequeueResult>(replays, request, receiptId);
    if (previous) return { value: previous, audit: false };
    const attempt = await replays.lockAttempt(receiptId);
    const nowMs = await replays.serverNowMs();
    const refusal = requeueRefusal(attempt, expectedRowVersion, nowMs);
    if (refusal) refuseSettlement(request, 'CONFLICT', requeueRefusalMessage(refusal, expectedRowVersion));
    if (!attempt) throw new Error('unreachable: a missing attempt is refused');
    const moved = await replays.requeue(receiptId, expectedRowVersion, nowMs);
    if (!moved) refuseSettlement(request, 'CONFLICT', 'The settlement changed while it was being requeued; reload it.');
    const value: RequeueResult = { receiptId, nextVisibleAtMs: moved.nextVisibleAtMs, rowVersion: moved.rowVersion };
    return { value, audit: true, before: requeueAuditBefore(attempt), after: value };
  });
}
