import { userListQuerySchema } from '@/lib/domain/users';
import { listUsers, parseUserCursor } from '@/lib/queries/users';
import { apiRoute } from '@/lib/server/api-route';
import { primaryDb } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/users?role=&status=&cursor= : admins only, like the page. */
export const GET = apiRoute('manageUsers', userListQuerySchema, async (_actor, { cursor, ...filters }) => {
  const after = parseUserCursor(cursor);
  if (after === 'invalid') {
    return Response.json(
      {
        code: 'INVALID_INPUT',
        message: 'Some query parameters are not valid.',
        fieldErrors: { cursor: ['This cursor was not made by Keel.'] },
      },
      { status: 400, headers: { 'Cache-Control': 'no-store' } },
    );
  }
  return listUsers(primaryDb(), filters, after);
});
