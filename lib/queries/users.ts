import 'server-only';
import { and, asc, eq, gt, sql, type SQL } from 'drizzle-orm';
import { isRole } from '../domain/roles';
import type { DbOrTx } from '../db/client';
import { user } from '../db/schema/auth';
import { COUNT_CAP, decodeCursor, encodeCursor } from '../domain/cursor';
import type { UserListQuery } from '../domain/users';
import type { UserPage, UserView } from './users-types';

/** Users by username (the unique index keeps the keyset cheap), for admins. */
export const USER_PAGE_SIZE = 100;

/** The username after which the page starts, null for the first page, or 'invalid'. */
export function parseUserCursor(raw: string | undefined): string | null | 'invalid' {
  if (!raw) return null;
  const values = decodeCursor(raw, 1);
  return values && typeof values[0] === 'string' ? values[0] : 'invalid';
}

function filterWhere(query: Pick<UserListQuery, 'role' | 'status'>): SQL | undefined {
  return and(
    sql`${user.username} is not null`,
    query.role ? eq(user.role, query.role) : undefined,
    query.status === 'disabled' ? eq(user.banned, true) : undefined,
    query.status === 'active' ? sql`${user.banned} is not true` : undefined,
  );
}

export async function listUsers(
  db: DbOrTx,
  query: Pick<UserListQuery, 'role' | 'status'>,
  after: string | null,
  pageSize = USER_PAGE_SIZE,
): Promise<UserPage> {
  const where = filterWhere(query);
  const capped = db
    .select({ one: sql<number>`1`.as('one') })
    .from(user)
    .where(where)
    .limit(COUNT_CAP + 1)
    .as('capped');
  const [rows, counted, now] = await Promise.all([
    db
      .select({
        id: user.id,
        username: user.username,
        name: user.name,
        role: user.role,
        banned: user.banned,
        banReason: user.banReason,
        createdAt: sql<string>`to_char(${user.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
        runningBulkJobs: sql<number>`(select count(*)::int from keel.bulk_replay b where b.status = 'RUNNING'
                                     and b.started_by_id = keel."user".id)`,
      })
      .from(user)
      .where(and(where, after === null ? undefined : gt(user.username, after)))
      .orderBy(asc(user.username))
      .limit(pageSize + 1),
    db.select({ n: sql<number>`count(*)::int` }).from(capped),
    db.execute<{ now: string }>(
      sql`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as now`,
    ),
  ]);
  const page = rows.slice(0, pageSize).map(
    (r): UserView => ({
      id: r.id,
      username: r.username ?? '',
      name: r.name,
      role: r.role,
      knownRole: isRole(r.role),
      disabled: r.banned === true,
      disabledReason: r.banReason,
      createdAt: r.createdAt,
      runningBulkJobs: r.runningBulkJobs,
    }),
  );
  const n = counted[0]?.n ?? 0;
  const last = page[page.length - 1];
  return {
    rows: page,
    count: { value: Math.min(n, COUNT_CAP), capped: n > COUNT_CAP },
    nextCursor: rows.length > pageSize && last ? encodeCursor([last.username]) : null,
    serverNow: now.rows[0]!.now,
  };
}
