import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAuth, type KeelAuth } from '../../lib/auth/auth';
import { createUserAccount } from '../../lib/auth/users';
import { authPasswordHasher, postgresUserDirectory, postgresUserUnitOfWork } from '../../lib/adapters/user-directory';
import type { Actor } from '../../lib/domain/actor';
import { mapOk } from '../../lib/domain/result';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import { createUserSchema } from '../../lib/domain/users';
import { action } from '../../lib/server/action';
import { listUsers } from '../../lib/queries/users';
import type { UserServicePorts } from '../../lib/services/users';
import { changeUserRole, createUser, setUserDisabled } from '../../lib/services/users';
import { freshDatabase, type TestDatabase } from '../support/database';

const PORT = 3998;

function signIn(auth: KeelAuth, username: string, password: string): Promise<Response> {
  return auth.handler(
    new Request(`http://localhost:${PORT}/api/auth/sign-in/username`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: `http://localhost:${PORT}`,
        'x-forwarded-for': `10.2.${Math.floor(Math.random() * 250)}.1`,
      },
      body: JSON.stringify({ username, password }),
    }),
  );
}

describe('user management service on Postgres', () => {
  let database: TestDatabase;
  let auth: KeelAuth;
  let ports: UserServicePorts;
  let admin: Actor;

  const audit = async (username: string) =>
    (
      await database.pool.query(
        `select action, outcome, code, actor_login, actor_role, before, after, reason, operation_id
         from keel.audit_event
          where target_kind = 'user' and target_id = $1 order by id`,
        [username],
      )
    ).rows;
  const userRow = async (username: string) =>
    (
      await database.pool.query(`select id, role, banned, ban_reason, name from keel.user where username = $1`, [
        username,
      ])
    ).rows[0];
  const sessionCount = async (username: string) =>
    Number(
      (
        await database.pool.query(
          `select count(*) as n from keel.session s join keel.user u on u.id = s.user_id where u.username = $1`,
          [username],
        )
      ).rows[0].n,
    );

  beforeAll(async () => {
    database = await freshDatabase();
    auth = createAuth(database.db, { secret: 'u'.repeat(64), port: PORT, signInPerMinute: 1000 });
    const created = await createUserAccount(auth, {
      username: 'root',
      name: 'Root Admin',
      role: 'admin',
      password: 'root-password',
    });
    if (!created.ok) throw new Error(created.error.message);
    admin = { id: created.value.id, login: 'root', name: 'Root Admin', role: 'admin' };
    ports = { unitOfWork: postgresUserUnitOfWork(database.db), passwords: authPasswordHasher(auth) };
  });

  it('creates a user who can sign in at once, audited in the same transaction', async () => {
    const operationId = randomUUID();
    const result = await createUser(ports, admin, {
      username: 'dana',
      name: 'Dana',
      role: 'operator',
      password: 'dana-password',
      operationId,
    });
    expect(result).toMatchObject({
      ok: true,
      value: { created: true, user: { username: 'dana', role: 'operator', disabled: false } },
    });
    expect(await userRow('dana')).toMatchObject({ role: 'operator', banned: false, name: 'Dana' });
    expect((await signIn(auth, 'dana', 'dana-password')).status).toBe(200);
    expect((await signIn(auth, 'dana', 'wrong-password')).status).toBe(401);
    const events = await audit('dana');
    expect(events).toEqual([
      expect.objectContaining({
        action: 'user.create',
        outcome: 'APPLIED',
        code: null,
        actor_login: 'root',
        actor_role: 'admin',
        operation_id: operationId,
      }),
    ]);
    // The password never reaches the audit log.
    expect(JSON.stringify(events)).not.toContain('dana-password');
  });

  it('returns the first result when the same form is submitted again, sequentially or at once', async () => {
    const operationId = randomUUID();
    const input = { username: 'eve', name: 'Eve', role: 'viewer' as const, password: 'eve-password', operationId };
    const [a, b] = await Promise.all([createUser(ports, admin, input), createUser(ports, admin, input)]);
    const third = await createUser(ports, admin, input);
    expect([a, b, third].map((r) => r.ok && r.value.created).sort()).toEqual([false, false, true]);
    expect(
      Number((await database.pool.query(`select count(*) as n from keel.user where username = 'eve'`)).rows[0].n),
    ).toBe(1);
    expect(await audit('eve')).toHaveLength(1);
  });

  it('refuses a taken username with USER_EXISTS, audited as REFUSED, and changes nothing', async () => {
    const result = await createUser(ports, admin, {
      username: 'dana',
      name: 'Other Dana',
      role: 'admin',
      password: 'another-password',
      operationId: randomUUID(),
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'USER_EXISTS' } });
    expect(await userRow('dana')).toMatchObject({ role: 'operator', name: 'Dana' });
    expect((await audit('dana')).at(-1)).toMatchObject({
      action: 'user.create',
      outcome: 'REFUSED',
      code: 'USER_EXISTS',
    });
    expect((await signIn(auth, 'dana', 'another-password')).status).toBe(401);
  });

  it('refuses the console a single sign-on or break-glass username, audited INVALID_INPUT, makes no user', async () => {
    // The server action's own wiring (app/actions/users.ts), with this database's audit log.
    const createThroughAction = action(
      createUserSchema,
      'user.create',
      async (actor, input) => mapOk(await createUser(ports, actor, input), ({ user }) => user.username),
      {
        deps: {
          currentActor: async () => admin,
          auditLog: () => postgresAuditLog(database.db),
          fenceWrite: async () => {},
        },
      },
    );
    for (const [username, message] of [
      ['sso.alice', /kept for single sign-on users/],
      ['BreakGlass.Me', /only by the CLI's create-user --break-glass/],
    ] as const) {
      const result = await createThroughAction({
        username,
        name: 'Someone',
        role: 'admin',
        password: 'long-enough-pw',
        operationId: randomUUID(),
      });
      expect(result).toMatchObject({
        ok: false,
        code: 'INVALID_INPUT',
        fieldErrors: { username: [expect.stringMatching(message)] },
      });
      expect(await userRow(username.toLowerCase())).toBeUndefined();
    }
    const refusals = await database.pool.query(
      `select outcome, code from keel.audit_event where action = 'user.create' and code = 'INVALID_INPUT'`,
    );
    expect(refusals.rows).toEqual([
      { outcome: 'REFUSED', code: 'INVALID_INPUT' },
      { outcome: 'REFUSED', code: 'INVALID_INPUT' },
    ]);
  });

  it('disables a user: banned, every session ended at once, sign-in refused; a repeat changes nothing', async () => {
    expect((await signIn(auth, 'dana', 'dana-password')).status).toBe(200);
    expect(await sessionCount('dana')).toBeGreaterThanOrEqual(2);
    const before = (await audit('dana')).length;
    const result = await setUserDisabled(ports, admin, { username: 'dana', disabled: true, reason: 'left the team' });
    expect(result).toMatchObject({ ok: true, value: { changed: true, user: { disabled: true } } });
    expect(result.ok && result.value.sessionsEnded).toBeGreaterThanOrEqual(2);
    expect(await sessionCount('dana')).toBe(0);
    expect(await userRow('dana')).toMatchObject({ banned: true, ban_reason: 'left the team' });
    expect((await signIn(auth, 'dana', 'dana-password')).status).toBe(403);
    expect((await audit('dana')).at(-1)).toMatchObject({
      action: 'user.disable',
      outcome: 'APPLIED',
      reason: 'left the team',
      before: { disabled: false },
    });

    const again = await setUserDisabled(ports, admin, { username: 'dana', disabled: true });
    expect(again).toMatchObject({ ok: true, value: { changed: false, sessionsEnded: 0 } });
    expect(await audit('dana')).toHaveLength(before + 1);

    // A session that outlived the flag (made by another path before
    // it was set) is ended by a repeat, and that is audited.
    await database.pool.query(
      `insert into keel.session (id, expires_at, token, user_id)
       select 'late-session', now() + interval '1 hour', 'late-token', id from keel."user" where username = 'dana'`,
    );
    const ended = await setUserDisabled(ports, admin, { username: 'dana', disabled: true });
    expect(ended).toMatchObject({ ok: true, value: { changed: false, sessionsEnded: 1 } });
    expect(await sessionCount('dana')).toBe(0);
    expect(await audit('dana')).toHaveLength(before + 2);
    expect((await audit('dana')).at(-1)).toMatchObject({
      action: 'user.disable',
      outcome: 'APPLIED',
      before: { disabled: true },
      after: { disabled: true, sessionsEnded: 1 },
    });
  });

  it('enables a disabled user, who can sign in again', async () => {
    const result = await setUserDisabled(ports, admin, { username: 'dana', disabled: false });
    expect(result).toMatchObject({ ok: true, value: { changed: true, user: { disabled: false } } });
    expect(await userRow('dana')).toMatchObject({ banned: false, ban_reason: null });
    expect((await signIn(auth, 'dana', 'dana-password')).status).toBe(200);
    expect((await audit('dana')).at(-1)).toMatchObject({ action: 'user.enable', outcome: 'APPLIED' });
  });

  it('refuses to let an admin disable or demote themself, and audits the refusal', async () => {
    expect(await setUserDisabled(ports, admin, { username: 'root', disabled: true })).toMatchObject({
      ok: false,
      error: { code: 'CANNOT_DISABLE_SELF' },
    });
    expect(
      await changeUserRole(ports, admin, { username: 'root', role: 'viewer', expectedRole: 'admin' }),
    ).toMatchObject({ ok: false, error: { code: 'CANNOT_DEMOTE_SELF' } });
    expect(await userRow('root')).toMatchObject({ role: 'admin', banned: false });
    expect((await audit('root')).map((e) => [e.action, e.outcome, e.code])).toEqual([
      ['user.disable', 'REFUSED', 'CANNOT_DISABLE_SELF'],
      ['user.role', 'REFUSED', 'CANNOT_DEMOTE_SELF'],
    ]);
  });

  it('changes a role, refuses a decision made on a stale role, and refuses unknown users', async () => {
    expect(
      await changeUserRole(ports, admin, { username: 'dana', role: 'approver', expectedRole: 'operator' }),
    ).toMatchObject({ ok: true, value: { changed: true, user: { role: 'approver' } } });
    expect(await userRow('dana')).toMatchObject({ role: 'approver' });
    expect((await audit('dana')).at(-1)).toMatchObject({
      action: 'user.role',
      outcome: 'APPLIED',
      before: { role: 'operator' },
      after: { role: 'approver' },
    });
    // Another admin saw "operator" and wants "support": the role moved on meanwhile.
    expect(
      await changeUserRole(ports, admin, { username: 'dana', role: 'support', expectedRole: 'operator' }),
    ).toMatchObject({ ok: false, error: { code: 'ROLE_CHANGED' } });
    expect(await userRow('dana')).toMatchObject({ role: 'approver' });
    // Repeating the applied change is a no-op with no second event.
    const events = (await audit('dana')).length;
    expect(
      await changeUserRole(ports, admin, { username: 'dana', role: 'approver', expectedRole: 'operator' }),
    ).toMatchObject({ ok: true, value: { changed: false } });
    expect(await audit('dana')).toHaveLength(events);
    expect(
      await changeUserRole(ports, admin, { username: 'nobody', role: 'viewer', expectedRole: 'viewer' }),
    ).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await audit('nobody')).toEqual([
      expect.objectContaining({ action: 'user.role', outcome: 'REFUSED', code: 'NOT_FOUND' }),
    ]);
  });

  it('serializes two admins disabling each other at once: one wins, the other is refused, one admin left', async () => {
    const made = await Promise.all(
      ['ann', 'ben'].map((username) =>
        createUser(ports, admin, { username, name: username, role: 'admin', password: `${username}-password-1` }),
      ),
    );
    const [ann, ben] = made.map((r): Actor => {
      if (!r.ok) throw new Error(r.error.message);
      return { id: r.value.user.id, login: r.value.user.username, name: r.value.user.name, role: 'admin' };
    }) as [Actor, Actor];
    const results = await Promise.all([
      setUserDisabled(ports, ann, { username: 'ben', disabled: true }),
      setUserDisabled(ports, ben, { username: 'ann', disabled: true }),
    ]);
    expect(results.map((r) => (r.ok ? 'APPLIED' : r.error.code)).sort()).toEqual(['APPLIED', 'FORBIDDEN']);
    const banned = (
      await database.pool.query(`select username from keel.user where username in ('ann', 'ben') and banned`)
    ).rows;
    expect(banned).toHaveLength(1);
    // The loser's refusal is on record, and the disabled admin cannot demote anyone either.
    const loser = banned[0].username === 'ann' ? ann : ben;
    expect(
      await changeUserRole(ports, loser, { username: 'root', role: 'viewer', expectedRole: 'admin' }),
    ).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    expect(await userRow('root')).toMatchObject({ role: 'admin' });
    const refusals = await database.pool.query(
      `select count(*)::int as n from keel.audit_event where actor_login = $1 and code = 'FORBIDDEN'`,
      [loser.login],
    );
    expect(refusals.rows[0].n).toBe(2);
  });

  it('rolls the change back when its audit event cannot be written', async () => {
    const failingAudit: UserServicePorts = {
      passwords: ports.passwords,
      unitOfWork: {
        transaction: (work) =>
          database.db.transaction((tx) =>
            work({
              users: postgresUserDirectory(tx),
              audit: { record: () => Promise.reject(new Error('audit unavailable')) },
            }),
          ),
      },
    };
    await expect(
      createUser(failingAudit, admin, { username: 'ghost', name: 'Ghost', role: 'viewer', password: 'ghost-password' }),
    ).rejects.toThrow('audit unavailable');
    expect(await userRow('ghost')).toBeUndefined();
    await expect(setUserDisabled(failingAudit, admin, { username: 'eve', disabled: true })).rejects.toThrow(
      'audit unavailable',
    );
    expect(await userRow('eve')).toMatchObject({ banned: false });
  });

  it("lists how many bulk jobs run in each user's name, which a disable or demotion would cancel", async () => {
    const eve = await userRow('eve');
    const job = (status: string) =>
      database.pool.query(
        `insert into keel.bulk_replay (created_by_id, created_by_login, started_by_id, started_by_login,
         started_by_role, note, filter, action, status, item_count, started_at)
         values ($1, 'root', $2, 'eve', 'support', 'n', '{"asOfMs": 0}'::jsonb, 'REPLAY', $3, 0, clock_timestamp())`,
        [admin.id, eve.id, status],
      );
    await job('RUNNING');
    await job('RUNNING');
    await job('COMPLETED');
    const page = await listUsers(database.db, {}, null);
    const running = Object.fromEntries(page.rows.map((u) => [u.username, u.runningBulkJobs]));
    expect(running).toMatchObject({ eve: 2, root: 0, dana: 0 });
  });
});
