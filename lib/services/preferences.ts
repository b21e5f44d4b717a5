import 'server-only';
import type { Actor } from '../domain/actor';
import type { TimeZoneSetting } from '../domain/preferences';
import { ok } from '../domain/result';
import { mayTake } from '../domain/roles';
import type { TimeZonePreference } from '../domain/time-zone';
import type { PreferencePorts } from '../ports/user-preferences';
import type { UnitOfWork } from '../ports/unit-of-work';
import { refuse, serviceError, transact, type ServiceResult } from './kernel';

/**
 * Sets where the actor sees times (docs/console.md#time-zone): their own row only, any
 * role. The change and its `user.time_zone` audit event commit together; a refusal
 * commits only its event; the preference they already have changes nothing and writes
 * no event.
 */
export async function setTimeZonePreference(
  ports: { unitOfWork: UnitOfWork<PreferencePorts> },
  actor: Actor,
  input: TimeZoneSetting,
): Promise<ServiceResult<{ timeZone: TimeZonePreference; changed: boolean }>> {
  // The schema (timeZoneSettingSchema) made the zone a preference in Intl's spelling.
  const preference = input.timeZone;
  const event = { actor, action: 'user.time_zone', target: { kind: 'user', id: actor.login } };
  const refusePreference = (code: 'FORBIDDEN' | 'NOT_FOUND', message: string): never =>
    refuse(serviceError(code, message), { ...event, reason: message });
  return transact(ports.unitOfWork, async (tx) => {
    if (!mayTake(actor.role, 'user.time_zone'))
      refusePreference('FORBIDDEN', `The ${actor.role} role may not do this.`);
    const current = await tx.preferences.lockTimeZone(actor.id);
    if (current === null) return refusePreference('NOT_FOUND', 'Your account no longer exists.');
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
