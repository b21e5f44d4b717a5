import 'server-only';
import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { user } from '../db/schema/auth';
import { DEFAULT_TIME_ZONE_PREFERENCE, type TimeZonePreference } from '../domain/time-zone';

/** The user's time zone preference ('utc' for a user who is gone: the page is about to sign them out anyway). */
export async function readTimeZonePreference(db: DbOrTx, userId: string): Promise<TimeZonePreference> {
  const [row] = await db.select({ timeZone: user.timeZone }).from(user).where(eq(user.id, userId));
  return row?.timeZone ?? DEFAULT_TIME_ZONE_PREFERENCE;
}
