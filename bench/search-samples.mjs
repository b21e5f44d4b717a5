// What bench/search.mjs and bench/explain-search.ts search for: real ids of every kind, read
// from the loaded database, and (--prepare) the rows `keel load-scale` does not make.
// Not a benchmark itself.

const MARK = 'bench-search';

/**
 * Recovery proposals, runtime operator requests, settlement replays, audit events with
 * operation ids and settlement history, each once per database (marked `bench-search`):
 * the scale load makes executions, steps and settlements only. Rows only a search reads;
 * nothing acts on them. Returns the tables it filled.
 */
export async function prepareSearchRows(
  client,
  { proposals = 5_000, requests = 20_000, replays = 20_000, audit = 200_000, history = 500_000 } = {},
) {
  const steps = [
    {
      table: 'keel.recovery_proposal',
      marked: `proposer_login = '${MARK}'`,
      insert: `insert into keel.recovery_proposal (target_kind, target_id, kind, evidence_digest, evidence,
               expected_version, proposer_id, proposer_login,
           status, decided_at, decider_id, decider_login, wait_owner, wait_deadline, wait_cancellation_id)
         select 'batch', e.id::text, 'TAKEOVER', sha256(convert_to('${MARK}-proposal:' || g, 'UTF8')),
         '{}'::jsonb, e.version, '${MARK}', '${MARK}',
                'REJECTED', now(), '${MARK}', '${MARK}', '${MARK}', now(), '${MARK}-' || g
         from generate_series(1, $1::int) g join oxide_batch.ob_job_execution e on e.id = g * 97`,
      size: proposals,
    },
    {
      table: 'oxide_batch.ob_operator_request',
      marked: `actor_ref = 'cli:${MARK}'`,
      insert: `insert into oxide_batch.ob_operator_request (job_instance_id, job_execution_id, action,
               authorization_class, operation_id, actor_ref,
           request_digest, observed_version, prior_status, result_status, outcome_class)
         select e.job_instance_id, e.id, 'STOP', 'LIFECYCLE', '${MARK}-stop-' || g, 'cli:${MARK}',
         sha256(convert_to('${MARK}-request:' || g, 'UTF8')),
                e.version, 'STARTED', 'STOPPING', 'APPLIED'
         from generate_series(1, $1::int) g join oxide_batch.ob_job_execution e on e.id = g * 43`,
      size: requests,
    },
    {
      table: 'keel.settlement_replay',
      marked: `actor_login = '${MARK}'`,
      insert: `insert into keel.settlement_replay (receipt_id, prior_attempts, prior_reason, actor_id, actor_login,
               note, operation_id)
         select d.receipt_id, d.attempts, d.reason, '${MARK}', '${MARK}', 'bench',
         '${MARK}-replay-' || row_number() over ()
         from (select receipt_id, attempts, reason from settle.dead_letters order by receipt_id limit $1::int) d`,
      size: replays,
    },
    {
      // Half of them carry an operation id, as Keel's actions write them.
      table: 'keel.audit_event',
      marked: `actor_login = '${MARK}'`,
      insert: `insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, operation_id,
               outcome)
         select '${MARK}', 'support', 'settlement.replay', 'settlement', 'rcpt_${MARK}_' || g, case when g % 2 = 0
         then '${MARK}-audit-' || g end, 'APPLIED'
         from generate_series(1, $1::int) g`,
      size: audit,
    },
    {
      // History of receipts long gone from the queue, which search finds by their whole id only.
      table: 'keel.settlement_event',
      marked: `receipt_id like 'rcpt_${MARK}_done_%'`,
      insert: `insert into keel.settlement_event (receipt_id, kind, attempt, at_ms)
         select 'rcpt_${MARK}_done_' || g / 4, (array['claimed', 'retry_scheduled', 'claimed', 'finished'])[1 + g % 4],
         1 + (g % 4) / 2,
                (extract(epoch from now()) * 1000)::bigint - g
         from generate_series(0, $1::int - 1) g`,
      size: history,
    },
  ];
  const filled = [];
  for (const step of steps) {
    const present = await client.query(`select exists (select 1 from ${step.table} where ${step.marked}) as done`);
    if (present.rows[0].done) continue;
    await client.query(step.insert, [step.size]);
    await client.query(`analyze ${step.table}`);
    filled.push(step.table);
  }
  return filled;
}

const column = async (client, text, params = []) => (await client.query(text, params)).rows.map((r) => String(r.v));

/**
 * `count` search texts per kind, spread over each table (tablesample), so a run reads
 * rows from everywhere rather than one cached page. Kinds with no rows are left out.
 */
export async function searchSamples(client, { count = 200, username = null } = {}) {
  const kinds = {
    'execution id': await column(
      client,
      `select id as v from oxide_batch.ob_job_execution tablesample system (1) order by random() limit $1`,
      [count],
    ),
    'job instance id': await column(
      client,
      `select job_instance_id as v from oxide_batch.ob_job_execution tablesample system (1) order by random() limit $1`,
      [count],
    ),
    'receipt id (queued)': await column(
      client,
      `select receipt_id as v from settle.attempts tablesample system (1) order by random() limit $1`,
      [count],
    ),
    'receipt id (dead letter)': await column(
      client,
      `select receipt_id as v from settle.dead_letters tablesample system (5) order by random() limit $1`,
      [count],
    ),
    // Two characters past the common `rcpt_`: about 1 in 256 receipts, so every prefix has more than 20.
    'receipt prefix': await column(
      client,
      `select distinct left(receipt_id, 7) as v from settle.attempts tablesample system (1) limit $1`,
      [count],
    ),
    'retry key prefix (12 hex)': await column(
      client,
      `select left(k, 12) as v from (select jsonb_path_query(fault_state_payload, 'lax $.entries[*].key') #>> '{}' as k
         from oxide_batch.ob_step_execution where fault_state_payload -> 'entries' <> '[]'::jsonb and id % 7 = 0
         limit $1) x`,
      [count],
    ),
    'retry key (64 hex)': await column(
      client,
      `select k as v from (select jsonb_path_query(fault_state_payload, 'lax $.entries[*].key') #>> '{}' as k
         from oxide_batch.ob_step_execution where fault_state_payload -> 'entries' <> '[]'::jsonb and id % 11 = 0
         limit $1) x`,
      [count],
    ),
    'proposal id': await column(client, `select id as v from keel.recovery_proposal order by random() limit $1`, [
      count,
    ]),
    'digest prefix (12 hex)': await column(
      client,
      `select left(encode(evidence_digest, 'hex'), 12) as v from keel.recovery_proposal order by random() limit $1`,
      [count],
    ),
    'operation id (runtime)': await column(
      client,
      `select operation_id as v from oxide_batch.ob_operator_request order by random() limit $1`,
      [count],
    ),
    'operation id (replay)': await column(
      client,
      `select operation_id as v from keel.settlement_replay order by random() limit $1`,
      [count],
    ),
    'operation id (audit)': await column(
      client,
      `select operation_id as v from keel.audit_event where operation_id is not null order by random() limit $1`,
      [count],
    ),
    'receipt id (history only)': await column(
      client,
      `select receipt_id as v from keel.settlement_event tablesample system (1)
       where receipt_id like 'rcpt_${MARK}_done_%' limit $1`,
      [count],
    ),
    username: username
      ? [username]
      : await column(client, `select username as v from keel."user" where username is not null limit $1`, [count]),
    'no match': Array.from({ length: count }, (_, i) => `no-such-id-${i}`),
  };
  return Object.fromEntries(Object.entries(kinds).filter(([, texts]) => texts.length > 0));
}
