import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { createPool } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { leaseGrantsInsertText } from '../db/sql/lease-grants';
import { DEMO_DEFINITIONS, manifestFor } from '../demo/seed-batch';
import { UNRESOLVED_STATUSES } from '../domain/batch-status';
import { deadLetterCanonicalJson, failureDetailSha256Hex } from '../domain/settlement-records';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';
import { envelopeFor, type EnvelopeStep } from './load-scale-envelopes';

const DEFAULTS = { executions: 1_000_000, 'retry-keys': 50_000, attempts: 1_000_000, 'dead-letters': 100_000 };
const REVISION = 'scale-v1';
const _DAY_MS = 86_400_000;
// Status shares per 100 executions: mostly finished, a realistic tail of active and UNKNOWN ones.
const STATUS_SLOTS = [
  ['COMPLETED', 62],
  ['FAILED', 12],
  ['STOPPED', 5],
  ['ABANDONED', 3],
  ['STARTED', 10],
  ['STARTING', 2],
  ['STOPPING', 2],
  ['UNKNOWN', 4],
] as const;

const statusCase = (slot: string) => {
  let upper = 0;
  const arms = STATUS_SLOTS.map(([status, share]) => `when ${slot} < ${(upper += share)} then '${status}'`);
  return `case ${arms.join(' ')} end`;
};
const unresolvedList = UNRESOLVED_STATUSES.map((s) => `'${s}'`).join(', ');
const sha = (text: string) => createHash('sha256').update(text).digest();

async function timed(log: (line: string) => void, what: string, work: () => Promise<unknown>) {
  const started = Date.now();
  await work();
  log(`${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const maxId = async (db: pg.PoolClient, table: string) =>
  Number((await db.query<{ n: string }>(`select coalesce(max(id), 0) as n from ${table}`)).rows[0]!.n);

/** Identity columns keep counting after the explicit ids the load wrote. */
const resetIdentity = (db: pg.PoolClient, table: string) =>
  db.query(`select setval(pg_get_serial_sequence('${table}', 'id'), (select coalesce(max(id), 1) from ${table}))`);

async function loadDefinitions(db: pg.PoolClient): Promise<number[]> {
  const ids: number[] = [];
  for (const plan of DEMO_DEFINITIONS) {
    const manifest = manifestFor(plan);
    const { rows } = await db.query<{ id: string }>(
      `insert into oxide_batch.ob_job_definition (job_name, definition_revision, manifest_format, manifest_digest,
       manifest)
       values ($1, $2, 1, $3, $4)
       on conflict (job_name, definition_revision) do update set job_name = excluded.job_name
       returning id`,
      [plan.jobName, REVISION, sha(JSON.stringify(manifest)), manifest],
    );
    ids.push(Number(rows[0]!.id));
  }
  return ids;
}

/**
 * Instances, executions and their steps in three set-based statements; ids are explicit so steps join by arithmetic.
 */
async function loadExecutions(db: pg.PoolClient, count: number, definitionIds: number[], log: (line: string) => void) {
  const instanceBase = await maxId(db, 'oxide_batch.ob_job_instance');
  const executionBase = await maxId(db, 'oxide_batch.ob_job_execution');
  const defs = `(select * from unnest($1::bigint[], $2::text[], $3::int[], $4::text[])
                with ordinality as u(id, job_name, steps, step_list, slot)) d`;
  const plans = DEMO_DEFINITIONS.map((p) => p.steps.map((s) => s.logicalId));
  const params = [
    definitionIds,
    DEMO_DEFINITIONS.map((p) => p.jobName),
    plans.map((p) => p.length),
    plans.map((p) => p.join(',')),
  ];
  const n = DEMO_DEFINITIONS.length;
  await timed(log, `${count} instances`, () =>
    db.query(
      `insert into oxide_batch.ob_job_instance (id, job_name, instance_key, identifying_parameters, created_at)
     select ${instanceBase} + g, d.job_name, sha256(convert_to('scale-instance:' || (${instanceBase} + g), 'UTF8')),
            jsonb_build_object('run', g), now() - (g % 90) * interval '1 day'
     from generate_series(1, ${count}) g join ${defs} on d.slot = 1 + g % ${n}`,
      params,
    ),
  );
  // updated_at spreads over 90 days, newest at the highest id; active rows older than an hour read as stale.
  await timed(log, `${count} executions`, () =>
    db.query(
      `insert into oxide_batch.ob_job_execution (id, job_instance_id, definition_id, attempt, status, exit_code,
       parameters,
       failure_category, failure_id, created_at, started_at, ended_at, updated_at, version, owner_token)
     select ${executionBase} + g, ${instanceBase} + g, d.id, 1, x.status,
            case when x.status = 'FAILED' then 'FAILED' when x.status = 'COMPLETED' then 'COMPLETED' end,
            jsonb_build_object('run_date', to_char(x.at, 'YYYY-MM-DD')),
            case when x.status = 'FAILED' then
            (array['PERMANENT_INFRASTRUCTURE','USER_COMPONENT','TIMEOUT','INVARIANT','SERIALIZATION'])[1 + g % 5] end,
            case when x.status = 'FAILED' then g end,
            x.at - interval '5 minutes', x.at - interval '4 minutes',
            case when x.status not in (${unresolvedList}) then x.at end, x.at, 3,
            case when x.status in ('STARTING', 'STARTED', 'STOPPING')
            then substring(sha256(convert_to('owner:' || g % 7, 'UTF8')) from 1 for 16) end
     from generate_series(1, ${count}) g
     join ${defs} on d.slot = 1 + g % ${n}
     cross join lateral (
       select ${statusCase('(g * 37) % 100')} as status,
              now() - ((${count} - g)::float8 / ${count} * 90 * 86400) * interval '1 second' as at) x`,
      params,
    ),
  );
  // Earlier steps COMPLETED; the last one carries the execution's status.
  await timed(log, 'their steps', () =>
    db.query(
      `insert into oxide_batch.ob_step_execution (job_execution_id, step_name, step_logical_id, status, read_count,
       processed_count,
       write_count, commit_count, created_at, started_at, ended_at, updated_at, version)
     select e.id, split_part(d.step_list, ',', k), split_part(d.step_list, ',', k),
     s.status, 1000 + e.id % 5000, 1000 + e.id % 5000, 990 + e.id % 5000, 10,
            e.created_at, e.started_at, case when s.status not in (${unresolvedList})
            then e.updated_at end, e.updated_at, 2
     from oxide_batch.ob_job_execution e
     join ${defs} on d.id = e.definition_id
     cross join lateral generate_series(1, d.steps) k
     cross join lateral (select case when k < d.steps then 'COMPLETED' else e.status end as status) s
     where e.id > ${executionBase}
     order by e.id, k`,
      params,
    ),
  );
  await resetIdentity(db, 'oxide_batch.ob_job_instance');
  await resetIdentity(db, 'oxide_batch.ob_job_execution');
  return executionBase;
}

/** Checksummed envelopes on steps whose job has a fault policy, computed in TypeScript, written 2,000 per statement. */
async function loadRetryKeys(db: pg.PoolClient, wanted: number, executionBase: number, log: (line: string) => void) {
  const policies = new Map<string, { retryLimit: number; stateLimit: number }>();
  for (const plan of DEMO_DEFINITIONS)
    for (const step of plan.steps) {
      if (step.retryLimit !== undefined)
        policies.set(`${plan.jobName}/${step.logicalId}`, {
          retryLimit: step.retryLimit,
          stateLimit: step.stateLimit!,
        });
    }
  let written = 0;
  let after = 0;
  const started = Date.now();
  while (written < wanted) {
    // Every 13th step of this load: spread across jobs, statuses and ages.
    const { rows } = await db.query<{ id: string; step_logical_id: string; job_name: string; manifest_digest: Buffer }>(
      `select s.id, s.step_logical_id, d.job_name, d.manifest_digest
       from oxide_batch.ob_step_execution s
       join oxide_batch.ob_job_execution e on e.id = s.job_execution_id
       join oxide_batch.ob_job_definition d on d.id = e.definition_id
       where s.job_execution_id > ${executionBase} and s.id > $1 and s.id % 13 = 0
       order by s.id limit 5000`,
      [after],
    );
    if (rows.length === 0) break;
    after = Number(rows[rows.length - 1]!.id);
    const envelopes = [];
    for (const row of rows) {
      const policy = policies.get(`${row.job_name}/${row.step_logical_id}`);
      if (!policy || written >= wanted) continue;
      const step: EnvelopeStep = {
        id: Number(row.id),
        logicalId: row.step_logical_id,
        definitionDigest: row.manifest_digest,
        ...policy,
      };
      const envelope = envelopeFor(step, wanted - written);
      written += envelope.keys;
      envelopes.push({ id: envelope.id, payload: envelope.payload, sum: envelope.checksumHex });
    }
    for (let i = 0; i < envelopes.length; i += 2000) {
      await db.query(
        `update oxide_batch.ob_step_execution s set fault_state_payload = x.payload,
         fault_state_checksum = decode(x.sum, 'hex')
         from jsonb_to_recordset($1::jsonb) as x(id bigint, payload jsonb, sum text) where s.id = x.id`,
        [JSON.stringify(envelopes.slice(i, i + 2000))],
      );
    }
  }
  log(`${written} retry keys in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** The queue in every state (due, leased, lapsed lease, retry later), receipt ids unique per load. */
async function loadAttempts(db: pg.PoolClient, count: number, nonce: string, log: (line: string) => void) {
  // The leases written here get their grants in the same statement, as a claim writes one.
  await timed(log, `${count} settlement attempts`, () =>
    db.query(
      `with loaded as (insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms,
       row_version,
       lease_owner, lease_token, lease_until_ms, reason_code, reason_detail_sha256, updated_at_ms)
     select 'rcpt_' || substr(md5($1 || g), 1, 20), c.ms - 60000 - (g % 21600) * 1000,
            case when retry then 'retry_scheduled' else 'pending_observation' end,
            case when retry then 1 + g % 7 else 0 end,
            case when g % 10 < 4 then c.ms + (g % 7200) * 1000 else c.ms - (g % 3600) * 1000 end, 1,
            case when leased then 'settle-worker-' || g % 3 end, case when leased then md5('lease' || g) end,
            case when leased then c.ms + case when g % 10 = 9 then -60000 else 60000 end end,
            case when retry then (array['rpc', 'backend'])[1 + g % 2] end,
            case when retry then sha256(convert_to('detail' || g % 2, 'UTF8')) end, c.ms
     from generate_series(1, ${count}) g,
          (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) c,
          lateral (select g % 3 = 0 as retry, g % 10 in (4, 5, 9) as leased) f
     returning receipt_id, next_visible_at_ms, lease_owner, lease_until_ms)
     ${leaseGrantsInsertText('loaded')}`,
      [nonce],
    ),
  );
}

/**
 * Dead letters across every reason and 60 days of age; canonical
 * JSON from the domain's writer, one template per reason.
 */
async function loadDeadLetters(db: pg.PoolClient, count: number, nonce: string, log: (line: string) => void) {
  const templates = FAILURE_CODES.map((reason) => {
    const json = deadLetterCanonicalJson({
      receiptId: 'RID',
      finalizedAt: 111111111111,
      attempts: 77777,
      reasonCode: reason,
      detailSha256Hex: failureDetailSha256Hex(`${reason}: scale`),
    });
    if (!json.ok) throw new Error(`dead letter template ${reason}`);
    return json.value;
  });
  // Digits and a receipt id of [0-9a-z_] replace the placeholders without changing the canonical form.
  await timed(log, `${count} dead letters`, () =>
    db.query(
      `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
     select r.id, r.fin, r.tries, ($2::text[])[1 + r.slot],
            replace(replace(replace(($3::text[])[1 + r.slot], '"RID"', '"' || r.id || '"'),
            '111111111111', r.fin::text), '77777', r.tries::text),
            c.ms - (g::bigint * 5184000000 / ${count}) - g % 1000
     from generate_series(1, ${count}) g,
          (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) c,
          lateral (select 'rcpt_' || substr(md5('dead' || $1 || g), 1, 20) as id, c.ms - 6000000000 + g as fin,
                          1 + g % 9 as tries, (g * 7 + g / 5) % ${FAILURE_CODES.length} as slot) r`,
      [nonce, [...FAILURE_CODES], templates],
    ),
  );
}

/** `keel load-scale`: realistic volumes for measuring pages at scale, on an empty database unless --append. */
export async function loadScaleCommand(args: string[], log: (line: string) => void): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      executions: { type: 'string' },
      'retry-keys': { type: 'string' },
      attempts: { type: 'string' },
      'dead-letters': { type: 'string' },
      append: { type: 'boolean' },
      'database-url': { type: 'string' },
    },
  });
  const sizes = Object.fromEntries(
    Object.entries(DEFAULTS).map(([k, d]) => [k, Number(values[k as keyof typeof DEFAULTS] ?? d)]),
  ) as typeof DEFAULTS;
  if (Object.values(sizes).some((n) => !Number.isSafeInteger(n) || n < 0)) {
    process.stderr.write('load-scale: sizes must be whole numbers of at least zero\n');
    return 2;
  }
  const url = values['database-url'] ?? process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('load-scale needs DATABASE_URL or --database-url (it never loads the embedded database)\n');
    return 2;
  }
  const pool = createPool(url, 1);
  try {
    const migrated = await migrateDatabase(pool);
    if (!migrated.ok) {
      process.stderr.write(`[keel] refused (${migrated.error.code}): ${migrated.error.message}\n`);
      return 1;
    }
    const db = await pool.connect();
    try {
      const { rows } = await db.query<{ present: boolean }>(`select exists (select 1 from oxide_batch.ob_job_execution)
        or exists (select 1 from settle.attempts) or exists (select 1 from settle.dead_letters) as present`);
      if (rows[0]!.present && !values.append) {
        process.stderr.write(
          'load-scale: the database already holds executions or settlements; pass --append to add to them\n',
        );
        return 1;
      }
      // A generated load, not business data: losing its last commits to a crash costs nothing.
      await db.query('set synchronous_commit = off');
      const nonce = `${Date.now()}`;
      const definitionIds = await loadDefinitions(db);
      const executionBase = await loadExecutions(db, sizes.executions, definitionIds, log);
      await loadRetryKeys(db, sizes['retry-keys'], executionBase, log);
      await loadAttempts(db, sizes.attempts, nonce, log);
      await loadDeadLetters(db, sizes['dead-letters'], nonce, log);
      await timed(log, 'analyze', () =>
        db.query(
          'analyze oxide_batch.ob_job_instance, oxide_batch.ob_job_execution, oxide_batch.ob_step_execution, ' +
            'settle.attempts, settle.dead_letters, settle.receipt_place',
        ),
      );
      return 0;
    } finally {
      db.release();
    }
  } finally {
    await pool.end();
  }
}
