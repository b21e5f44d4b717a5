'use server';

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
export const proposeTakeover = action(proposeTakeoverSchema, 'recovery.propose', async (actor, input) => {
  const result = await proposeRecovery(recoveryDeps(), actor, input);
  return result.ok
    ? { ok: true, value: { proposalId: result.value.proposal.id, created: result.value.created } }
    : result;
});

/** Step 3: an approver who is not the proposer confirms against the digest they saw. */
export const confirmProposal = action(confirmTakeoverSchema, 'recovery.confirm', async (actor, input) => {
  const result = await confirmTakeover(recoveryDeps(), actor, input);
  if (!result.ok) return result;
  const v = result.value;
  type Confirmed =
    | { kind: 'batch' | 'abandon'; resultingStatus: string; version: number }
    | { kind: 'orchestration'; leaseOwner: string; fencingToken: number };
  const value: Confirmed =
    v.kind === 'orchestration'
      ? { kind: v.kind, leaseOwner: v.leaseOwner, fencingToken: v.fencingToken }
      : { kind: v.kind, resultingStatus: v.resultingStatus, version: v.version };
  return { ok: true, value };
});

export const rejectRecoveryProposal = action(rejectProposalSchema, 'recovery.reject', async (actor, input) => {
  const result = await rejectProposal(recoveryDeps(), actor, input);
  return result.ok ? { ok: true, value: { status: result.value.proposal.status as string } } : result;
});

/** Step 1 of abandoning an execution: an approver or admin asks; another one confirms. */
export const proposeExecutionAbandon = action(
  proposeAbandonSchema,
  'execution.abandon.propose',
  async (actor, input) => {
    const result = await proposeAbandon(recoveryDeps(), actor, input);
    return result.ok
      ? { ok: true, value: { proposalId: result.value.proposal.id, created: result.value.created } }
      : result;
  },
);

export const cancelRecoveryProposal = action(cancelProposalSchema, 'recovery.cancel', async (actor, input) => {
  const result = await cancelProposal(recoveryDeps(), actor, input);
  return result.ok ? { ok: true, value: { status: result.value.proposal.status as string } } : result;
});

export const requestExecutionStop = action(requestStopSchema, 'execution.request_stop', async (actor, input) => {
  const result = await requestStop(recoveryDeps(), actor, input);
  return result.ok ? { ok: true, value: { changed: result.value.changed } } : result;
});
