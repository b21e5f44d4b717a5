import { routeHandler } from '@/lib/reads/define-read';
import { userList } from '@/lib/reads/users';

export const dynamic = 'force-dynamic';

/** GET /api/users?role=&status=&cursor= : admins only, like the page. */
export const GET = routeHandler(userList);
