import 'server-only';
import type { Actor } from '../domain/actor';
import { isFailureCategory } from '../domain/batch-status';
import { isReasonCode, REASON_CODE_MESSAGE } from '../domain/identifier-patterns';
import { isDigestHex } from '../domain/retry-key';
import { confirmAbandon } from './abandon-execution';
import { confirmBatchTakeover } from './confirm-batch-takeover';
import { confirmOrchestrationTakeover } from './confirm-orchestration-takeover';
import type { ConfirmTakeoverInput, ConfirmTakeoverValue } from './confirm-takeover-types';
import { passGate } from './proposal-gate';
import {
  failure,
  isCount,
  isOptionalText,
  isPositiveId,
  proposalContext,
  refuse,
  type RecoveryServiceDeps,
  type ServiceResult,
} from './recovery-common';

export type { ConfirmTakeoverInput, ConfirmTakeoverValue } from './confirm-takeover-types';

/** Shape checks that need no database; the rules that need the proposal run under its lock. */
function inputProblem(input: ConfirmTakeoverInput): string | null {
  if (!isPositiveId(input.proposalId)) return 'proposalId must be a positive integer';
  if (!isDigestHex(input.evidenceDigest)) return 'evidenceDigest must be 64 lowercase hex digits';
  if (input.expectedVersion != null && !isCount(input.expectedVersion)) return 'expectedVersion must be a whole number';
  if (input.expectedFencingToken != null && !isCount(input.expectedFencingToken))
    return 'expectedFencingToken must be a whole number';
  if (
    input.resultingStatus !== undefined &&
    input.resultingStatus !== 'FAILED' &&
    input.resultingStatus !== 'ABANDONED'
  ) {
    return 'resultingStatus must be FAILED or ABANDONED';
  }
  if (input.failureCategory != null) {
    if (!isFailureCategory(input.failureCategory)) return 'failureCategory is not a failure category';
    if (input.resultingStatus !== 'FAILED') return 'failureCategory applies to FAILED only';
  }
  if (input.reasonCode != null && !isReasonCode(input.reasonCode)) return `reasonCode: ${REASON_CODE_MESSAGE}`;
  if (input.acknowledged !== undefined && typeof input.acknowledged !== 'boolean')
    return 'acknowledged must be a boolean';
  if (!isOptionalText(input.reason)) return 'reason is too long';
  return null;
}

/**
 * Step 3 of the guarded takeover (docs/design.md#guarded-takeover), in one transaction: lock the
 * proposal, then the target row; apply the wait and actor rules; re-read the
 * evidence; then take over. Two approvers at once: the second waits on the proposal
 * lock and then finds it decided.
 */
export async function confirmTakeover(
  deps: RecoveryServiceDeps,
  actor: Actor,
  input: ConfirmTakeoverInput,
): Promise<ServiceResult<ConfirmTakeoverValue>> {
  return deps.uow.transaction(async (ports) => {
    const problem = inputProblem(input);
    const unknownProposal = {
      action: 'recovery.confirm',
      target: { kind: 'recovery_proposal', id: String(input.proposalId) },
      reason: typeof input.reason === 'string' ? input.reason : null,
    };
    if (problem)
      return refuse(
        ports.audit,
        actor,
        unknownProposal,
        failure('INVALID_INPUT', `The confirmation is not valid: ${problem}.`),
      );
    const locked = await ports.proposals.lockForDecision(input.proposalId);
    if (!locked) {
      return refuse(
        ports.audit,
        actor,
        unknownProposal,
        failure('PROPOSAL_NOT_FOUND', `Proposal ${input.proposalId} does not exist.`),
      );
    }
    const { proposal } = locked;
    const context = proposalContext('recovery.confirm', proposal, input.reason);
    if (proposal.target.kind === 'batch') {
      await ports.executions.lockExecution(proposal.target.executionId);
      const gate = await passGate(ports, actor, locked, context, 'decide');
      if (gate) return gate;
      if (proposal.kind === 'ABANDON') return confirmAbandon(deps, ports, actor, { proposal, context, input });
      return confirmBatchTakeover(deps, ports, actor, { proposal, context, input });
    }
    const loaded = await ports.checkpoints.load(proposal.target.executionId, { forUpdate: true });
    const gate = await passGate(ports, actor, locked, context, 'decide');
    return gate ?? confirmOrchestrationTakeover(deps, ports, actor, { proposal, context, input, loaded });
  });
}
