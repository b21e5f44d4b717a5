import type pg from 'pg';

/**
 * The counts /api/metrics must report, written independently of the code under test:
 * queue states by the lease and visibility times against the database clock.
 */
export async function countsFromDatabase(pool: pg.Pool | pg.Client, staleThresholdMs: number) {
  const q = async <T extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    (await pool.query(sql, params)).rows as T[];
  const toMap = (rows: { k: string; n: string | number }[]) => Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
  // One after another: a single pg.Client runs one query at a time.
  const queue = await q<{ k: string; n: string }>(`
      with now as (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms)
      select s.k, count(a.receipt_id) as n
      from (values ('due'), ('leased'), ('retry_scheduled')) as s(k)
      left join (settle.attempts a cross join now)
        on s.k = case when a.lease_owner is not null and a.lease_until_ms > now.ms then 'leased'
                      when a.next_visible_at_ms > now.ms then 'retry_scheduled' else 'due' end
      group by s.k`);
  const dead = await q<{ k: string; n: string }>(
    `select reason as k, count(*) as n from settle.dead_letters group by reason`,
  );
  const executions = await q<{ k: string; n: string }>(
    `select status as k, count(*) as n from oxide_batch.ob_job_execution group by status`,
  );
  const stale = await q<{ n: string }>(
    `select count(*) as n from oxide_batch.ob_job_execution
        where status in ('STARTING', 'STARTED', 'STOPPING')
        and (extract(epoch from clock_timestamp()) * 1000)::bigint - (extract(epoch from updated_at)
        * 1000)::bigint > $1::bigint`,
    [staleThresholdMs],
  );
  const pending = await q<{ n: string }>(`select count(*) as n from keel.recovery_proposal where status = 'PENDING'`);
  return {
    queue: toMap(queue),
    deadLetters: toMap(dead),
    executions: toMap(executions),
    stale: Number(stale[0]!.n),
    pendingProposals: Number(pending[0]!.n),
  };
}

/**
 * The metric sampler's last sample (keel.metric_sample) as the same counts: what the
 * overview and /api/metrics report, since neither counts the tables per view or scrape.
 * Zero counts are left out, as the database counts leave them out.
 */
export async function countsFromLastSample(pool: pg.Pool | pg.Client) {
  const { rows } = await pool.query<{ metric: string; label: string; value: number }>(`
    select metric, label, value from keel.metric_sample
    where sampled_at = (select max(sampled_at) from keel.metric_sample)`);
  const of = (metric: string) =>
    Object.fromEntries(
      rows.filter((r) => r.metric === metric && Number(r.value) > 0).map((r) => [r.label, Number(r.value)]),
    );
  const one = (metric: string) => Number(rows.find((r) => r.metric === metric)?.value ?? 0);
  return {
    queue: of('settlement_queue_depth'),
    deadLetters: of('settlement_dead_letters'),
    executions: of('batch_executions'),
    stale: one('batch_stale_executions'),
    pendingProposals: one('recovery_pending_proposals'),
  };
}

/** Values that must never be a metric label: receipt ids, owner and lease tokens, retry keys. */
export async function forbiddenLabelValues(pool: pg.Pool | pg.Client): Promise<string[]> {
  const { rows } = await pool.query<{ v: string }>(`
    select receipt_id as v from settle.attempts
    union select receipt_id from settle.dead_letters
    union select lease_owner from settle.attempts where lease_owner is not null
    union select lease_token from settle.attempts where lease_token is not null
    union select encode(owner_token, 'hex') from oxide_batch.ob_job_execution where owner_token is not null
    union select e.value->>'key' from oxide_batch.ob_step_execution s,
      jsonb_array_elements(case when jsonb_typeof(s.fault_state_payload->'entries') = 'array'
      then s.fault_state_payload->'entries' else '[]'::jsonb end) e(value)
      where e.value->>'key' is not null
    union select lease_owner from keel.durable_checkpoint`);
  return rows.map((r) => r.v);
}

export type MetricCounts = Awaited<ReturnType<typeof countsFromDatabase>>;

/**
 * Compares a scrape with counts taken just before and just after it. Dead letters,
 * executions by status and pending proposals must equal both exactly. Queue states
 * and staleness move with the clock alone (leases lapse, retries fall due, executions
 * go stale), monotonically while nothing writes, so each must lie between the two
 * counts, and the queue states must still add up to the whole queue. Returns the
 * violations, empty when the scrape is right.
 */
export function scrapeViolations(reported: MetricCounts, before: MetricCounts, after: MetricCounts): string[] {
  const problems: string[] = [];
  const same = (label: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a) !== JSON.stringify(b))
      problems.push(`${label}: reported ${JSON.stringify(a)}, database ${JSON.stringify(b)}`);
  };
  const within = (label: string, value: number | undefined, x = 0, y = 0) => {
    if (value === undefined || value < Math.min(x, y) || value > Math.max(x, y))
      problems.push(`${label}: reported ${value}, database ${x} before and ${y} after`);
  };
  const sorted = (m: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(m)
        .filter(([, n]) => n > 0)
        .sort(),
    );
  same('dead letters', sorted(reported.deadLetters), sorted(before.deadLetters));
  same('dead letters (after)', sorted(reported.deadLetters), sorted(after.deadLetters));
  same('executions', sorted(reported.executions), sorted(before.executions));
  same('pending proposals', reported.pendingProposals, before.pendingProposals);
  for (const state of ['due', 'leased', 'retry_scheduled'])
    within(`queue ${state}`, reported.queue[state], before.queue[state], after.queue[state]);
  const total = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
  same('queue total', total(reported.queue), total(before.queue));
  within('stale executions', reported.stale, before.stale, after.stale);
  return problems;
}
