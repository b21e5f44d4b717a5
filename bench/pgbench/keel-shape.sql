-- Keel's settlement transaction shape, as pgbench SQL: claim 100 due attempts (lease,
-- version bump, `claimed` history events, one lease grant), then record 100 Accepted outcomes (delete
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
  returning a.receipt_id, a.attempts, a.lease_token, a.lease_owner, a.lease_until_ms, a.next_visible_at_ms
), logged as (
  insert into keel.settlement_event (receipt_id, kind, attempt, at_ms)
  select receipt_id, 'claimed', attempts, :now from claimed
), granted as (
  -- The claim's lease grant (drizzle/0019), as lib/db/sql/lease-grants.ts writes it.
  insert into settle.lease_grants (lease_until_ms, lo_next_visible_at_ms, lo_receipt_id, hi_next_visible_at_ms, hi_receipt_id)
  select lo.lease_until_ms, lo.next_visible_at_ms, lo.receipt_id, hi.next_visible_at_ms, hi.receipt_id
  from (select distinct on (lease_until_ms) lease_until_ms, next_visible_at_ms, receipt_id from claimed
        where lease_owner is not null order by lease_until_ms, next_visible_at_ms asc, receipt_id asc) lo
  join (select distinct on (lease_until_ms) lease_until_ms, next_visible_at_ms, receipt_id from claimed
        where lease_owner is not null order by lease_until_ms, next_visible_at_ms desc, receipt_id desc) hi using (lease_until_ms)
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
