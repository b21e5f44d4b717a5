import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { Database, DbOrTx } from '../db/client';
import { ownerObservation } from '../db/sql/owner-observation';
import { staleExecution } from '../db/sql/stale-execution';
import { RUNTIME_INDEXES } from '../db/runtime-indexes';
import { decodeCursor, encodeCursor } from '../domain/cursor';
import { filterKey } from './capped-count-memory';
import { countUpToCap, type ListCount } from './count';
import { readLastSample, sampledFigure } from './last-sample';
import { METRICS } from '../observability/metric-catalogue';
import type { ExecutionFilterWords, ExecutionListItem, ExecutionPage } from './executions-types';

export { executionFiltersSchema } from './executions-types';
export type { ExecutionListItem, ExecutionPage };

export const EXECUTION_PAGE_SIZE = 50;

/** The executions filters and the decoded keyset cursor: `[updated_at in microseconds, id]`. */
export type ExecutionCursor = [updatedUs: string, id: number];
export type ExecutionFilters = ExecutionFilterWords & { cursor?: ExecutionCursor | null };

/** A cursor this list gave out, or 'invalid' (refused on its field by the read's schema, lib/reads/executions.ts). */
export function parseExecutionCursor(raw: string | undefined): ExecutionCursor | null | 'invalid' {
  if (!raw) return null;
  const values = decodeCursor(raw, 2);
  if (!values) return 'invalid';
  const [updatedUs, id] = values;
  if (typeof updatedUs !== 'string' || !/^-?\d{1,19}$/.test(updatedUs)) return 'invalid';
  return typeof id === 'number' && Number.isSafeInteger(id) ? [updatedUs, id] : 'invalid';
}

interface ListRow extends Record<string, unknown> {
  now: string;
  id: number;
  job_name: string;
  instance_id: number;
  status: string;
  attempt: number;
  version: number;
  updated_at: string;
  updated_us: string;
  stale: boolean;
  owner: ExecutionListItem['owner'];
  stop_requested: boolean;
  failure_category: string | null;
}

function whereClause(filters: ExecutionFilters, staleThresholdMs: number): SQL {
  const parts: SQL[] = [sql`true`];
  if (filters.status) parts.push(sql`e.status = ${filters.status}`);
  if (filters.job) parts.push(sql`i.job_name = ${filters.job}`);
  if (filters.stale) {
    parts.push(staleExecution(staleThresholdMs, 'e'));
  }
  if (filters.updatedFrom) parts.push(sql`e.updated_at >= ${filters.updatedFrom}::timestamptz`);
  if (filters.updatedTo) parts.push(sql`e.updated_at < ${filters.updatedTo}::timestamptz`);
  if (filters.q) parts.push(sql`(e.id = ${filters.q}::bigint or e.job_instance_id = ${filters.q}::bigint)`);
  return sql.join(parts, sql` and `);
}

/**
 * Executions, most recently updated first, keyset-paged on (updated_at, id) with the
 * cursor in microseconds, so no row is skipped or repeated between pages. The owner
 * token is compared in SQL; its bytes are never selected.
 */
export async function listExecutions(
  db: Database,
  filters: ExecutionFilters,
  context: { staleThresholdMs: number; ownerToken: Buffer },
): Promise<ExecutionPage> {
  // With a status filter the runtime's own (status, updated_at, id) index serves the
  // order; without one it needs Keel's index, which an attached schema may lack.
  if (filters.status || !(await lacksUpdatedIndex(db))) return readPage(db, filters, context, null);
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local statement_timeout = '5s'`);
    return readPage(tx, filters, context, UNINDEXED_WARNING);
  });
}

export const UNINDEXED_WARNING =
  'This database lacks the index for this view, so it runs under a 5-second statement timeout. ' +
  'Filter by status, or have an operator run `npm run keel -- runtime-indexes --apply`.';

const UPDATED_INDEX = RUNTIME_INDEXES[0]!.name;
// Checked at most once a minute per database handle: creating the index takes effect without a restart.
const indexChecks = new WeakMap<Database, { at: number; missing: boolean }>();

async function lacksUpdatedIndex(db: Database): Promise<boolean> {
  const cached = indexChecks.get(db);
  if (cached && Date.now() - cached.at < 60_000) return cached.missing;
  const found = await db.execute(
    sql`select 1 from pg_indexes where schemaname = 'oxide_batch' and indexname = ${UPDATED_INDEX}`,
  );
  const check = { at: Date.now(), missing: found.rows.length === 0 };
  indexChecks.set(db, check);
  return check.missing;
}

async function readPage(
  db: DbOrTx,
  filters: ExecutionFilters,
  context: { staleThresholdMs: number; ownerToken: Buffer },
  indexWarning: string | null,
): Promise<ExecutionPage> {
  const where = whereClause(filters, context.staleThresholdMs);
  const cursor = filters.cursor;
  const after = cursor
    ? sql`and (e.updated_at, e.id) < (timestamptz 'epoch' + ${cursor[0]}::bigint * interval '1 microsecond',
          ${cursor[1]}::bigint)`
    : sql``;
  const [page, total] = await Promise.all([
    db.execute<ListRow>(sql`
      select clock_timestamp() as now, e.id, i.job_name, e.job_instance_id as instance_id, e.status, e.attempt,
      e.version,
             e.updated_at, (extract(epoch from e.updated_at) * 1000000)::bigint::text as updated_us,
             ${staleExecution(context.staleThresholdMs, 'e')} as stale,
             ${ownerObservation(sql`e.owner_token`, context.ownerToken)} as owner,
             e.stop_requested_at is not null as stop_requested, e.failure_category
      from oxide_batch.ob_job_execution e
      join oxide_batch.ob_job_instance i on i.id = e.job_instance_id
      where ${where} ${after}
      order by e.updated_at desc, e.id desc
      limit ${EXECUTION_PAGE_SIZE + 1}`),
    countExecutions(db, filters, where, context.staleThresholdMs),
  ]);
  // The server's clock comes with the rows; an empty page asks for it alone.
  const now =
    page.rows[0]?.now ?? (await db.execute<{ now: string }>(sql`select clock_timestamp() as now`)).rows[0]!.now;
  const rows = page.rows.slice(0, EXECUTION_PAGE_SIZE);
  const last = rows[rows.length - 1];
  return {
    items: rows.map((r) => ({
      id: Number(r.id),
      jobName: r.job_name,
      instanceId: Number(r.instance_id),
      status: r.status,
      attempt: r.attempt,
      version: Number(r.version),
      updatedAt: new Date(r.updated_at).toISOString(),
      stale: r.stale,
      owner: r.owner,
      stopRequested: r.stop_requested,
      failureCategory: r.failure_category,
    })),
    nextCursor:
      page.rows.length > EXECUTION_PAGE_SIZE && last ? encodeCursor([last.updated_us, Number(last.id)]) : null,
    total,
    serverNow: new Date(now).toISOString(),
    indexWarning,
  };
}

/**
 * Estimated first, counted up to the cap when small (lib/queries/count.ts); the instance
 * join only when the job filter needs it. The stale filter reads the clock inside the
 * statement, so the planner's estimate of it is a guess: those rows are always counted.
 */
async function countExecutions(
  db: DbOrTx,
  filters: ExecutionFilters,
  where: SQL,
  staleThresholdMs: number,
): Promise<ListCount> {
  const from = filters.job
    ? sql`oxide_batch.ob_job_execution e join oxide_batch.ob_job_instance i on i.id = e.job_instance_id`
    : sql`oxide_batch.ob_job_execution e`;
  // The stale filter alone is what the sampler counts (batch_stale_executions): its figure saves reading the rows.
  const staleOnly =
    filters.stale && !filters.status && !filters.job && !filters.updatedFrom && !filters.updatedTo && !filters.q;
  const sampled = staleOnly ? sampledFigure(await readLastSample(db), METRICS.staleExecutions) : null;
  const { cursor: _, ...filter } = filters;
  // The stale filter's rows depend on the threshold it is read with.
  const rememberAs = filterKey('executions', filters.stale ? { ...filter, staleThresholdMs } : filter);
  return countUpToCap(db, from, where, { blindEstimate: Boolean(filters.stale), sampled, rememberAs });
}

/** Job names for the filter menu. */
export async function listJobNames(db: DbOrTx): Promise<string[]> {
  const result = await db.execute<{ job_name: string }>(
    sql`select distinct job_name from oxide_batch.ob_job_definition order by job_name`,
  );
  return result.rows.map((r) => r.job_name);
}
