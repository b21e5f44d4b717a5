import { z } from 'zod';
import { idPathSchema } from '@/lib/domain/path-segment';
import { readProposal } from '@/lib/queries/recovery';
import { apiRoute } from '@/lib/server/api-route';
import { primaryDb } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/proposals/:id: a proposal with its evidence, markers, digest and deadline. */
export const GET = apiRoute(
  'read',
  z.object({}),
  async (_actor, _query, { path }) => readProposal(primaryDb(), path.id),
  { params: idPathSchema },
);
