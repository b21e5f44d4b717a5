import { sql, type SQL } from 'drizzle-orm';
import { ACTIVE_STATUSES } from '../../domain/batch-status';
import { runtimeServerTimeMs, runtimeStaleBefore } from '../runtime-time';
import { textList } from './text-list';

/**
 * The SQL form of `isStaleExecution` (lib/domain/batch-status.ts): an active execution
 * not updated for longer than the threshold, by the runtime's clock expression.
 * `alias` qualifies the columns (a constant, never input); `now` defaults to the
 * server's clock and is fixed only by the test that holds this and the TS rule together.
 */
export function staleExecution(thresholdMs: number, alias?: string, now: SQL = runtimeServerTimeMs): SQL {
  const column = (name: string) => sql.raw(alias ? `${alias}.${name}` : name);
  return sql`(${column('status')} in (${textList(ACTIVE_STATUSES)})
             and ${runtimeStaleBefore(column('updated_at'), thresholdMs, now)})`;
}
