import type { TimeZonePreference } from '../domain/time-zone';
import type { AuditLog } from './audit-log';

/** A user's own settings on `keel.user` (docs/console.md#time-zone). */
export interface UserPreferences {
  /** The user's time zone preference, their row locked for the rest of the transaction; null when no such user. */
  lockTimeZone(userId: string): Promise<TimeZonePreference | null>;
  setTimeZone(userId: string, preference: TimeZonePreference): Promise<void>;
}

export interface PreferencePorts {
  preferences: UserPreferences;
  audit: AuditLog;
}
