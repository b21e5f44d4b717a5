import 'server-only';
import { idPathSchema } from '../domain/path-segment';
import { decodedCursor } from '../domain/text';
import { orchestrationPathSchema, readOrchestrationDetail } from '../queries/orchestration-detail';
import {
  listOrchestrationLeases,
  listProposals,
  parseProposalCursor,
  proposalFiltersSchema,
  readProposal,
} from '../queries/recovery';
import { orchestrationLeasesQuerySchema } from '../queries/recovery-types';
import { runtime } from '../server/composition-root';
import { defineRead } from './define-read';

/** Recovery proposals, newest first. */
export const proposalList = defineRead({
  path: '/api/proposals',
  permission: 'read',
  search: proposalFiltersSchema.extend({ cursor: decodedCursor(200, parseProposalCursor) }),
  source: 'list',
  read: (db, filters) => listProposals(db, filters),
});

/** A proposal with its evidence, markers, digest and deadline; from the primary, since it is decided on. */
export const proposalDetail = defineRead({
  path: '/api/proposals/[id]',
  permission: 'read',
  args: idPathSchema,
  source: 'primary',
  read: (db, _search, { args }) => readProposal(db, args.id),
});

/** Orchestration leases with owner, fencing token, expiry and whether the tag verifies (never the tag's key). */
export const orchestrationLeases = defineRead({
  path: '/api/orchestrations',
  permission: 'read',
  search: orchestrationLeasesQuerySchema,
  source: 'list',
  read: (db, { limit }) => listOrchestrationLeases(db, runtime().settings.checkpointKey!, limit),
});

/**
 * One checkpoint (completed nodes, wait, retry policy, compensation, snapshot digests) and
 * whether its tag verifies, with why not; never the key or the tag.
 */
export const orchestrationDetail = defineRead({
  path: '/api/orchestrations/[id]',
  permission: 'read',
  args: orchestrationPathSchema,
  source: 'primary',
  read: (db, _search, { args }) => readOrchestrationDetail(db, runtime().settings.checkpointKey, args.id),
});
