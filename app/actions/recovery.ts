'use server';

import { z } from 'zod';
import { action } from '@/lib/server/action';
import { recoveryDeps } from '@/lib/server/services';
import { confirmTakeover } from '@/lib/services/confirm-takeover';
import { cancelProposal, rejectProposal } from '@/lib/services/decide-proposal';
import { proposeRecovery } from '@/lib/services/propose-recovery';
import { proposeAbandon } from '@/lib/services/abandon-execution';
import { requestStop } from '@/lib/services/request-stop';
import { confirmTakeoverSchema, proposalIdSchema, proposeAbandonSchema, proposeTakeoverSchema, requestStopSchema } from './recovery-schemas';

/** Step 1 of the guarded takeover: an operator asks for a proposal (a pending one is returned). */
export const proposeTakeover = action(
  proposeTakeoverSchema,
  'proposeRecovery',
  async (actor, input) => {
    const result = await proposeRecovery(recoveryDeps(), actor, input);
    return result.ok ? { ok: true, value: { proposalId: result.value.proposal.id, created: result.value.created } } : result;
  },
  { name: 'recovery.propose' },
);

/** Step 3: an approver who is not the proposer confirms against the digest they saw. */
export const confirmProposal = action(
  confirmTakeoverSchema,
  'decideRecovery',
  async (actor, input) => {
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
  },
  { name: 'recovery.confirm' },
);

export const rejectRecoveryProposal = action(
  proposalIdSchema.extend({ reason: z.string().trim().min(1, 'Say why.').max(500) }),
  'decideRecovery',
  async (actor, input) => {
    const result = await rejectProposal(recoveryDeps(), actor, input);
    return result.ok ? { ok: true, value: { status: result.value.proposal.status as string } } : result;
  },
  { name: 'recovery.reject' },
);

/** Step 1 of abandoning an execution: an approver or admin asks; another one confirms. */
export const proposeExecutionAbandon = action(
  proposeAbandonSchema,
  'abandonExecution',
  async (actor, input) => {
    const result = await proposeAbandon(recoveryDeps(), actor, input);
    return result.ok ? { ok: true, value: { proposalId: result.value.proposal.id, created: result.value.created } } : result;
  },
  { name: 'execution.abandon.propose' },
);

export const cancelRecoveryProposal = action(
  proposalIdSchema.extend({ reason: z.string().trim().max(500).optional() }),
  'cancelProposal',
  async (actor, input) => {
    const result = await cancelProposal(recoveryDeps(), actor, input);
    return result.ok ? { ok: true, value: { status: result.value.proposal.status as string } } : result;
  },
  { name: 'recovery.cancel' },
);

export const requestExecutionStop = action(
  requestStopSchema,
  'requestStop',
  async (actor, input) => {
    const result = await requestStop(recoveryDeps(), actor, input);
    return result.ok ? { ok: true, value: { changed: result.value.changed } } : result;
  },
  { name: 'execution.request_stop' },
);
