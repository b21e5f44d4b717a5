import { routeHandler } from '@/lib/reads/define-read';
import { auditList } from '@/lib/reads/audit';

export const dynamic = 'force-dynamic';

/** GET /api/audit?actor=&action=&targetKind=&targetId=&outcome=&from=&to=&cursor= : one page, newest first. */
export const GET = routeHandler(auditList);
