import { describe, expect, it, vi } from 'vitest';
import { createAuth } from '../../lib/auth/auth';
import { createUserAccount } from '../../lib/auth/users';
import { createDatabase, DatabaseBusyError, isDatabaseBusy } from '../../lib/db/client';
import { auditEvent } from '../../lib/db/schema';
import type { AuditFilters } from '../../lib/domain/audit-filters';
import type { AuditReader } from '../../lib/queries/audit';
import { postgresExportSlots } from '../../lib/adapters/export-slots';
import {
  auditCsvStream,
  EXPORT_LIMITS,
  ExportIdleError,
  ExportTooLongError,
  type ExportOutcome,
} from '../../lib/server/audit-export';
import { freshDatabase } from '../support/database';

const ROWS = 2_500;
const database = await freshDatabase();
await database.pool.query(
  `insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, outcome)
   select 'alice', 'admin', 'user.create', 'user', 'u-' || i, 'APPLIED' from generate_series(1, $1::int) as i`,
  [ROWS],
);

/** Sessions of this database, by application name and state. */
async function sessions(applicationName: string, state?: string): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1
     and ($2::text is null or state = $2)`,
    [applicationName, state ?? null],
  );
  return rows[0]!.n;
}

type Outcome = ExportOutcome;

function exportWithOutcome(
  pool: Parameters<typeof auditCsvStream>[0],
  options: { idleMs: number; batchSize: number; maxDurationMs?: number },
) {
  let settle: (outcome: Outcome) => void = () => {};
  const ended = new Promise<Outcome>((resolve) => (settle = resolve));
  const stream = auditCsvStream(
    pool,
    {},
    { ...options, reader: { role: 'admin' }, onEnd: (outcome) => settle(outcome) },
  );
  return { reader: stream.getReader(), ended };
}

describe('audit CSV export stream', () => {
  it('reads every row to the end and gives its connection back', async () => {
    const pool = database.newPool(1);
    const { reader, ended } = exportWithOutcome(pool, { idleMs: 5_000, batchSize: 1_000 });
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(await ended).toBe('done');
    expect(text.split('\r\n').length - 2).toBe(ROWS);
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it('ends an export whose client stops reading: snapshot rolled back, connection released, reader told', async () => {
    const pool = database.newPool(1, { application_name: 'keel-export-idle' });
    // Long enough that a loaded machine still sees the held snapshot before the idle timer ends it.
    const { reader, ended } = exportWithOutcome(pool, { idleMs: 3_000, batchSize: 100 });
    await reader.read(); // the header
    await reader.read(); // the first batch; then the client reads no more
    await vi.waitFor(async () => expect(await sessions('keel-export-idle', 'idle in transaction')).toBe(1));
    expect(await ended).toBe('idle');
    await expect(reader.read()).rejects.toBeInstanceOf(ExportIdleError);
    expect(pool.idleCount).toBe(pool.totalCount);
    expect(await sessions('keel-export-idle', 'idle in transaction')).toBe(0);
    // The released connection serves the next export.
    const next = exportWithOutcome(pool, { idleMs: 5_000, batchSize: 1_000 });
    await next.reader.cancel();
    expect(await next.ended).toBe('cancelled');
  });

  it('ends an export at its longest time however steadily its client reads, and releases its connection', async () => {
    const pool = database.newPool(1);
    const { reader, ended } = exportWithOutcome(pool, { idleMs: 60_000, batchSize: 1, maxDurationMs: 300 });
    let failure: unknown = null;
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ExportTooLongError);
    expect(await ended).toBe('overtime');
    await vi.waitFor(() => expect(pool.idleCount).toBe(pool.totalCount));
  });

  it('a client that goes away cancels the export and releases its connection', async () => {
    const pool = database.newPool(1);
    const { reader, ended } = exportWithOutcome(pool, { idleMs: 60_000, batchSize: 100 });
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect(await ended).toBe('cancelled');
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it("the server's idle_in_transaction_session_timeout ends a snapshot left open; the export fails clean", async () => {
    const pool = database.newPool(1, {
      application_name: 'keel-export-backstop',
      idle_in_transaction_session_timeout: 200,
    });
    const { reader, ended } = exportWithOutcome(pool, { idleMs: 600_000, batchSize: 100 });
    await reader.read();
    await reader.read();
    // The server ends the session once it has sat idle in its transaction for 200 ms.
    await vi.waitFor(async () => expect(await sessions('keel-export-backstop')).toBe(0), { timeout: 10_000 });
    const failure = await Promise.all([reader.read(), reader.read(), reader.read()]).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(await ended).toBe('failed');
    expect(pool.totalCount).toBe(0);
  });
});

/** The whole CSV, as the download route would send it to `reader`. */
async function exportText(filters: AuditFilters, reader: AuditReader): Promise<string> {
  return new Response(auditCsvStream(database.pool, filters, { reader })).text();
}
const exportedIds = (csv: string) =>
  csv
    .trimEnd()
    .split('\r\n')
    .slice(1)
    .map((line) => Number(line.split(',')[0]));

describe('who the audit CSV export is for', () => {
  it('holds the rows about users and sign-in only for a reader who manages users; others do not get them', async () => {
    await database.pool.query(
      `insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, after, outcome, code)
       values
         ('anonymous', 'anonymous', 'auth.lockout', 'user', 'erin', '{"lockedForSeconds":30}', 'REFUSED',
         'ACCOUNT_LOCKED'),
         ('anonymous', 'anonymous', 'auth.sso_sign_in', 'sso_subject', 'sub-frank',
         '{"username":"frank","groups":["payroll"]}', 'REFUSED', 'NO_MAPPED_GROUP'),
         ('anonymous', 'anonymous', 'auth.sso_sign_in', 'sso_provider', 'keel-oidc', null, 'REFUSED',
         'SSO_STATE_MISMATCH'),
         ('sam', 'support', 'settlement.replay', 'settlement', 'r-1', null, 'APPLIED', null),
         ('olga', 'operator', 'user.role', 'action', 'user.role', null, 'REFUSED', 'FORBIDDEN')`,
    );
    const ids = async (where: string) =>
      (await database.pool.query(`select id from keel.audit_event where ${where} order by at desc, id desc`)).rows.map(
        (r) => Number(r.id),
      );
    const every = await ids('true');
    const visible = await ids(
      `target_kind not in ('user', 'sso_subject', 'sso_provider') and action not like 'auth.%'`,
    );
    expect(every).toHaveLength(ROWS + 5);
    expect(visible).toHaveLength(2);

    expect(exportedIds(await exportText({}, { role: 'admin' }))).toEqual(every);
    expect(exportedIds(await exportText({ targetKind: 'user' }, { role: 'admin' }))).toHaveLength(ROWS + 1);
    for (const reader of [
      { role: 'viewer' },
      { role: 'operator' },
      { role: 'support' },
      { role: 'approver' },
    ] as const) {
      const csv = await exportText({}, reader);
      expect(exportedIds(csv), reader.role).toEqual(visible);
      expect(csv).not.toMatch(/u-1|erin|frank|payroll|keel-oidc/);
      for (const filters of [
        { targetKind: 'user' },
        { targetKind: 'sso_subject' },
        { targetKind: 'sso_provider' },
        { action: 'auth.lockout' },
        { action: 'user.create' },
      ]) {
        // Asking for them by name exports the header and nothing else.
        expect(await exportText(filters, reader), JSON.stringify(filters)).toBe(
          'id,at_utc,actor,role,action,target_kind,target_id,reason,outcome,code,digest,operation_id,request_id,' +
            'change,before,after\r\n',
        );
      }
    }
  });
});

describe('request pool acquire timeout', () => {
  it('a query finding no free connection in time fails with DatabaseBusyError, through drizzle too', async () => {
    const pool = database.newPool(1, { connectionTimeoutMillis: 200 });
    const held = await pool.connect();
    try {
      const direct = await pool.query('select 1').catch((error: unknown) => error);
      expect(direct).toBeInstanceOf(DatabaseBusyError);
      const viaDrizzle = await createDatabase(pool)
        .select({ id: auditEvent.id })
        .from(auditEvent)
        .limit(1)
        .catch((error: unknown) => error);
      expect(isDatabaseBusy(viaDrizzle)).toBe(true);
      expect(isDatabaseBusy(new Error('timeout'))).toBe(false);
    } finally {
      held.release();
    }
    expect((await pool.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('a session read on a busy pool', () => {
  it('fails as DatabaseBusyError under better-auth too: apiRoute() answers 503 before knowing the actor', async () => {
    const pool = database.newPool(1, { connectionTimeoutMillis: 200 });
    const auth = createAuth(createDatabase(pool), { secret: 's'.repeat(64), port: 3997, signInPerMinute: 100 });
    expect(
      (
        await createUserAccount(auth, {
          username: 'busy_viewer',
          name: 'busy',
          role: 'viewer',
          password: 'correct-horse-battery',
        })
      ).ok,
    ).toBe(true);
    const signedIn = await auth.handler(
      new Request('http://localhost:3997/api/auth/sign-in/username', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://localhost:3997' },
        body: JSON.stringify({ username: 'busy_viewer', password: 'correct-horse-battery' }),
      }),
    );
    expect(signedIn.status).toBe(200);
    const cookie = signedIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .join('; ');
    const held = await pool.connect();
    try {
      const failure = await auth.api.getSession({ headers: new Headers({ cookie }) }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(isDatabaseBusy(failure)).toBe(true);
    } finally {
      held.release();
    }
    expect((await auth.api.getSession({ headers: new Headers({ cookie }) }))?.user.name).toBe('busy');
  });
});

describe('export slots are shared by every instance, with a share kept for each role', () => {
  // Two instances: two adapters over two pools of the same database.
  const first = () => postgresExportSlots(createDatabase(database.newPool(2)), EXPORT_LIMITS);
  const second = () => postgresExportSlots(createDatabase(database.newPool(2)), EXPORT_LIMITS);

  it("two low-privilege users holding two exports each leave an admin's share free, on any instance", async () => {
    const [a, b] = [first(), second()];
    const viewer = { id: 'v-1', role: 'viewer' as const };
    const viewer2 = { id: 'v-2', role: 'viewer' as const };
    const support = { id: 's-1', role: 'support' as const };
    const held = [
      await a.tryAcquire(viewer),
      await b.tryAcquire(viewer),
      await a.tryAcquire(support),
      await b.tryAcquire(support),
    ];
    expect(held.every((release) => release !== null)).toBe(true);
    // The viewer's third, on either instance, and another viewer's first: the viewers' share is taken.
    expect(await b.tryAcquire(viewer)).toBeNull();
    expect(await a.tryAcquire(viewer2)).toBeNull();
    const admin = await b.tryAcquire({ id: 'a-1', role: 'admin' });
    expect(admin).not.toBeNull();
    await held[0]!();
    await held[0]!(); // twice gives back one slot
    expect(await a.tryAcquire(viewer2)).not.toBeNull();
    expect(await b.tryAcquire(viewer)).toBeNull();
    await database.pool.query('delete from keel.export_slot');
  });

  it('admits exactly one share however many instances race for it', async () => {
    const instances = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? first() : second()));
    const taken = await Promise.all(instances.map((slots, i) => slots.tryAcquire({ id: `o-${i}`, role: 'operator' })));
    expect(taken.filter((release) => release !== null)).toHaveLength(EXPORT_LIMITS.perRole);
    const { rows } = await database.pool.query<{ n: number }>(
      `select count(*)::int as n from keel.export_slot where role = 'operator'`,
    );
    expect(rows[0]!.n).toBe(EXPORT_LIMITS.perRole);
    await database.pool.query('delete from keel.export_slot');
  });

  it('a slot whose process died is void once its export could no longer run', async () => {
    const slots = first();
    const approver = { id: 'p-1', role: 'approver' as const };
    expect(await slots.tryAcquire(approver)).not.toBeNull();
    expect(await slots.tryAcquire(approver)).not.toBeNull();
    expect(await slots.tryAcquire(approver)).toBeNull();
    // The process holding them is gone: nobody releases; their time runs out.
    await database.pool.query(
      `update keel.export_slot set expires_at = now() - interval '1 second' where user_id = 'p-1'`,
    );
    expect(await slots.tryAcquire(approver)).not.toBeNull();
    await database.pool.query('delete from keel.export_slot');
  });
});
