import { describe, expect, it } from 'vitest';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import { postgresPreferenceUnitOfWork } from '../../lib/adapters/user-preferences';
import type { Actor } from '../../lib/domain/actor';
import { timeZoneSettingSchema } from '../../lib/domain/preferences';
import { TIME_ZONE_MESSAGE } from '../../lib/domain/time-zone';
import { readTimeZonePreference } from '../../lib/queries/time-zone-preference';
import { action, type ActionDeps } from '../../lib/server/action';
import { auditCsvStream } from '../../lib/server/audit-export';
import { setTimeZonePreference } from '../../lib/services/preferences';
import { freshDatabase } from '../support/database';

/**
 * The time zone preference on real PostgreSQL, through action() (the real wrapper, with
 * its session and audit log bound to this database) and through the service alone.
 */
const { pool, db } = await freshDatabase();
const ports = { unitOfWork: postgresPreferenceUnitOfWork(db) };

async function user(username: string): Promise<Actor> {
  const id = `u-${username}`;
  await pool.query(`insert into keel."user" (id, name, email, username, role) values ($1, $2, $3, $2, 'viewer')`, [
    id,
    username,
    `${username}@users.keel.invalid`,
  ]);
  return { id, login: username, name: username, role: 'viewer' };
}

const setTimeZone = (actor: Actor | null) => {
  const deps: ActionDeps = {
    currentActor: async () => actor,
    auditLog: () => postgresAuditLog(db),
    fenceWrite: async () => {},
  };
  return action(timeZoneSettingSchema, 'user.time_zone', (who, input) => setTimeZonePreference(ports, who, input), {
    deps,
  });
};

const stored = async (actor: Actor) =>
  (await pool.query('select time_zone from keel."user" where id = $1', [actor.id])).rows[0].time_zone;
const events = async (actor: Actor) =>
  (
    await pool.query(
      `select action, target_kind, target_id, outcome, code, reason, before, after, request_id
         from keel.audit_event where actor_id = $1 order by id`,
      [actor.id],
    )
  ).rows;

describe('the time zone preference', () => {
  it('starts as utc; a change is stored in Intl’s spelling and audited with before and after', async () => {
    const viewer = await user('tz_viewer');
    expect(await stored(viewer)).toBe('utc');
    expect(await readTimeZonePreference(db, viewer.id)).toBe('utc');

    const result = await setTimeZone(viewer)({ timeZone: 'europe/berlin' });
    expect(result).toEqual({ ok: true, value: { timeZone: 'Europe/Berlin', changed: true } });
    expect(await stored(viewer)).toBe('Europe/Berlin');
    expect(await readTimeZonePreference(db, viewer.id)).toBe('Europe/Berlin');
    expect(await events(viewer)).toEqual([
      {
        action: 'user.time_zone',
        target_kind: 'user',
        target_id: 'tz_viewer',
        outcome: 'APPLIED',
        code: null,
        reason: null,
        before: { timeZone: 'utc' },
        after: { timeZone: 'Europe/Berlin' },
        request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);

    // The same again changes nothing and writes no event; browser and back to utc are changes.
    expect(await setTimeZone(viewer)({ timeZone: 'Europe/Berlin' })).toEqual({
      ok: true,
      value: { timeZone: 'Europe/Berlin', changed: false },
    });
    expect(await setTimeZone(viewer)({ timeZone: 'browser' })).toMatchObject({ ok: true, value: { changed: true } });
    expect(await setTimeZone(viewer)({ timeZone: 'UTC' })).toEqual({
      ok: true,
      value: { timeZone: 'utc', changed: true },
    });
    expect((await events(viewer)).map((e) => [e.before.timeZone, e.after.timeZone])).toEqual([
      ['utc', 'Europe/Berlin'],
      ['Europe/Berlin', 'browser'],
      ['browser', 'utc'],
    ]);
  });

  it('a zone that does not exist is refused INVALID_INPUT naming the field, audited, and nothing changes', async () => {
    const operator = await user('tz_operator');
    await setTimeZone(operator)({ timeZone: 'Asia/Tokyo' });
    const before = await events(operator);
    for (const timeZone of ['Mars/Olympus', '+01:00', 'Europe/Berlin\u0000', 'x'.repeat(200)]) {
      const result = await setTimeZone(operator)({ timeZone });
      expect(result, timeZone).toEqual({
        ok: false,
        code: 'INVALID_INPUT',
        message: 'Some fields are not valid.',
        fieldErrors: { timeZone: [TIME_ZONE_MESSAGE] },
      });
    }
    expect(await stored(operator)).toBe('Asia/Tokyo');
    const refusals = (await events(operator)).slice(before.length);
    expect(refusals).toHaveLength(4);
    for (const refusal of refusals)
      expect(refusal).toMatchObject({
        action: 'user.time_zone',
        outcome: 'REFUSED',
        code: 'INVALID_INPUT',
        reason: 'Invalid input: timeZone.',
      });
    // The bytes asked for never reach the log.
    expect(JSON.stringify(refusals)).not.toContain('Mars');
  });

  it('a signed-out call is not let in, and changes nothing', async () => {
    const approver = await user('tz_approver');
    expect(await setTimeZone(null)({ timeZone: 'Europe/Berlin' })).toMatchObject({
      ok: false,
      code: 'UNAUTHENTICATED',
    });
    expect(await stored(approver)).toBe('utc');
  });

  it('the table refuses what cannot be a zone name, whoever writes it', async () => {
    const admin = await user('tz_admin');
    for (const value of ['+01:00', '../etc', 'Europe/Berlin; drop table x', ''])
      await expect(
        pool.query('update keel."user" set time_zone = $1 where id = $2', [value, admin.id]),
        value,
      ).rejects.toThrow(/user_time_zone_shape/);
    await pool.query('update keel."user" set time_zone = $1 where id = $2', [
      'America/Argentina/Buenos_Aires',
      admin.id,
    ]);
    expect(await stored(admin)).toBe('America/Argentina/Buenos_Aires');
  });
});

describe('the audit CSV in a zone', () => {
  async function exportText(zone?: string): Promise<string[]> {
    const text = await new Response(
      auditCsvStream(pool, { targetKind: 'settlement', targetId: 'tz-csv' }, { reader: { role: 'viewer' }, zone }),
    ).text();
    return text.trimEnd().split('\r\n');
  }

  it('names the zone in the time column and writes each time in it, with its offset and microseconds', async () => {
    await pool.query(
      `insert into keel.audit_event (at, actor_login, actor_role, action, target_kind, target_id, outcome) values
         ('2026-07-01T10:00:00.123456Z', 'support', 'support', 'settlement.replay', 'settlement', 'tz-csv', 'APPLIED'),
         ('2026-12-03T10:00:00.5Z', 'support', 'support', 'settlement.replay', 'settlement', 'tz-csv', 'APPLIED')`,
    );
    const utc = await exportText();
    expect(utc[0]).toMatch(/^id,at_utc,actor,/);
    expect(utc.slice(1).map((l) => l.split(',')[1])).toEqual([
      '2026-12-03T10:00:00.500000Z',
      '2026-07-01T10:00:00.123456Z',
    ]);
    const berlin = await exportText('Europe/Berlin');
    expect(berlin[0]).toMatch(/^id,at_Europe\/Berlin,actor,/);
    const times = berlin.slice(1).map((l) => l.split(',')[1]!);
    // Winter and summer offsets, each the same instant as the UTC file's.
    expect(times).toEqual(['2026-12-03T11:00:00.500000+01:00', '2026-07-01T12:00:00.123456+02:00']);
    expect(times.map(Date.parse)).toEqual(utc.slice(1).map((l) => Date.parse(l.split(',')[1]!)));
  });
});
