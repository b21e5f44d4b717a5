import { describe, expect, it } from 'vitest';
import { needsYouFor } from '../../lib/domain/needs-you';
import { readNeedsYou } from '../../lib/queries/needs-you';
import { needsYouLinks } from '../../lib/url-state/needs-you';
import { freshDatabase } from '../support/database';
import { MINUTE, seedDefinition, seedExecution } from '../support/recovery-fixtures';

/**
 * What needs whom, read from real rows: executions that turned stale in the last hour
 * and the hour before, lapsed leases, pending proposals, and the hour-old figures of the
 * sampled series, through the reader's role.
 */

const { pool, db } = await freshDatabase();
const THRESHOLD = 10 * MINUTE;
const OPTIONS = { staleThresholdMs: THRESHOLD, deadLetterThreshold: 50, deadLetterWindowMs: 15 * MINUTE };

/** One sample, as the sampler writes it: every series at one instant. */
async function sample(minutesAgo: number, series: [metric: string, label: string, value: number][]) {
  await pool.query(
    `with taken as (select clock_timestamp() - $1 * interval '1 minute' as at)
     insert into keel.metric_sample (sampled_at, metric, label, value)
     select taken.at, s.metric, s.label, s.value
     from taken, unnest($2::text[], $3::text[], $4::float8[]) as s(metric, label, value)`,
    [minutesAgo, series.map((s) => s[0]), series.map((s) => s[1]), series.map((s) => s[2])],
  );
}

async function lease(id: string, expiresInMinutes: number) {
  await pool.query(
    `insert into keel.durable_checkpoint (execution_id, checkpoint, authentication_tag, lease_owner, fencing_token,
       lease_expires_at_ms)
     values ($1, '{}', 'tag', 'orchestrator-1', 1, (extract(epoch from clock_timestamp()) * 1000)::bigint + $2
     * 60000)`,
    [id, expiresInMinutes],
  );
}

async function propose(targetId: string, proposerId: string, deadlineInMinutes: number, status = 'PENDING') {
  await pool.query(
    `insert into keel.recovery_proposal (target_kind, target_id, kind, evidence_digest, evidence, expected_version,
       proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id, status, decided_at)
     values ('batch', $1::text, 'TAKEOVER', sha256(convert_to($1::text, 'UTF8')), '{}', 0, $2, $2, 'p',
       clock_timestamp() + $3 * interval '1 minute', 'c', $4,
       case when $4 = 'PENDING' then null else clock_timestamp() end)`,
    [targetId, proposerId, deadlineInMinutes, status],
  );
}

/** readNeedsYou, with the statements it sent to the pool (text and values), to explain them. */
async function readNeedsYouSent() {
  const sent: { text: string; values: unknown[] }[] = [];
  const query = pool.query.bind(pool);
  pool.query = ((config: string | { text: string }, values?: unknown[]) => {
    sent.push({ text: typeof config === 'string' ? config : config.text, values: values ?? [] });
    return query(config as never, values as never);
  }) as typeof pool.query;
  try {
    return { read: await readNeedsYou(db, OPTIONS), sent };
  } finally {
    pool.query = query;
  }
}

describe('needs you, read from the rows', () => {
  it('counts each figure and its change since an hour ago, and cuts it per role', async () => {
    const definition = await seedDefinition(db);
    const execution = (status: 'STARTED' | 'COMPLETED', silentForMinutes: number) =>
      seedExecution(db, { definitionId: definition.id, status, silentForMs: silentForMinutes * MINUTE });
    await execution('STARTED', 15); // stale for 5 minutes
    await execution('STARTED', 50); // stale for 40 minutes: past KeelStaleExecutions' 15
    await execution('STARTED', 90); // turned stale in the hour before
    await execution('STARTED', 180); // stale longer than both hours
    await execution('STARTED', 2); // not stale
    await execution('COMPLETED', 15); // finished, never stale

    await lease('orch-recent', -5);
    await lease('orch-old', -120);
    await lease('orch-live', 5);

    await propose('101', 'user:approver', 30);
    await propose('102', 'user:operator', 3);
    await propose('103', 'user:operator', 30, 'REJECTED');

    for (const [minutes, pending, corrupt, rpc, backend] of [
      [0.1, 2, 5, 100, 10],
      [15, 2, 5, 40, 10],
      [60, 1, 2, 30, 10],
      [120, 0, 2, 25, 5],
    ] as const) {
      await sample(minutes, [
        ['recovery_pending_proposals', '', pending],
        ['fault_state_corrupt_envelopes', '', corrupt],
        ['settlement_dead_lettered', 'rpc', rpc],
        ['settlement_dead_lettered', 'backend', backend],
      ]);
    }

    const snapshot = await readNeedsYou(db, OPTIONS);
    expect(snapshot.stale).toMatchObject({ lastHour: 2, hourBefore: 1 });
    expect(snapshot.lapsed).toMatchObject({ count: 2, hourAgo: 1 });
    expect(snapshot.pendingCount).toBe(2);
    expect(snapshot.pending.map((p) => p.targetId)).toEqual(['102', '101']); // earliest deadline first
    expect(snapshot.pendingHourAgo).toBe(1);
    expect(snapshot.corrupt).toEqual({ now: 5, hourAgo: 2 });
    expect(snapshot.deadLetters).toEqual([
      { reason: 'backend', lastHour: 0, hourBefore: 5, window: 0 },
      { reason: 'rpc', lastHour: 70, hourBefore: 5, window: 60 },
    ]);

    const operator = needsYouFor(snapshot, { id: 'user:operator', role: 'operator' }, needsYouLinks);
    expect(operator.sections.map((s) => s.id)).toEqual(['operate']);
    const items = Object.fromEntries(operator.sections[0]!.items.map((i) => [i.key, i]));
    expect(items.staleExecutions).toMatchObject({ figure: 2, change: 1, severity: 'critical', count: 2 });
    expect(items.staleExecutions!.href).toMatch(/^\/executions\?stale=1&updatedFrom=.+&updatedTo=.+/);
    expect(items.corruptEnvelopes).toMatchObject({ figure: 5, change: 3, severity: 'critical', count: 3 });
    expect(items.lapsedLeases).toMatchObject({
      figure: 2,
      change: 1,
      severity: 'critical',
      href: '/recovery#orchestrations',
    });
    expect(operator.count).toBe(7);

    // The operator's own proposal is for someone else to decide.
    const approver = needsYouFor(snapshot, { id: 'user:approver', role: 'approver' }, needsYouLinks);
    const proposals = approver.sections[0]!.items[0]!;
    expect(proposals.proposals!.map((p) => p.targetId)).toEqual(['102']);
    expect(proposals).toMatchObject({ figure: 1, change: 1, severity: 'critical', href: '/recovery?status=PENDING' });

    const support = needsYouFor(snapshot, { id: 'user:support', role: 'support' }, needsYouLinks);
    expect(support.sections[0]!.items.map((i) => [i.title, i.change, i.severity, i.href])).toEqual([
      ['Dead letters: rpc', 65, 'critical', '/settlements/dead-letters?reason=rpc'],
    ]);
  });

  it('looks each sampled figure up once, even when the statistics think the samples are gone', async () => {
    // The state a planner meets after keel.metric_sample was analyzed with no live row (say, a
    // console down past the retention) and autovacuum has not analyzed it since.
    await pool.query('delete from keel.metric_sample');
    await sample(200, [['recovery_pending_proposals', '', 1]]);
    await pool.query('delete from keel.metric_sample');
    await pool.query('analyze keel.metric_sample');
    for (let minutesAgo = 150; minutesAgo >= 0; minutesAgo -= 1)
      await sample(minutesAgo, [
        ['recovery_pending_proposals', '', 1],
        ['fault_state_corrupt_envelopes', '', 2],
        ['settlement_dead_lettered', 'rpc', 3],
      ]);
    const { read, sent } = await readNeedsYouSent();
    expect(read.pendingHourAgo).toBe(1);
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain analyze ${sent[0]!.text}`, sent[0]!.values);
    const loops = rows
      .map((r) => r['QUERY PLAN'])
      .filter((line) => / on metric_sample /.test(line))
      .map((line) => Number(/loops=(\d+)/.exec(line)?.[1] ?? 0));
    expect(loops.length).toBeGreaterThan(0);
    // Fifteen lookups (four points and the hour's first sample, three series), never one per sample row.
    expect(Math.max(...loops)).toBeLessThanOrEqual(15);
  });

  it('counts stale executions from an index range on updated_at, not a test of every active one', async () => {
    const { sent } = await readNeedsYouSent();
    expect(sent).toHaveLength(1);
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('set local enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain ${sent[0]!.text}`, sent[0]!.values);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      // A bound the planner cannot fix before the scan (a volatile clock) would leave only the status here.
      // Either index serves the range: (status, updated_at) or, on PostgreSQL 15, (updated_at, id).
      expect(plan).toMatch(/ob_job_execution e[^\n]*\n\s*Index Cond: \([^\n]*updated_at < [^\n]*updated_at >= /);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});
