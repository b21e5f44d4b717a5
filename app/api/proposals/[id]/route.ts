import { z } from 'zod';
import { readProposal } from '@/lib/queries/recovery';
import { apiRoute } from '@/lib/server/api-route';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

const idSchema = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** GET /api/proposals/:id: a proposal with its evidence, markers, digest and deadline. */
export const GET = apiRoute('read', z.object({}), async (_actor, _query, context: { params: Promise<{ id: string }> }) => {
  const id = idSchema.safeParse((await context.params).id);
  if (!id.success) return Response.json({ code: 'INVALID_INPUT', message: 'Proposal ids are positive integers.' }, { status: 400 });
  return readProposal(runtime().db, id.data);
});
