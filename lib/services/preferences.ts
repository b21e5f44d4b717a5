import 'server-only';
import type { Actor } from '../domain/actor';
import { err, ok, type Result } from '../domain/result';
import { mayTake } from '../domain/roles';
import { parseTimeZonePreference, TIME_ZONE_MESSAGE, type TimeZonePreference } from '../domain/time-zone';
import type { PreferencePorts } from '../ports/user-preferences';
import type { UnitOfWork } from '../ports/unit-of-work';

export interface PreferenceError {
  code: 'FORBIDDEN' | 'INVALID_INPUT' | 'NOT_FOUND';
  message: string;
}

/**
 * Sets where the actor sees times (docs/console.md#time-zone): their own row only, any
 * role. The change and its `user.time_zone` audit event commit together; a refusal
 * commits only its event; the preference they already have changes nothing and writes
 * no event.
 */
export async function setTimeZonePreference(
  ports: { unitOfWork: UnitOfWork<PreferencePorts> },
  actor: Actor,
  input: { timeZone: string },
  context: { requestId?: string } = {},
): Promise<Result<{ timeZone: TimeZonePreference; changed: boolean }, PreferenceError>> {
  const preference = parseTimeZonePreference(input.timeZone);
  return ports.unitOfWork.transaction(async (tx) => {
    const event = {
      actor,
      action: 'user.time_zone',
      target: { kind: 'user', id: actor.login },
      requestId: context.requestId ?? null,
    };
    const refuse = async (error: PreferenceError) => {
      await tx.audit.record({ ...event, outcome: 'REFUSED', code: error.code, reason: error.message });
      return err(error);
    };
    if (!mayTake(actor.role, 'user.time_zone'))
      return refuse({ code: 'FORBIDDEN', message: `The ${actor.role} role may not do this.` });
    // The action's schema refuses this first; a caller without the wrapper is refused the same way.
    if (preference === null) return refuse({ code: 'INVALID_INPUT', message: TIME_ZONE_MESSAGE });
    const current = await tx.preferences.lockTimeZone(actor.id);
    if (current === null) return refuse({ code: 'NOT_FOUND', message: 'Your account no longer exists.' });
    if (current === preference) return ok({ timeZone: preference, changed: false });
    await tx.preferences.setTimeZone(actor.id, preference);
    await tx.audit.record({
      ...event,
      outcome: 'APPLIED',
      before: { timeZone: current },
      after: { timeZone: preference },
    });
    return ok({ timeZone: preference, changed: true });
  });
}
