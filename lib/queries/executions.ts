import 'server-only';
import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { obJobExecution, obJobInstance } from '../db/schema/oxide-batch';
import { isBatchStatus } from '../domain/batch-status';

export const EXECUTION_PAGE_SIZE = 50;

export interface ExecutionRow {
  id: number;
  jobName: string;
  status: string;
  attempt: number;
  version: number;
  updatedAt: Date;
  owner: 'ABSENT' | 'OTHER_PROCESS';
  stopRequested: boolean;
}

/**
 * Executions newest first, keyset-paged on id. The owner token is reduced to
 * present/absent in SQL; the bytes never leave the database.
 */
export async function listExecutions(
  db: DbOrTx,
  filters: { status?: string; before?: number },
): Promise<{ rows: ExecutionRow[]; nextCursor: number | null }> {
  const where = and(
    filters.status && isBatchStatus(filters.status) ? eq(obJobExecution.status, filters.status) : undefined,
    filters.before ? lt(obJobExecution.id, filters.before) : undefined,
  );
  const rows = await db
    .select({
      id: obJobExecution.id,
      jobName: obJobInstance.jobName,
      status: obJobExecution.status,
      attempt: obJobExecution.attempt,
      version: obJobExecution.version,
      updatedAt: obJobExecution.updatedAt,
      owner: sql<'ABSENT' | 'OTHER_PROCESS'>`case when ${obJobExecution.ownerToken} is null then 'ABSENT' else 'OTHER_PROCESS' end`,
      stopRequested: sql<boolean>`${obJobExecution.stopRequestedAt} is not null`,
    })
    .from(obJobExecution)
    .innerJoin(obJobInstance, eq(obJobInstance.id, obJobExecution.jobInstanceId))
    .where(where)
    .orderBy(desc(obJobExecution.id))
    .limit(EXECUTION_PAGE_SIZE + 1);
  const page = rows.slice(0, EXECUTION_PAGE_SIZE);
  return { rows: page, nextCursor: rows.length > EXECUTION_PAGE_SIZE ? (page[page.length - 1]?.id ?? null) : null };
}
