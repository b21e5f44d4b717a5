import { beforeAll, describe, expect, it } from 'vitest';
import { createAuth } from '../../lib/auth/auth';
import { createUserAccount } from '../../lib/auth/users';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import { postgresSignInLockout } from '../../lib/adapters/sign-in-lockout';
import { postgresSsoRefusals } from '../../lib/adapters/sso-audit';
import { authPasswordHasher, postgresUserUnitOfWork } from '../../lib/adapters/user-directory';
import {
  countAuditEvents,
  listAuditEvents,
  parseAuditCursor,
  streamAuditEvents,
  type AuditReader,
} from '../../lib/queries/audit';
import type { AuditEventView } from '../../lib/queries/audit-types';
import type { Actor } from '../../lib/domain/actor';
import type { AuditFilters } from '../../lib/domain/audit-filters';
import { auditFiltersSchema } from '../../lib/domain/audit-filters';
import { encodeCursor, type CappedCount } from '../../lib/domain/cursor';
import { changeUserRole, createUser, setUserDisabled } from '../../lib/services/users';
import { freshDatabase, type TestDatabase } from '../support/database';

const ADMIN: AuditReader = { role: 'admin' };

/**
 * 240 varied events, with deliberate ties: groups of three share one timestamp, and
 * neighbouring groups are one microsecond apart (inside the same millisecond), so a
 * cursor that lost microseconds or ignored the id would skip or repeat rows.
 */
const SEED = `
  insert into keel.audit_event (at, actor_id, actor_login, actor_role, action, target_kind, target_id, reason, outcome,
  code, digest)
  select timestamptz '2026-11-01 12:00:00.000000+00' + ((i / 3) * interval '1 microsecond') + ((i / 30) * interval
  '1 second'),
         null,
         (array['alice', 'bob', 'carol'])[1 + i % 3],
         (array['admin', 'support', 'approver'])[1 + i % 3],
         (array['user.create', 'settlement.replay', 'recovery.confirm', 'user.disable'])[1 + i % 4],
         (array['user', 'settlement', 'batch'])[1 + i % 3],
         'target-' || (i % 7),
         case when i % 11 = 0 then '=cmd|'' /C calc''!A0' else null end,
         case when i % 5 = 0 then 'REFUSED' else 'APPLIED' end,
         case when i % 5 = 0 then 'LEASE_CONFLICT' else null end,
         md5(i::text) || md5((i + 1)::text)
  from generate_series(1, 240) as i`;

describe('audit read model', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await freshDatabase();
    await database.pool.query(SEED);
  });

  /** What the page must show, straight from SQL: matching ids in (at, id) descending order. */
  async function expectedIds(where = 'true', params: unknown[] = []): Promise<number[]> {
    const { rows } = await database.pool.query(
      `select id from keel.audit_event where ${where} order by at desc, id desc`,
      params,
    );
    return rows.map((r) => Number(r.id));
  }

  async function walk(
    filters: AuditFilters,
    pageSize: number,
  ): Promise<{ ids: number[]; pages: Awaited<ReturnType<typeof listAuditEvents>>[] }> {
    const pages = [];
    let cursor: ReturnType<typeof parseAuditCursor> = null;
    for (let i = 0; i < 1_000; i += 1) {
      const page = await listAuditEvents(database.db, ADMIN, filters, cursor === 'invalid' ? null : cursor, pageSize);
      pages.push(page);
      if (!page.nextCursor) break;
      cursor = parseAuditCursor(page.nextCursor);
    }
    return { ids: pages.flatMap((p) => p.rows.map((r) => r.id)), pages };
  }

  it('a time range keeps events from its start to before its end, in the list, the count and the export', async () => {
    const filters = auditFiltersSchema.parse({ from: '2026-11-01T12:00:02Z', to: '2026-11-01T12:00:05Z' });
    const expected = await expectedIds(`at >= $1 and at < $2`, ['2026-11-01T12:00:02Z', '2026-11-01T12:00:05Z']);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(240);
    const { ids } = await walk(filters, 13);
    expect(ids).toEqual(expected);
    expect((await countAuditEvents(database.db, ADMIN, filters)).value).toBe(expected.length);
    const streamed: number[] = [];
    for await (const batch of streamAuditEvents(database.pool, ADMIN, filters, 17))
      streamed.push(...batch.map((r) => r.id));
    expect(streamed).toEqual(expected);
  });

  it('pages through every event exactly once, newest first, across ties within a millisecond', async () => {
    const { ids, pages } = await walk({}, 7);
    expect(ids).toEqual(await expectedIds());
    expect(ids).toHaveLength(240);
    expect(pages[0]!.prevCursor).toBeNull();
    expect(pages.at(-1)!.nextCursor).toBeNull();
    expect(pages[1]!.prevCursor).not.toBeNull();
    expect(pages[0]!.count).toEqual({ value: 240, capped: false });
    expect(pages[0]!.rows[0]!.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  it('goes back to newer pages with the previous cursor and returns the same rows', async () => {
    const { pages } = await walk({}, 9);
    for (let i = 1; i < pages.length; i += 1) {
      const back = parseAuditCursor(pages[i]!.prevCursor!);
      expect(back).not.toBe('invalid');
      const newer = await listAuditEvents(database.db, ADMIN, {}, back === 'invalid' ? null : back, 9);
      expect(newer.rows.map((r) => r.id)).toEqual(pages[i - 1]!.rows.map((r) => r.id));
      expect(newer.prevCursor === null).toBe(i === 1);
      expect(newer.nextCursor).not.toBeNull();
    }
  });

  it('filters by actor, action, target kind and id, and outcome, alone and together', async () => {
    const cases: [AuditFilters, string, unknown[]][] = [
      [{ actor: 'bob' }, 'actor_login = $1', ['bob']],
      [{ action: 'user.disable' }, 'action = $1', ['user.disable']],
      [{ targetKind: 'settlement' }, 'target_kind = $1', ['settlement']],
      [{ targetKind: 'batch', targetId: 'target-3' }, 'target_kind = $1 and target_id = $2', ['batch', 'target-3']],
      [{ outcome: 'REFUSED' }, 'outcome = $1', ['REFUSED']],
      [
        { actor: 'alice', outcome: 'APPLIED', action: 'recovery.confirm' },
        'actor_login = $1 and outcome = $2 and action = $3',
        ['alice', 'APPLIED', 'recovery.confirm'],
      ],
      [{ actor: 'nobody' }, 'actor_login = $1', ['nobody']],
    ];
    for (const [filters, where, params] of cases) {
      const expected = await expectedIds(where, params);
      const { ids, pages } = await walk(filters, 13);
      expect(ids, JSON.stringify(filters)).toEqual(expected);
      expect(pages[0]!.count).toEqual({ value: expected.length, capped: false });
    }
  });

  it('refuses cursors it did not make', () => {
    expect(parseAuditCursor(undefined)).toBeNull();
    expect(parseAuditCursor('not-a-cursor')).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['older', '2026-11-01 12:00', 5]))).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['sideways', '2026-11-01T12:00:00.000000Z', 5]))).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['older', "2026-11-01T12:00:00.000000Z'; drop table x", 5]))).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['newer', '2026-11-01T12:00:00.000001Z', 5]))).toEqual({
      direction: 'newer',
      at: '2026-11-01T12:00:00.000001Z',
      id: 5,
    });
  });

  it('the filter schema turns empty fields into "any" and wants a kind with a target id', () => {
    expect(auditFiltersSchema.parse({ actor: ' bob ', action: '', outcome: '' })).toEqual({
      actor: 'bob',
      action: undefined,
      outcome: undefined,
    });
    expect(auditFiltersSchema.safeParse({ targetId: 'target-1' }).success).toBe(false);
    expect(auditFiltersSchema.safeParse({ outcome: 'MAYBE' }).success).toBe(false);
  });

  it('streams every matching row in order from one snapshot, in batches', async () => {
    const filters: AuditFilters = { outcome: 'APPLIED' };
    const expected = await expectedIds('outcome = $1', ['APPLIED']);
    const streamed: AuditEventView[] = [];
    let batches = 0;
    for await (const batch of streamAuditEvents(database.pool, ADMIN, filters, 25)) {
      batches += 1;
      // A row written mid-download is not in this snapshot.
      if (batches === 2) {
        await database.pool.query(
          `insert into keel.audit_event (at, actor_login, actor_role, action, target_kind, target_id, outcome)
           values ('2026-10-01', 'late', 'admin', 'user.create', 'user', 'x', 'APPLIED')`,
        );
      }
      streamed.push(...batch);
    }
    expect(batches).toBe(Math.ceil(expected.length / 25));
    expect(streamed.map((r) => r.id)).toEqual(expected);
    expect(streamed.some((r) => r.actorLogin === 'late')).toBe(false);
    expect(await countAuditEvents(database.db, ADMIN, { actor: 'late' })).toEqual({ value: 1, capped: false });
  });

  it('releases its connection when a download stops early', async () => {
    const pool = database.newPool(1);
    const iterator = streamAuditEvents(pool, ADMIN, {}, 10);
    expect((await iterator.next()).value).toHaveLength(10);
    await iterator.return(undefined);
    // With a pool of one, this would wait forever if the connection were still held.
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('counts exactly up to 10,000 and then says 10,000+', async () => {
    await database.pool.query(`
      insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, outcome)
      select 'bulk', 'support', 'settlement.replay', 'settlement', 'r' || i, 'APPLIED'
      from generate_series(1, 10001) i`);
    expect(await countAuditEvents(database.db, ADMIN, { actor: 'bulk' })).toEqual({ value: 10_000, capped: true });
    expect(
      await countAuditEvents(database.db, ADMIN, { actor: 'bulk', targetKind: 'settlement', targetId: 'r17' }),
    ).toEqual({ value: 1, capped: false });
    const page = await listAuditEvents(database.db, ADMIN, { actor: 'bulk' }, null);
    expect(page.rows).toHaveLength(50);
    expect(page.count.capped).toBe(true);
  });
});

/** The rows only manageUsers may read, stated in SQL apart from the read model, so the two are held together. */
const USER_ADMINISTRATION_WHERE = `target_kind in ('user', 'sso_subject', 'sso_provider') or action like 'auth.%'`;

describe('audit rows about user administration and sign-in', () => {
  let database: TestDatabase;
  /** Every row in (at, id) descending order, and those a reader without manageUsers may see. */
  let everyId: number[];
  let visibleIds: number[];

  const ids = async (where: string) =>
    (await database.pool.query(`select id from keel.audit_event where ${where} order by at desc, id desc`)).rows.map(
      (r) => Number(r.id),
    );

  async function read(reader: AuditReader, filters: AuditFilters) {
    const listed: AuditEventView[] = [];
    let cursor: ReturnType<typeof parseAuditCursor> = null;
    let count: CappedCount | null = null;
    for (let i = 0; i < 100; i += 1) {
      const page = await listAuditEvents(database.db, reader, filters, cursor === 'invalid' ? null : cursor, 2);
      count ??= page.count;
      listed.push(...page.rows);
      if (!page.nextCursor) break;
      cursor = parseAuditCursor(page.nextCursor);
    }
    const streamed: number[] = [];
    for await (const batch of streamAuditEvents(database.pool, reader, filters, 3))
      streamed.push(...batch.map((r) => r.id));
    return {
      listed,
      ids: listed.map((r) => r.id),
      count,
      counted: await countAuditEvents(database.db, reader, filters),
      streamed,
    };
  }

  beforeAll(async () => {
    database = await freshDatabase();
    const auth = createAuth(database.db, { secret: 'q'.repeat(64), port: 3996, signInPerMinute: 1000 });
    const root = await createUserAccount(auth, {
      username: 'root',
      name: 'Root Admin',
      role: 'admin',
      password: 'root-password',
    });
    if (!root.ok) throw new Error(root.error.message);
    const admin: Actor = { id: root.value.id, login: 'root', name: 'Root Admin', role: 'admin' };
    const ports = { unitOfWork: postgresUserUnitOfWork(database.db), passwords: authPasswordHasher(auth) };
    // User administration, through the service: name and role, a role change, a disable reason.
    expect(
      (
        await createUser(ports, admin, {
          username: 'dana',
          name: 'Dana Example',
          role: 'operator',
          password: 'dana-password',
        })
      ).ok,
    ).toBe(true);
    expect(
      (await changeUserRole(ports, admin, { username: 'dana', role: 'approver', expectedRole: 'operator' })).ok,
    ).toBe(true);
    expect(
      (await setUserDisabled(ports, admin, { username: 'dana', disabled: true, reason: 'left the team' })).ok,
    ).toBe(true);
    // Sign-in security: a lockout and a refusal while locked, naming the username typed.
    const lockout = postgresSignInLockout(database.db);
    const now = new Date();
    for (let i = 0; i < 5; i += 1) await lockout.recordFailure('erin', now);
    expect(await lockout.refuseIfLocked('erin', now)).toBeGreaterThan(0);
    // SSO: a refused callback (the provider), and a subject refused with its groups, as lib/auth/auth.ts writes it.
    await postgresSsoRefusals(database.db)('SSO_STATE_MISMATCH', null);
    await database.pool.query(
      `insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, after, outcome, code,
       request_id)
       values ('anonymous', 'anonymous', 'auth.sso_sign_in', 'sso_subject', 'sub-frank',
       '{"username":"frank","groups":["payroll"]}', 'REFUSED', 'NO_MAPPED_GROUP', 'req-sso')`,
    );
    // Rows every reader sees: an operator's refused attempt at a user action (it names only who tried), and other work.
    const operator = { id: 'op-1', login: 'olga', role: 'operator' as const };
    const audit = postgresAuditLog(database.db);
    await audit.record({
      actor: operator,
      action: 'user.create',
      target: { kind: 'action', id: 'user.create' },
      outcome: 'REFUSED',
      code: 'FORBIDDEN',
    });
    await audit.record({
      actor: operator,
      action: 'recovery.propose',
      target: { kind: 'recovery_proposal', id: '7' },
      outcome: 'APPLIED',
    });
    await audit.record({
      actor: { ...operator, role: 'support' },
      action: 'settlement.replay',
      target: { kind: 'settlement', id: 'r-1' },
      outcome: 'APPLIED',
    });

    everyId = await ids('true');
    visibleIds = await ids(`not (${USER_ADMINISTRATION_WHERE})`);
    const hidden = await database.pool.query(
      `select action, target_kind from keel.audit_event where ${USER_ADMINISTRATION_WHERE} order by id`,
    );
    // Not vacuous: every writer's rows are there.
    expect(hidden.rows).toEqual([
      { action: 'user.create', target_kind: 'user' },
      { action: 'user.role', target_kind: 'user' },
      { action: 'user.disable', target_kind: 'user' },
      { action: 'auth.lockout', target_kind: 'user' },
      { action: 'auth.sign_in', target_kind: 'user' },
      { action: 'auth.sso_sign_in', target_kind: 'sso_provider' },
      { action: 'auth.sso_sign_in', target_kind: 'sso_subject' },
    ]);
    expect(visibleIds).toHaveLength(3);
  });

  it('a reader without manageUsers finds none of them in the list, count or export, even asking for them', async () => {
    for (const role of ['viewer', 'operator', 'approver', 'support'] as const) {
      const all = await read({ role }, {});
      expect(all.ids, role).toEqual(visibleIds);
      expect(all.count, role).toEqual({ value: visibleIds.length, capped: false });
      expect(all.counted, role).toEqual({ value: visibleIds.length, capped: false });
      expect(all.streamed, role).toEqual(visibleIds);
      expect(JSON.stringify(all.listed)).not.toMatch(/dana|erin|frank|payroll|left the team/);
      const asked: AuditFilters[] = [
        { targetKind: 'user' },
        { targetKind: 'user', targetId: 'dana' },
        { targetKind: 'sso_subject' },
        { targetKind: 'sso_provider' },
        { action: 'auth.lockout' },
        { action: 'auth.sso_sign_in' },
        { actor: 'anonymous' },
      ];
      for (const filters of asked) {
        const found = await read({ role }, filters);
        expect(
          { ids: found.ids, count: found.count, counted: found.counted, streamed: found.streamed },
          `${role} ${JSON.stringify(filters)}`,
        ).toEqual({
          ids: [],
          count: { value: 0, capped: false },
          counted: { value: 0, capped: false },
          streamed: [],
        });
      }
      // Only the refused attempt, on target kind action, answers a user.* action filter.
      const attempts = await read({ role }, { action: 'user.create' });
      expect(
        attempts.listed.map((r) => [r.actorLogin, r.targetKind, r.code]),
        role,
      ).toEqual([['olga', 'action', 'FORBIDDEN']]);
      expect(attempts.count).toEqual({ value: 1, capped: false });
    }
  });

  it('an admin reads every one of them, as before', async () => {
    const all = await read(ADMIN, {});
    expect(all.ids).toEqual(everyId);
    expect(all.count).toEqual({ value: everyId.length, capped: false });
    expect(all.streamed).toEqual(everyId);
    const dana = await read(ADMIN, { targetKind: 'user', targetId: 'dana' });
    expect(dana.listed.map((r) => [r.action, r.after ?? r.reason])).toEqual([
      ['user.disable', { disabled: true, sessionsEnded: 0 }],
      ['user.role', { role: 'approver' }],
      ['user.create', { username: 'dana', name: 'Dana Example', role: 'operator' }],
    ]);
    expect(dana.counted).toEqual({ value: 3, capped: false });
    const subjects = await read(ADMIN, { targetKind: 'sso_subject' });
    expect(subjects.listed.map((r) => r.after)).toEqual([{ username: 'frank', groups: ['payroll'] }]);
  });
});
