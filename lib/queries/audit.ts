import 'server-only';
import { and, asc, desc, eq, gte, lt, notInArray, notLike, sql, type SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import type { DbOrTx } from '../db/client';
import * as schema from '../db/schema';
import { auditEvent } from '../db/schema/keel';
import type { AuditFilters } from '../domain/audit-filters';
import { COUNT_CAP, decodeCursor, encodeCursor, type CappedCount } from '../domain/cursor';
import { can, type Role } from '../domain/roles';
import type { AuditEventView, AuditPage } from './audit-types';

/**
 * The audit log read model: newest first, keyset-paged on (at, id) in both
 * directions, never OFFSET. Every filter has an index that leads with it
 * (audit_event_{actor,action,target,outcome}_idx end in at, id). Every read takes its
 * reader, so what the reader may see is decided here for the page, the API and the CSV.
 */
export const AUDIT_PAGE_SIZE = 50;

/** Who reads the log (a signed-in actor): the rows they may see depend on their role. */
export interface AuditReader {
  role: Role;
}

/**
 * Rows about user administration and sign-in: user.create with name and role, role
 * changes, disable reasons, lockouts and SSO sign-ins naming users, refused SSO subjects
 * with their groups. Together they rebuild the user directory, which only manageUsers may
 * read (/users), so every other reader's list, count and export leave them out.
 * (`auth.*` actions are all on these kinds today; the prefix keeps a new one out too.)
 */
export const USER_ADMINISTRATION_TARGET_KINDS = ['user', 'sso_subject', 'sso_provider'] as const;
const SIGN_IN_ACTIONS = 'auth.%';

function readableBy(reader: AuditReader): SQL | undefined {
  if (can(reader.role, 'manageUsers')) return undefined;
  return and(
    notInArray(auditEvent.targetKind, [...USER_ADMINISTRATION_TARGET_KINDS]),
    notLike(auditEvent.action, SIGN_IN_ACTIONS),
  );
}

interface AuditCursor {
  direction: 'older' | 'newer';
  at: string;
  id: number;
}

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The cursor, null for the first page, or 'invalid' for one this server did not make. */
export function parseAuditCursor(raw: string | undefined): AuditCursor | null | 'invalid' {
  if (!raw) return null;
  const values = decodeCursor(raw, 3);
  if (!values) return 'invalid';
  const [direction, at, id] = values;
  if ((direction !== 'older' && direction !== 'newer') || typeof at !== 'string' || !ISO_MICROS.test(at))
    return 'invalid';
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return 'invalid';
  return { direction, at, id };
}

const cursorFor = (direction: AuditCursor['direction'], row: AuditEventView) =>
  encodeCursor([direction, row.at, row.id]);

// Microseconds matter: a millisecond Date in the cursor would skip or repeat rows.
const AT_TEXT = sql<string>`to_char(${auditEvent.at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const VIEW_COLUMNS = {
  id: auditEvent.id,
  at: AT_TEXT,
  actorLogin: auditEvent.actorLogin,
  actorRole: auditEvent.actorRole,
  action: auditEvent.action,
  targetKind: auditEvent.targetKind,
  targetId: auditEvent.targetId,
  reason: auditEvent.reason,
  outcome: auditEvent.outcome,
  code: auditEvent.code,
  digest: auditEvent.digest,
  operationId: auditEvent.operationId,
  requestId: auditEvent.requestId,
  before: auditEvent.before,
  after: auditEvent.after,
};

/** The rows the reader may see that match the filters; a filter naming a hidden kind matches nothing. */
function auditWhere(reader: AuditReader, filters: AuditFilters): SQL | undefined {
  return and(
    readableBy(reader),
    filters.actor ? eq(auditEvent.actorLogin, filters.actor) : undefined,
    filters.action ? eq(auditEvent.action, filters.action) : undefined,
    filters.targetKind ? eq(auditEvent.targetKind, filters.targetKind) : undefined,
    filters.targetId ? eq(auditEvent.targetId, filters.targetId) : undefined,
    filters.outcome ? eq(auditEvent.outcome, filters.outcome) : undefined,
    filters.from ? gte(auditEvent.at, new Date(filters.from)) : undefined,
    filters.to ? lt(auditEvent.at, new Date(filters.to)) : undefined,
  );
}

function keyset(cursor: AuditCursor): SQL {
  const operator = cursor.direction === 'older' ? sql`<` : sql`>`;
  return sql`(${auditEvent.at}, ${auditEvent.id}) ${operator} (${cursor.at}::timestamptz, ${cursor.id})`;
}

/** Matching rows, exact up to COUNT_CAP: the count stops reading at the cap. */
export async function countAuditEvents(db: DbOrTx, reader: AuditReader, filters: AuditFilters): Promise<CappedCount> {
  const capped = db
    .select({ one: sql<number>`1`.as('one') })
    .from(auditEvent)
    .where(auditWhere(reader, filters))
    .limit(COUNT_CAP + 1)
    .as('capped');
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(capped);
  const n = row?.n ?? 0;
  return { value: Math.min(n, COUNT_CAP), capped: n > COUNT_CAP };
}

export async function listAuditEvents(
  db: DbOrTx,
  reader: AuditReader,
  filters: AuditFilters,
  cursor: AuditCursor | null,
  pageSize = AUDIT_PAGE_SIZE,
): Promise<AuditPage> {
  const newer = cursor?.direction === 'newer';
  const [rows, count, now] = await Promise.all([
    db
      .select(VIEW_COLUMNS)
      .from(auditEvent)
      .where(and(auditWhere(reader, filters), cursor ? keyset(cursor) : undefined))
      .orderBy(...(newer ? [asc(auditEvent.at), asc(auditEvent.id)] : [desc(auditEvent.at), desc(auditEvent.id)]))
      .limit(pageSize + 1),
    countAuditEvents(db, reader, filters),
    db.execute<{ now: string }>(
      sql`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`,
    ),
  ]);
  const more = rows.length > pageSize;
  const page = rows.slice(0, pageSize);
  if (newer) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];
  // Coming back from older pages, older rows exist; going forward from a cursor, newer ones do.
  const hasOlder = newer ? cursor !== null : more;
  const hasNewer = newer ? more : cursor !== null;
  return {
    rows: page,
    count,
    nextCursor: hasOlder && last ? cursorFor('older', last) : null,
    prevCursor: hasNewer && first ? cursorFor('newer', first) : null,
    serverNow: now.rows[0]!.now,
  };
}

/**
 * Every matching row, newest first, in batches read from one REPEATABLE READ
 * snapshot, so a long download is consistent however many rows arrive meanwhile.
 * Stopping the iteration (a cancelled download) releases the connection.
 */
export async function* streamAuditEvents(
  pool: pg.Pool,
  reader: AuditReader,
  filters: AuditFilters,
  batchSize = 1_000,
): AsyncGenerator<AuditEventView[]> {
  const client = await pool.connect();
  let broken = false;
  // A session the server ends while it is checked out (idle_in_transaction_session_timeout,
  // a restart) emits 'error' on the client: unheard, that would crash the process.
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  try {
    await client.query('begin isolation level repeatable read read only');
    const db = drizzle(client, { schema });
    let cursor: AuditCursor | null = null;
    for (;;) {
      const rows: AuditEventView[] = await db
        .select(VIEW_COLUMNS)
        .from(auditEvent)
        .where(and(auditWhere(reader, filters), cursor ? keyset(cursor) : undefined))
        .orderBy(desc(auditEvent.at), desc(auditEvent.id))
        .limit(batchSize);
      if (rows.length > 0) yield rows;
      const last = rows[rows.length - 1];
      if (rows.length < batchSize || !last) break;
      cursor = { direction: 'older', at: last.at, id: last.id };
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    client.off('error', onError);
    client.release(broken);
  }
}
