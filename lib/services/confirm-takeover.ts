import 'server-only';
import type { Actor } from '../domain/actor';
import { confirmAbandon } from './abandon-execution';
import { confirmBatchTakeover } from './confirm-batch-takeover';
import { confirmOrchestrationTakeover } from './confirm-orchestration-takeover';
import type { ConfirmTakeoverInput, ConfirmTakeoverValue } from './confirm-takeover-types';
import { transact, type ServiceResult } from './kernel';
import { passGate } from './proposal-gate';
import { proposalContext, refuseRecovery, type RecoveryServiceDeps } from './recovery-common';

export type { ConfirmTakeoverInput, ConfirmTakeoverValue } from './confirm-takeover-types';

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
  return transact(deps.unitOfWork, async (ports) => {
    const unknownProposal = {
      action: 'recovery.confirm',
      target: { kind: 'recovery_proposal', id: String(input.proposalId) },
      reason: input.reason ?? null,
    };
    // The one rule between fields that the schema leaves to the use case.
    if (input.failureCategory != null && input.resultingStatus !== 'FAILED') {
      const message = 'The confirmation is not valid: failureCategory applies to FAILED only.';
      refuseRecovery(actor, unknownProposal, 'INVALID_INPUT', message);
    }
    const locked = await ports.proposals.lockForDecision(input.proposalId);
    if (!locked)
      refuseRecovery(actor, unknownProposal, 'PROPOSAL_NOT_FOUND', `Proposal ${input.proposalId} does not exist.`);
    const { proposal } = locked;
    const context = proposalContext('recovery.confirm', proposal, input.reason);
    if (proposal.target.kind === 'batch') {
      await ports.executions.lockExecution(proposal.target.executionId);
      await passGate(ports, actor, locked, context, 'decide');
      if (proposal.kind === 'ABANDON') return confirmAbandon(deps, ports, actor, { proposal, context, input });
      return confirmBatchTakeover(deps, ports, actor, { proposal, context, input });
    }
    const loaded = await ports.checkpoints.load(proposal.target.executionId, { forUpdate: true });
    await passGate(ports, actor, locked, context, 'decide');
    return confirmOrchestrationTakeover(deps, ports, actor, { proposal, context, input, loaded });
  });
}
