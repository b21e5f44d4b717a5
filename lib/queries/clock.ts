import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';

/** The database server's clock: every relative time on a page is measured against it. */
export async function serverNow(db: DbOrTx): Promise<Date> {
  const result = await db.execute<{ now: Date }>(sql`select clock_timestamp() as now`);
  return new Date(result.rows[0]!.now);
}
