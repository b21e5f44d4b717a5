import { z } from 'zod';
import { parseTimeZonePreference, TIME_ZONE_MESSAGE } from './time-zone';

/**
 * A user's own settings (docs/console.md#time-zone). The time zone is 'utc', 'browser' or
 * a zone name Intl knows, stored in Intl's spelling; the preferences form checks the same
 * with parseTimeZonePreference (lib/domain/time-zone.ts, zod-free) before it sends.
 */
export const timeZoneSettingSchema = z
  .object({
    timeZone: z
      .string({ message: TIME_ZONE_MESSAGE })
      .max(64, TIME_ZONE_MESSAGE)
      .transform((value, context) => {
        const preference = parseTimeZonePreference(value);
        if (preference === null) {
          context.addIssue({ code: 'custom', message: TIME_ZONE_MESSAGE });
          return z.NEVER;
        }
        return preference;
      }),
  })
  .strict();

export type TimeZoneSetting = z.output<typeof timeZoneSettingSchema>;
