import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../lib/db/client';
import { DEAD_LETTER_REASON_LABELS, METRICS } from '../../lib/observability/metric-catalogue';
import { readLastSample } from '../../lib/queries/last-sample';
import {
  METRIC_SAMPLE_INTERVAL_MS,
  SAMPLE_TIME_SHARE,
  sampleMetrics,
  startMetricSampler,
} from '../../lib/workers/metric-sampler';
import { BATCH_STATUSES } from '../../lib/domain/batch-status';
import { freshDatabase } from '../support/database';

const { pool, db, newPool } = await freshDatabase();
const STALE_MS = 900_000;
/** A clock the test drives: each wait the worker asks for resolves when the test says so (or on stop). */
function drivenClock() {
  const delays: number[] = [];
  const waiting: Array<() => void> = [];
  let arrived: (() => void) | null = null;
  return {
    wait: (delayMs: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        delays.push(delayMs);
        signal.addEventListener('abort', () => resolve(), { once: true }); // a handful of waits per test
        waiting.push(resolve);
        arrived?.();
      }),
    async nextWait(): Promise<() => void> {
      while (waiting.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
      return waiting.shift()!;
    },
    requestedDelays: () => [...delays],
  };
}

const serverNowMs = async () =>
  Number((await pool.query(`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`)).rows[0].ms);

async function latest(): Promise<Record<string, number>> {
  const { rows } = await pool.query(`
    select metric, label, value from keel.metric_sample
    where sampled_at = (select max(sampled_at) from keel.metric_sample)`);
  return Object.fromEntries(rows.map((r) => [r.label ? `${r.metric}{${r.label}}` : r.metric, r.value]));
}

async function givenAQueue(nowMs: number) {
  const insert = `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms,
                  row_version,
    lease_owner, lease_token, lease_until_ms, updated_at_ms) values ($1, 1, $2, $3, $4, 0, $5, $6, $7, 1)`;
  const rows: [string, string, number, number, string | null, number | null][] = [
    ['due-1', 'pending_observation', 0, nowMs - 10, null, null],
    ['due-2', 'retry_scheduled', 2, nowMs - 10, null, null],
    ['due-expired-lease', 'pending_observation', 0, nowMs - 10, 'w', nowMs - 1],
    ['leased', 'pending_observation', 0, nowMs - 10, 'w', nowMs + 600_000],
    ['later-1', 'retry_scheduled', 1, nowMs + 600_000, null, null],
    ['later-2', 'retry_scheduled', 3, nowMs + 600_000, null, null],
  ];
  for (const [id, kind, attempts, visible, owner, until] of rows) {
    await pool.query(insert, [id, kind, attempts, visible, owner, owner ? 'token' : null, until]);
  }
  await pool.query(
    `insert into settle.dead_letters values ('d1', 1, 6, 'rpc', '{}', 1), ('d2', 1, 6, 'rpc', '{}', 1),
     ('d3', 1, 1, 'signature', '{}', 1)`,
  );
  await pool.query(
    `insert into keel.settlement_event (receipt_id, kind, attempt, at_ms) values
    ('due-2', 'retry_scheduled', 2, $1), ('later-1', 'retry_scheduled', 1, $1), ('old', 'retry_scheduled', 1, $2)`,
    [nowMs - 1_000, nowMs - 3_600_000],
  );
  // The dead letters' history, one dead letter replayed since (its event stays), and a code outside the vocabulary.
  await pool.query(`insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms) values
    ('d1', 'dead_lettered', 6, 'rpc', 1), ('d2', 'dead_lettered', 6, 'rpc', 1),
    ('d3', 'dead_lettered', 1, 'signature', 1),
    ('replayed-1', 'dead_lettered', 6, 'rpc', 1), ('replayed-1', 'replayed', 6, 'rpc', 2),
    ('odd', 'dead_lettered', 2, 'cosmic_ray', 1)`);
  // One stale execution (silent for an hour), one fresh one, and a pending proposal.
  await pool.query(`insert into oxide_batch.ob_job_definition (id, job_name, definition_revision, manifest_format,
                    manifest_digest, manifest)
    values (1, 'job', 'r1', 1, sha256('m'), '{}')`);
  await pool.query(
    `insert into oxide_batch.ob_job_instance (id, job_name, instance_key)
     values (1, 'job', sha256('a')), (2, 'job', sha256('b'))`,
  );
  await pool.query(`insert into oxide_batch.ob_job_execution (job_instance_id, definition_id, attempt, status,
                    updated_at)
    values (1, 1, 1, 'STARTED', clock_timestamp() - interval '1 hour'), (2, 1, 1, 'STARTED', clock_timestamp())`);
  await pool.query(`insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence,
                    expected_version, proposer_id,
    proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
    values ('batch', '1', sha256('e'), '{}', 0, 'u', 'operator', 'p', clock_timestamp() + interval '15 minutes', 'c')`);
}

describe('metric sampler', () => {
  it('samples queue depth by state, retries, dead letters by reason, stale executions, proposals, status', async () => {
    await givenAQueue(await serverNowMs());
    expect(await sampleMetrics(db, { staleThresholdMs: STALE_MS })).toEqual({
      written: 36,
      deleted: 0,
      intervalMs: METRIC_SAMPLE_INTERVAL_MS,
    });
    const { [METRICS.sampleSeconds]: took, ...figures } = await latest();
    expect(took).toBeGreaterThan(0);
    expect(figures).toEqual({
      // A sample this small takes far less than a tenth of 15 s: the interval stays.
      [METRICS.sampleIntervalSeconds]: METRIC_SAMPLE_INTERVAL_MS / 1000,
      [`${METRICS.queueDepth}{due}`]: 3,
      [`${METRICS.queueDepth}{leased}`]: 1,
      [`${METRICS.queueDepth}{retry_scheduled}`]: 2,
      [METRICS.retrying]: 3,
      [METRICS.retriesScheduled]: 2,
      [`${METRICS.deadLetters}{rpc}`]: 2,
      [`${METRICS.deadLetters}{signature}`]: 1,
      [METRICS.deadLettersTotal]: 3,
      // Every reason, zero or not, so a counter never appears mid-way with its whole count.
      ...Object.fromEntries(
        DEAD_LETTER_REASON_LABELS.map((reason) => [
          `${METRICS.deadLettered}{${reason}}`,
          { rpc: 3, signature: 1, other: 1 }[reason as string] ?? 0,
        ]),
      ),
      [METRICS.corruptEnvelopes]: 0,
      [METRICS.staleExecutions]: 1,
      [METRICS.pendingProposals]: 1,
      // Every status, zero or not, so the overview and /api/metrics read them without counting.
      ...Object.fromEntries(
        BATCH_STATUSES.map((status) => [`${METRICS.executions}{${status}}`, status === 'STARTED' ? 2 : 0]),
      ),
    });
    // No label ever holds a receipt id.
    const labels = await pool.query(`select distinct label from keel.metric_sample`);
    expect(labels.rows.map((r) => r.label).sort()).toEqual(
      [...new Set(['', ...BATCH_STATUSES, 'due', 'leased', 'retry_scheduled', ...DEAD_LETTER_REASON_LABELS])].sort(),
    );
  });

  it('writes one sample per interval however many processes sample, and forgets samples after two days', async () => {
    await pool.query('delete from keel.metric_sample');
    await pool.query(`insert into keel.metric_sample (sampled_at, metric, label, value) values
      (clock_timestamp() - interval '2 days 1 minute', 'old', '', 1),
      (clock_timestamp() - interval '47 hours', 'kept', '', 1)`);
    const samplers = Array.from({ length: 4 }, () => createDatabase(newPool(1)));
    const results = await Promise.all(samplers.map((d) => sampleMetrics(d, { staleThresholdMs: STALE_MS })));
    expect(results.filter((r) => r !== null)).toEqual([
      { written: 36, deleted: 1, intervalMs: METRIC_SAMPLE_INTERVAL_MS },
    ]);
    const { rows } = await pool.query(
      `select metric, count(*)::int as n from keel.metric_sample where metric in ('old', 'kept', $1) group by 1
       order by 1`,
      [METRICS.pendingProposals],
    );
    expect(rows).toEqual([
      { metric: 'kept', n: 1 },
      { metric: METRICS.pendingProposals, n: 1 },
    ]);
  });

  it('runs on its interval until stopped, logging no receipt ids', async () => {
    await pool.query('delete from keel.metric_sample');
    const lines: string[] = [];
    const clock = drivenClock();
    const sampler = startMetricSampler({
      db,
      staleThresholdMs: STALE_MS,
      intervalMs: 300,
      wait: clock.wait,
      log: (level, message, fields) => lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
    });
    // Each wait the sampler asks for follows one finished sample; let three intervals pass.
    for (let tick = 0; tick < 3; tick += 1) (await clock.nextWait())();
    await clock.nextWait();
    await sampler.stop();
    // The first sample of an empty table is always written (later ones may fall inside one interval).
    const { rows } = await pool.query(`select value from keel.metric_sample where metric = $1 order by sampled_at`, [
      METRICS.sampleIntervalSeconds,
    ]);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    // After a sample it waits the interval that sample set (300 ms, or more on a slow machine), after
    // a sample another took, its own 300 ms.
    const set = rows.map((r) => Math.round(r.value * 1000));
    expect(set.every((ms) => ms >= 300)).toBe(true);
    expect(clock.requestedDelays()[0]).toBe(set[0]);
    expect(clock.requestedDelays().every((ms) => ms === 300 || set.includes(ms))).toBe(true);
    // Stopped: stop() resolved only after the loop ended, and it asked for no further wait.
    expect(clock.requestedDelays()).toHaveLength(4);
    expect(lines.some((l) => l.startsWith('info metric sampler started'))).toBe(true);
    expect(lines.some((l) => l.startsWith('info metric sampler stopped'))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/due-1|leased|d1|token/);
  });

  it('stretches its interval when a sample takes over a tenth of it, and records both', async () => {
    await pool.query('delete from keel.metric_sample');
    // A 1 ms interval: any real sample takes more than a tenth of it.
    const sampled = await sampleMetrics(db, { staleThresholdMs: STALE_MS, intervalMs: 1 });
    const figures = await latest();
    const tookMs = figures[METRICS.sampleSeconds]! * 1000;
    expect(sampled!.intervalMs).toBeGreaterThan(1);
    expect(sampled!.intervalMs).toBeCloseTo(tookMs / SAMPLE_TIME_SHARE, -1);
    expect(figures[METRICS.sampleIntervalSeconds]! * 1000).toBeCloseTo(sampled!.intervalMs, 6);
  });

  it('holds every process and page to the interval the last sample set', async () => {
    const sampleAMinuteAgo = async (intervalSeconds: number | null) => {
      await pool.query('delete from keel.metric_sample');
      await pool.query(
        `insert into keel.metric_sample (sampled_at, metric, label, value)
         select clock_timestamp() - interval '1 minute', m, '', v
         from (values ($1, 1::float8), ($2, $3::float8)) as s(m, v) where v is not null`,
        [METRICS.pendingProposals, METRICS.sampleIntervalSeconds, intervalSeconds],
      );
    };
    // A sample that set an interval of an hour: a minute on, it is fresh and nobody samples again.
    await sampleAMinuteAgo(3_600);
    expect((await readLastSample(db)).fresh).toBe(true);
    expect(await sampleMetrics(db, { staleThresholdMs: STALE_MS })).toBeNull();
    // The same sample at the 15 s interval (or one written before samples set theirs) is stale at a minute.
    for (const interval of [15, null]) {
      await sampleAMinuteAgo(interval);
      expect((await readLastSample(db)).fresh).toBe(false);
      expect(await sampleMetrics(db, { staleThresholdMs: STALE_MS })).toMatchObject({ written: 36 });
    }
  });
});
