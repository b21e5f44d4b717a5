import { beforeAll, describe, expect, it } from 'vitest';
import { parseSettings, type Settings } from '../../lib/config/settings';
import { fromCanonicalJson } from '../../lib/domain/fault-state';
import { parseCheckpointJson, verifyCheckpoint } from '../../lib/domain/checkpoint';
import { BATCH_STATUSES } from '../../lib/domain/batch-status';
import { seedDemo } from '../../lib/demo/seed';
import { freshDatabase, type TestDatabase } from '../support/database';

const KEY = 'cd'.repeat(32);

function demoSettings(): Settings {
  const parsed = parseSettings({ DATABASE_URL: 'postgres://unused', KEEL_CHECKPOINT_KEY: KEY, KEEL_DEMO: '1' });
  if (!parsed.ok) throw new Error('settings');
  return parsed.value;
}

describe('demo seed', () => {
  let database: TestDatabase;
  let other: TestDatabase;

  beforeAll(async () => {
    database = await freshDatabase();
    other = await freshDatabase();
    expect(await seedDemo(database.db, demoSettings())).toBe(true);
    expect(await seedDemo(other.db, demoSettings())).toBe(true);
  }, 120_000);

  const count = async (sql: string) => Number((await database.pool.query(sql)).rows[0].n);

  it('seeds once: a second run finds the marker and adds nothing', async () => {
    const before = await count('select count(*) as n from oxide_batch.ob_job_execution');
    expect(await seedDemo(database.db, demoSettings())).toBe(false);
    expect(await count('select count(*) as n from oxide_batch.ob_job_execution')).toBe(before);
  });

  it('has job definitions and 2,000 executions across every status, with steps', async () => {
    expect(await count('select count(*) as n from oxide_batch.ob_job_definition')).toBeGreaterThanOrEqual(5);
    expect(await count('select count(*) as n from oxide_batch.ob_job_execution')).toBe(2000);
    const statuses = (await database.pool.query('select distinct status from oxide_batch.ob_job_execution')).rows.map(
      (r) => r.status,
    );
    expect(statuses.sort()).toEqual([...BATCH_STATUSES].sort());
    expect(await count('select count(*) as n from oxide_batch.ob_step_execution')).toBeGreaterThan(2000);
  });

  it('has stale executions, some of them UNKNOWN, some with no owner', async () => {
    const stale = await count(`select count(*) as n from oxide_batch.ob_job_execution
      where status in ('STARTING','STARTED','STOPPING') and updated_at < now() - interval '15 minutes'`);
    expect(stale).toBeGreaterThan(20);
    expect(
      await count(`select count(*) as n from oxide_batch.ob_job_execution where status = 'UNKNOWN'`),
    ).toBeGreaterThan(20);
    expect(
      await count(
        `select count(*) as n from oxide_batch.ob_job_execution where status in ('STARTED','UNKNOWN')
         and owner_token is null`,
      ),
    ).toBeGreaterThan(0);
  });

  it('writes fault-state envelopes whose checksums verify, except a few deliberately corrupt ones', async () => {
    const { rows } = await database.pool.query(`
      select fault_state_format, fault_state_schema, fault_state_schema_version, fault_state_payload,
      fault_state_checksum
      from oxide_batch.ob_step_execution`);
    const failures = new Map<string, number>();
    let withEntries = 0;
    for (const row of rows) {
      const decoded = fromCanonicalJson({
        formatId: row.fault_state_schema,
        formatVersion: row.fault_state_format,
        schemaVersion: row.fault_state_schema_version,
        payload: row.fault_state_payload,
        checksum: row.fault_state_checksum,
      });
      if (decoded.ok) {
        if (decoded.value.entries.length > 0) withEntries += 1;
      } else {
        failures.set(decoded.error.kind, (failures.get(decoded.error.kind) ?? 0) + 1);
      }
    }
    const corrupt = [...failures.values()].reduce((a, b) => a + b, 0);
    expect(withEntries).toBeGreaterThan(50);
    expect(corrupt).toBeGreaterThanOrEqual(3);
    expect(corrupt).toBeLessThanOrEqual(10);
    expect(
      [...failures.keys()].every((k) => ['ChecksumMismatch', 'UnsortedEntries', 'UnknownEnumeration'].includes(k)),
    ).toBe(true);
  });

  it('has 5,000 settlement attempts in every state and 300 dead letters across reason codes', async () => {
    expect(await count('select count(*) as n from settle.attempts')).toBe(5000);
    const now = Date.now();
    const states = await database.pool.query(
      `select count(*) filter (where work_kind = 'pending_observation' and lease_owner is null
       and next_visible_at_ms <= $1) as due,
              count(*) filter (where lease_owner is not null and lease_until_ms > $1) as leased,
              count(*) filter (where lease_owner is not null and lease_until_ms <= $1) as lease_expired,
              count(*) filter (where work_kind = 'retry_scheduled' and next_visible_at_ms > $1) as retry_later
       from settle.attempts`,
      [now],
    );
    for (const value of Object.values(states.rows[0])) expect(Number(value)).toBeGreaterThan(0);
    expect(await count('select count(*) as n from settle.dead_letters')).toBe(300);
    expect(await count('select count(distinct reason) as n from settle.dead_letters')).toBeGreaterThanOrEqual(10);
  });

  it('seals orchestration checkpoints with the key; some leases have expired', async () => {
    const { rows } = await database.pool.query('select checkpoint, lease_expires_at_ms from keel.durable_checkpoint');
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) {
      const parsed = parseCheckpointJson(row.checkpoint);
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect(verifyCheckpoint(parsed.value, Buffer.from(KEY, 'hex'))).toBe(true);
    }
    expect(rows.filter((r) => Number(r.lease_expires_at_ms) <= Date.now()).length).toBeGreaterThan(0);
    expect(rows.filter((r) => Number(r.lease_expires_at_ms) > Date.now()).length).toBeGreaterThan(0);
  });

  it('creates one demo user per role with hashed passwords', async () => {
    const { rows } = await database.pool.query(
      `select u.username, u.role, a.password from keel.user u join keel.account a on a.user_id = u.id
       order by u.username`,
    );
    expect(rows.map((r) => [r.username, r.role])).toEqual([
      ['admin', 'admin'],
      ['approver', 'approver'],
      ['approver2', 'approver'],
      ['operator', 'operator'],
      ['support', 'support'],
      ['viewer', 'viewer'],
    ]);
    for (const row of rows) {
      expect(row.password).not.toContain('keel-demo');
      expect(row.password).toMatch(/^[0-9a-f]+:[0-9a-f]+$/);
    }
  });

  it('is deterministic: the same seed gives the same executions, receipts and envelopes', async () => {
    const shape = (db: TestDatabase) =>
      db.pool.query(`select e.id, e.status, e.attempt, e.version, s.step_logical_id, s.fault_state_payload,
                     s.fault_state_checksum
                     from oxide_batch.ob_job_execution e left join oxide_batch.ob_step_execution s
                     on s.job_execution_id = e.id
                     order by e.id, s.id`);
    expect((await shape(database)).rows).toEqual((await shape(other)).rows);
    const receipts = (db: TestDatabase) =>
      db.pool.query('select receipt_id, attempts, work_kind from settle.attempts order by receipt_id');
    expect((await receipts(database)).rows).toEqual((await receipts(other)).rows);
  });

  it('records the operator requests of runtime CLI and Keel: every demo action, applied and refused', async () => {
    const { rows } = await database.pool.query(
      `select action, outcome_class, count(*)::int as n from oxide_batch.ob_operator_request group by 1, 2
       order by 1, 2`,
    );
    const kinds = rows.map((r) => `${r.action} ${r.outcome_class}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'LAUNCH APPLIED',
        'RESTART APPLIED',
        'STOP APPLIED',
        'STOP REJECTED',
        'ABANDON APPLIED',
        'ABANDON REJECTED',
      ]),
    );
    // Only stops were asked through Keel (by the demo operator); everything else came from the runtime's CLI.
    expect(
      await count(
        `select count(*) as n from oxide_batch.ob_operator_request
         where (operation_id like 'keel-%') <> (actor_ref not like 'cli:%')`,
      ),
    ).toBe(0);
    expect(
      await count(
        `select count(*) as n from oxide_batch.ob_operator_request where operation_id like 'keel-%'
         and not (action = 'STOP' and actor_ref = 'operator')`,
      ),
    ).toBe(0);
    // Every execution the seed made was launched or restarted by one of them.
    expect(
      await count(`select count(*) as n from oxide_batch.ob_job_execution e where not exists (
      select 1 from oxide_batch.ob_operator_request r where r.job_execution_id = e.id
      and r.action in ('LAUNCH', 'RESTART'))`),
    ).toBe(0);
    // A stopping execution's stop request names the actor of its STOP row.
    expect(
      await count(`select count(*) as n from oxide_batch.ob_job_execution e where e.status = 'STOPPING' and not exists (
      select 1 from oxide_batch.ob_operator_request r where r.job_execution_id = e.id and r.action = 'STOP'
      and r.actor_ref = e.stop_requested_by
        and r.requested_at = e.stop_requested_at)`),
    ).toBe(0);
  });

  it('audits each stop asked through Keel as a real one is audited, and nothing for the runtime CLI', async () => {
    const keelStops = await count(
      `select count(*) as n from oxide_batch.ob_operator_request where action = 'STOP'
       and operation_id like 'keel-stop-%'`,
    );
    expect(keelStops).toBeGreaterThan(0);
    const { rows } = await database.pool.query(`
      select a.action, a.target_kind, a.actor_login, a.actor_role, a.outcome, a.before, a.after,
      a.at = r.requested_at as same_time,
             a.digest = encode(r.request_digest, 'hex') as same_digest,
             'keel-stop-' || a.operation_id = r.operation_id as same_operation
      from keel.audit_event a join oxide_batch.ob_operator_request r on r.id = (a.after->>'operatorRequestId')::bigint
      where a.action = 'execution.request_stop' and r.job_execution_id::text = a.target_id`);
    expect(rows).toHaveLength(keelStops);
    for (const row of rows) {
      expect(row).toMatchObject({
        action: 'execution.request_stop',
        target_kind: 'batch_execution',
        actor_login: 'operator',
        actor_role: 'operator',
        outcome: 'APPLIED',
        before: { status: 'STARTED', stopRequested: false },
        after: { stopRequestedBy: 'operator', changed: true },
        same_time: true,
        same_digest: true,
        same_operation: true,
      });
    }
    expect(await count(`select count(*) as n from keel.audit_event where action = 'execution.request_stop'`)).toBe(
      keelStops,
    );
  });
});
