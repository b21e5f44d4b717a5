-- Keel's settlement transaction shape, as pgbench SQL (run with -M prepared): claim 100 due
-- attempts (lease, version bump, a `claimed` history event for each lapsed claim taken over, one
-- lease grant), then record their outcomes in a second transaction, on Keel's own schema and
-- triggers, as Keel's batch statement (lib/simulator/adapters/settlement-batch.ts) writes them:
-- every row found by its key and compared field by field with its claim, the mix by item number
-- modulo 100 (-D dead, -D retried, in percent): dead-lettered rows deleted with a dead letter,
-- retried rows rescheduled `:backoff` ms ahead, the rest deleted, one history event each with
-- its claim's time. The claim hands its rows over in array variables.
with candidate as (
  select receipt_id, next_visible_at_ms, attempts, lease_owner, updated_at_ms from settle.attempts
  where next_visible_at_ms <= :now::bigint and (lease_owner is null or lease_until_ms <= :now::bigint)
  order by next_visible_at_ms, receipt_id limit 100 for update skip locked
), claimed as (
  update settle.attempts a
  set row_version = a.row_version + 1, lease_owner = 'pgbench-' || :client_id, lease_token = gen_random_uuid()::text,
      lease_until_ms = :now::bigint + 60000, updated_at_ms = :now::bigint
  from candidate
  where a.receipt_id = candidate.receipt_id and a.next_visible_at_ms <= :now::bigint and (a.lease_owner is null or a.lease_until_ms <= :now::bigint)
  returning a.receipt_id, a.finalized_at, a.attempts, a.row_version, a.lease_token, a.lease_owner, a.lease_until_ms,
            a.next_visible_at_ms
), lapsed as (
  insert into keel.settlement_event (receipt_id, kind, attempt, at_ms)
  select c.receipt_id, 'claimed', c.attempts, c.updated_at_ms from candidate c join claimed using (receipt_id)
  where c.lease_owner is not null order by c.next_visible_at_ms, c.receipt_id
), granted as (
  -- The claim's lease grant (drizzle/0019), as lib/db/sql/lease-grants.ts writes it.
  insert into settle.lease_grants (lease_until_ms, lo_next_visible_at_ms, lo_receipt_id, hi_next_visible_at_ms, hi_receipt_id)
  select lo.lease_until_ms, lo.next_visible_at_ms, lo.receipt_id, hi.next_visible_at_ms, hi.receipt_id
  from (select distinct on (lease_until_ms) lease_until_ms, next_visible_at_ms, receipt_id from claimed
        where lease_owner is not null order by lease_until_ms, next_visible_at_ms asc, receipt_id asc) lo
  join (select distinct on (lease_until_ms) lease_until_ms, next_visible_at_ms, receipt_id from claimed
        where lease_owner is not null order by lease_until_ms, next_visible_at_ms desc, receipt_id desc) hi using (lease_until_ms)
)
select coalesce(array_agg(receipt_id), '{}')::text as ids,
       coalesce(array_agg(finalized_at), '{}')::text as fins,
       coalesce(array_agg(attempts), '{}')::text as atts,
       coalesce(array_agg(row_version), '{}')::text as vers,
       coalesce(array_agg(lease_token), '{}')::text as tokens
from claimed \gset
with input as (
  select c.*, substr(c.receipt_id, 6)::int % 100 as bucket
  from unnest(:ids::text[], :fins::bigint[], :atts::int[], :vers::bigint[], :tokens::text[])
    as c(receipt_id, finalized_at, attempts, row_version, lease_token)
), gone as (
  delete from settle.attempts a using input i
  where not (i.bucket >= :dead::int and i.bucket < :dead::int + :retried::int)
    and a.receipt_id = i.receipt_id and a.finalized_at = i.finalized_at and a.attempts = i.attempts
    and a.row_version = i.row_version and a.lease_owner = 'pgbench-' || :client_id and a.lease_token = i.lease_token
    and a.lease_until_ms = :now::bigint + 60000 and a.lease_until_ms > :now::bigint
  returning i.receipt_id, i.finalized_at, i.attempts, i.bucket < :dead::int as dead, a.updated_at_ms as claimed_at_ms
), moved as (
  update settle.attempts a
  set work_kind = 'retry_scheduled', attempts = i.attempts + 1, next_visible_at_ms = :now::bigint + :backoff::bigint,
      row_version = a.row_version + 1, lease_owner = null, lease_token = null, lease_until_ms = null,
      reason_code = 'rpc', reason_detail_sha256 = sha256(''::bytea), updated_at_ms = :now::bigint
  from input i join settle.attempts claimed on claimed.receipt_id = i.receipt_id
  where i.bucket >= :dead::int and i.bucket < :dead::int + :retried::int
    and a.receipt_id = i.receipt_id and a.finalized_at = i.finalized_at and a.attempts = i.attempts
    and a.row_version = i.row_version and a.lease_owner = 'pgbench-' || :client_id and a.lease_token = i.lease_token
    and a.lease_until_ms = :now::bigint + 60000 and a.lease_until_ms > :now::bigint
  returning i.receipt_id, i.attempts, claimed.updated_at_ms as claimed_at_ms
), dead as (
  insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
  select receipt_id, finalized_at, attempts + 1, 'invalid_observation',
         '{"attempts":' || (attempts + 1) || ',"finalized_at":' || finalized_at
         || ',"reason":{"code":"invalid_observation","detail_sha256":[227,176,196,66,152,252,28,20,154,251,244,200,153,'
         || '111,185,36,39,174,65,228,100,155,147,76,164,149,153,27,120,82,184,85]},"receipt_id":'
         || to_json(receipt_id)::text || ',"schema":"chio.settle.dead-letter.v2"}',
         :now::bigint
  from gone where dead
), logged as (
  insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms, claimed_at_ms)
  select receipt_id, case when dead then 'dead_lettered' else 'finished' end, attempts + 1,
         case when dead then 'invalid_observation' end, :now::bigint, claimed_at_ms
  from gone
  union all
  select receipt_id, 'retry_scheduled', attempts + 1, 'rpc', :now::bigint, claimed_at_ms from moved
)
select count(*) from gone;
