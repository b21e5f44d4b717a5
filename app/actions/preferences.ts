'use server';

import { timeZoneSettingSchema } from '@/lib/domain/preferences';
import { action } from '@/lib/server/action';
import { preferencePorts } from '@/lib/server/composition-root';
import { setTimeZonePreference } from '@/lib/services/preferences';

/** Where the signed-in user sees times: 'utc', 'browser' or a zone name (docs/console.md#time-zone). */
export const setTimeZoneAction = action(timeZoneSettingSchema, 'user.time_zone', (actor, input) =>
  setTimeZonePreference(preferencePorts(), actor, input),
);
