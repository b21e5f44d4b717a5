'use server';

import { mapOk } from '@/lib/domain/result';
import { action } from '@/lib/server/action';
import { recoveryDeps } from '@/lib/server/composition-root';
import { confirmTakeover } from '@/lib/services/confirm-takeover';
import { cancelProposal, rejectProposal } from '@/lib/services/decide-proposal';
import { proposeRecovery } from '@/lib/services/propose-recovery';
import { proposeAbandon } from '@/lib/services/abandon-execution';
import { requestStop } from '@/lib/services/request-stop';
import {
  cancelProposalSchema,
  confirmTakeoverSchema,
  proposeAbandonSchema,
  proposeTakeoverSchema,
  rejectProposalSchema,
  requestStopSchema,
} from './recovery-schemas';

/** Step 1 of the guarded takeover: an operator asks for a proposal (a pending one is returned). */
export const proposeTakeover = action(proposeTakeoverSchema, 'recovery.propose', async (actor, input) =>
  mapOk(await proposeRecovery(recoveryDeps(), actor, input), (v) => ({
    proposalId: v.proposal.id,
    created: v.created,
  })),
);

type Confirmed =
  | { kind: 'batch' | 'abandon'; resultingStatus: string; version: number }
  | { kind: 'orchestration'; leaseOwner: string; fencingToken: number };

/** Step 3: an approver who is not the proposer confirms against the digest they saw. */
export const confirmProposal = action(confirmTakeoverSchema, 'recovery.confirm', async (actor, input) =>
  mapOk(
    await confirmTakeover(recoveryDeps(), actor, input),
    (v): Confirmed =>
      v.kind === 'orchestration'
        ? { kind: v.kind, leaseOwner: v.leaseOwner, fencingToken: v.fencingToken }
        : { kind: v.kind, resultingStatus: v.resultingStatus, version: v.version },
  ),
);

export const rejectRecoveryProposal = action(rejectProposalSchema, 'recovery.reject', async (actor, input) =>
  mapOk(await rejectProposal(recoveryDeps(), actor, input), (v) => ({ status: v.proposal.status as string })),
);

/** Step 1 of abandoning an execution: an approver or admin asks; another one confirms. */
export const proposeExecutionAbandon = action(proposeAbandonSchema, 'execution.abandon.propose', async (actor, input) =>
  mapOk(await proposeAbandon(recoveryDeps(), actor, input), (v) => ({ proposalId: v.proposal.id, created: v.created })),
);

export const cancelRecoveryProposal = action(cancelProposalSchema, 'recovery.cancel', async (actor, input) =>
  mapOk(await cancelProposal(recoveryDeps(), actor, input), (v) => ({ status: v.proposal.status as string })),
);

export const requestExecutionStop = action(requestStopSchema, 'execution.request_stop', async (actor, input) =>
  mapOk(await requestStop(recoveryDeps(), actor, input), (v) => ({ changed: v.changed })),
);
