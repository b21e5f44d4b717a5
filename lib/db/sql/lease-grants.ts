import { sql, type SQL } from 'drizzle-orm';
import { COUNT_CAP } from '../../domain/cursor';
import { leasedAt } from './queue-state';

/**
 * Lease grants (drizzle/0019): the leased rows of `settle.attempts` found through range
 * scans of its due index, since no index there may cover a lease column (0017).
 *
 * The invariant every writer of a lease keeps: a row holding a lease got it from one
 * statement that also inserted, in the same transaction, a grant with the same
 * `lease_until_ms` whose range `[lo, hi]`, in due order `(next_visible_at_ms,
 * receipt_id)`, contains the row's key. Leases are set only by the claim statement
 * (lib/simulator/adapters/settlement-store.ts) and by loaders that grant what they insert (the demo
 * seed, `keel load-scale`, fixtures); every other insert (enqueue, replay) has no lease.
 * While the lease is live the key does not move. A receipt id never changes, and the
 * only writes of `next_visible_at_ms` are a retry outcome, which clears the lease in the
 * same update, and a requeue, which refuses a row under a live lease and clears a lapsed
 * one. (Its `least(next_visible_at_ms, now)` leaves a row claimed when due in place, but a
 * worker passes its own clock to a claim: one running ahead leases rows the console's
 * clock still sees as future, which a requeue would move earlier, out of the range.)
 * So a row leased at `now` lies in the range of a grant with `lease_until_ms > now`, and
 * reading those ranges, then testing `leasedAt(now)` on the rows found, gives exactly the
 * leased rows. A grant is deleted only LEASE_GRANT_GRACE_MS past its deadline.
 */

/**
 * The text of an INSERT of grants for the rows of `relation` (a CTE or table name, a
 * constant) that hold a lease: one grant per deadline, spanning the first and last of
 * its rows in due order. `relation` needs receipt_id, next_visible_at_ms, lease_owner
 * and lease_until_ms. A claim statement's rows share one deadline: one grant, or none
 * when it claimed nothing. Text, so the scale loader's plain SQL uses the same rule.
 */
export function leaseGrantsInsertText(relation: string): string {
  const firstOrLast = (
    direction: 'asc' | 'desc',
  ) => `select distinct on (lease_until_ms) lease_until_ms, next_visible_at_ms, receipt_id
      from ${relation} where lease_owner is not null
      order by lease_until_ms, next_visible_at_ms ${direction}, receipt_id ${direction}`;
  return `insert into settle.lease_grants (lease_until_ms, lo_next_visible_at_ms, lo_receipt_id, hi_next_visible_at_ms,
          hi_receipt_id)
    select lo.lease_until_ms, lo.next_visible_at_ms, lo.receipt_id, hi.next_visible_at_ms, hi.receipt_id
    from (${firstOrLast('asc')}) lo join (${firstOrLast('desc')}) hi using (lease_until_ms)`;
}

/** leaseGrantsInsertText as a statement part (a CTE's body in a claim). */
export const insertLeaseGrants = (relation: string): SQL => sql.raw(leaseGrantsInsertText(relation));

/**
 * Grants for leases written straight into `settle.attempts` (the demo seed, fixtures):
 * the rows of `receiptIds` that hold a lease. Run it in the transaction that wrote them.
 */
export function grantHeldLeases(receiptIds: readonly string[]): SQL {
  return sql`with held as (
      select receipt_id, next_visible_at_ms, lease_owner, lease_until_ms from settle.attempts
      where receipt_id = any(${sql.param([...receiptIds])}::text[]) and lease_owner is not null
    )
    ${insertLeaseGrants('held')}`;
}

/**
 * The rows of `settle.attempts` aliased `a` within the range of the grant aliased `g`. The
 * range is a row comparison on the due order; its bounds are each estimated at a third of the
 * table, so at ten million rows a grant's range looked dearer than a scan of the whole queue
 * (1.3 s a read, docs/performance.md). The same bounds on the due time alone, implied by the
 * row comparison, make the planner estimate a narrow range.
 */
export const inGrantRange = sql`(a.next_visible_at_ms, a.receipt_id) >= (g.lo_next_visible_at_ms, g.lo_receipt_id)
  and (a.next_visible_at_ms, a.receipt_id) <= (g.hi_next_visible_at_ms, g.hi_receipt_id)
  and a.next_visible_at_ms between g.lo_next_visible_at_ms and g.hi_next_visible_at_ms`;

/**
 * Receipt ids and due times of the rows leased at `nowMs` that also satisfy `where`
 * (conditions on the columns of `settle.attempts` aliased `a`), at most `perGrant` from
 * each live grant's range, first in due order. Ranges may overlap, so a row can appear
 * more than once: callers take distinct rows. Each range is a scan of attempts_due_idx.
 */
export function leasedCandidates(nowMs: number, where: SQL, perGrant: number): SQL {
  return sql`select l.receipt_id, l.next_visible_at_ms
    from settle.lease_grants g
    cross join lateral (
      select a.receipt_id, a.next_visible_at_ms from settle.attempts a
      where ${inGrantRange} and ${leasedAt(nowMs, 'a')} and ${where}
      order by a.next_visible_at_ms, a.receipt_id
      limit ${perGrant}::int
    ) l
    where g.lease_until_ms > ${nowMs}::bigint`;
}

/**
 * The distinct receipt ids leased at `nowMs` under `where`, as a relation (alias it): the
 * leased count's rows. Each grant gives at most COUNT_CAP + 1, all a capped count reads.
 */
export function leasedReceipts(nowMs: number, where: SQL): SQL {
  return sql`(select distinct receipt_id from (${leasedCandidates(nowMs, where, COUNT_CAP + 1)}) c)`;
}

/**
 * How long past its deadline a grant is kept. A read takes its clock in one statement and
 * reads the grants in the next (or reuses a clock a page read a moment earlier): a grant
 * is still there for any such clock up to this far behind the pruning one.
 */
export const LEASE_GRANT_GRACE_MS = 60_000;

/** Grants expired at `nowMs` by more than the grace: no row holds their lease any longer. */
export function pruneExpiredLeaseGrants(nowMs: SQL): SQL {
  return sql`delete from settle.lease_grants where lease_until_ms <= ${nowMs} - ${LEASE_GRANT_GRACE_MS}::bigint`;
}
