-- Keel's settlement transaction shape, as pgbench SQL: claim 100 due attempts (lease,
-- version bump, `claimed` history events), then record 100 Accepted outcomes (delete
-- + `finished` history events) in a second transaction, on Keel's own schema and triggers.
-- The delete finds each claimed row by its key and compares its lease, as Keel's
-- compare-and-set does; the claim hands the keys and tokens over in two variables.
with candidate as (
  select receipt_id from settle.attempts
  where next_visible_at_ms <= :now and (lease_owner is null or lease_until_ms <= :now)
  order by next_visible_at_ms, receipt_id limit 100 for update skip locked
), claimed as (
  update settle.attempts a
  set row_version = a.row_version + 1, lease_owner = 'pgbench-' || :client_id, lease_token = gen_random_uuid()::text,
      lease_until_ms = :now + 60000, updated_at_ms = :now
  from candidate
  where a.receipt_id = candidate.receipt_id and a.next_visible_at_ms <= :now and (a.lease_owner is null or a.lease_until_ms <= :now)
  returning a.receipt_id, a.attempts, a.lease_token
), logged as (
  insert into keel.settlement_event (receipt_id, kind, attempt, at_ms)
  select receipt_id, 'claimed', attempts, :now from claimed
)
select quote_literal(coalesce(array_agg(receipt_id), '{}')::text) as ids,
       quote_literal(coalesce(array_agg(lease_token), '{}')::text) as tokens
from claimed \gset
with gone as (
  delete from settle.attempts a
  using unnest(:ids::text[], :tokens::text[]) as c(receipt_id, lease_token)
  where a.receipt_id = c.receipt_id and a.lease_token = c.lease_token
    and a.lease_owner = 'pgbench-' || :client_id and a.lease_until_ms > :now
  returning a.receipt_id, a.attempts
)
insert into keel.settlement_event (receipt_id, kind, attempt, at_ms)
select receipt_id, 'finished', attempts + 1, :now from gone;
