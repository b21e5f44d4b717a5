import 'server-only';
import { can } from '../domain/roles';
import { idPathSchema } from '../domain/path-segment';
import { decodedCursor } from '../domain/text';
import { readExecutionDetail } from '../queries/execution-detail';
import type { ExecutionDetailView } from '../queries/execution-detail-types';
import { executionFiltersSchema, listExecutions, listJobNames, parseExecutionCursor } from '../queries/executions';
import { assessBatchCandidate, type CandidateAssessment } from '../services/propose-recovery';
import { recoveryDeps, runtime } from '../server/composition-root';
import { defineRead } from './define-read';

/** The executions list with the page's filters and keyset cursor. */
export const executionList = defineRead({
  path: '/api/executions',
  permission: 'read',
  search: executionFiltersSchema.extend({ cursor: decodedCursor(200, parseExecutionCursor) }),
  source: 'list',
  read: (db, filters) => {
    const { settings, ownerToken } = runtime();
    return listExecutions(db, filters, { staleThresholdMs: settings.staleThresholdMs, ownerToken });
  },
});

/**
 * An execution's detail (steps, owner observation, history, audit) and, for a role that may
 * propose, whether a takeover may be requested now (or the rule it fails), so the page's
 * buttons follow the data.
 */
export const executionDetail = defineRead({
  path: '/api/executions/[id]',
  permission: 'read',
  args: idPathSchema,
  source: 'primary',
  read: async (db, _search, { actor, args }): Promise<ExecutionDetailView | null> => {
    const { settings, ownerToken } = runtime();
    const detail = await readExecutionDetail(db, args.id, { staleThresholdMs: settings.staleThresholdMs, ownerToken });
    if (!detail) return null;
    const pending = detail.proposals.some((p) => p.status === 'PENDING');
    const candidacy: CandidateAssessment =
      can(actor.role, 'proposeRecovery') && !pending
        ? await assessBatchCandidate(recoveryDeps(), detail.id)
        : { candidate: false, code: null, message: null };
    return { ...detail, candidacy };
  },
});

/** The runtime's job names, for the job filters of the executions and retry-key pages. */
export const jobNames = defineRead({
  path: '/api/job-names',
  permission: 'read',
  source: 'list',
  read: (db) => listJobNames(db),
});
