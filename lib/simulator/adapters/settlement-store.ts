import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { insertLeaseGrants } from '../../db/sql/lease-grants';
import { claimableAt } from '../../db/sql/queue-state';
import { isUniqueViolation } from '../../db/sqlstate';
import { err, ok, type Result } from '../../domain/result';
import {
  conflictError,
  deadLetterCanonicalJson,
  failureReasonOf,
  invalidRecord,
  routeOutcome,
  validateClaimParams,
  type RetryPolicy,
  type SettlementAttemptClaim,
  type SettlementOutcome,
  type SettlementRoute,
  type SettlementRouteError,
} from '../../domain/settlement';
import { preparedStatement } from './named-statement';
import { recordClaimedOutcomesInOneStatement } from './settlement-batch';
import { claimProblem, guarded, isEpochMs } from './settlement-guards';
import type {
  EnqueueSettlement,
  SettlementClaimError,
  SettlementOutcomeStore,
  SettlementStoreBinding,
} from '../ports/settlement-store';

/**
 * What a claim returns: one JSON array of one array per claimed row, in due order. One
 * field to read and one JSON.parse, where a row per claim costs the driver a parse per
 * field (a worker claims 100 at a time). The columns are claimOf's, in its order; the
 * lease owner and deadline are the call's own, which the claim wrote to every row.
 */
const CLAIMS_JSON = sql.raw(`coalesce(json_agg(json_build_array(receipt_id, finalized_at, attempts, row_version,
  lease_token) order by next_visible_at_ms, receipt_id), '[]')::text as claims`);

type ClaimTuple = [string, number, number, number, string];

/** The claimed rows from CLAIMS_JSON (bigints as numbers), with the lease the call granted them. */
function claimsOf(result: { rows: { claims: string }[] }, leaseOwner: string, leaseUntilMs: number) {
  return (JSON.parse(result.rows[0]!.claims) as ClaimTuple[]).map(
    ([receiptId, finalizedAt, attempts, rowVersion, leaseToken]): SettlementAttemptClaim => ({
      receiptId,
      finalizedAt,
      attempts,
      rowVersion,
      leaseOwner,
      leaseToken,
      leaseUntilMs,
    }),
  );
}

/**
 * The claim's compare-and-swap: the stored row must still equal the claim, field by
 * field, and its lease must outlive the observation. The token is compared in SQL so
 * a worker holding an old claim cannot commit after a newer claim took the row.
 */
function exactClaim(claim: SettlementAttemptClaim, observedAtMs: number): SQL {
  return sql`receipt_id = ${claim.receiptId}
    and finalized_at = ${claim.finalizedAt}::bigint
    and attempts = ${claim.attempts}::int
    and row_version = ${claim.rowVersion}::bigint
    and lease_owner = ${claim.leaseOwner}
    and lease_token = ${claim.leaseToken}
    and lease_until_ms = ${claim.leaseUntilMs}::bigint
    and lease_until_ms > ${observedAtMs}::bigint`;
}

function validateClaim(workerId: string, nowMs: number, leaseMs: number, limit: number): SettlementClaimError | null {
  const bounds = validateClaimParams({ workerId, leaseMs, limit });
  if (!bounds.ok) return bounds.error;
  if (!isEpochMs(nowMs)) return invalidRecord(`now_ms is not an integer in 0..2^53: ${nowMs}`);
  if (!Number.isSafeInteger(nowMs + leaseMs)) return invalidRecord('lease deadline exceeds 2^53');
  return null;
}

/**
 * A claim bumps row_version, so any older claim on the row stops matching, and takes a
 * fresh lease token from `gen_random_uuid()` (122 bits from the server's strong random
 * source), one per row. The UPDATE repeats the claimable test because Postgres
 * re-evaluates its WHERE against a row that a concurrent claim changed, while the
 * candidate list is an older snapshot.
 *
 * A claim writes no history of its own: its time is the row's updated_at_ms, which the
 * outcome's event carries as claimed_at_ms. Only a claim that ended without an outcome
 * gets a `claimed` event, written here when its lapsed lease is taken over (at the
 * earlier claim's time, read from the locked candidate row), so a receipt that kills its
 * workers shows each claim it crashed (docs/design.md#settlement-history).
 *
 * This is the only statement that sets a lease, and it records one lease grant for what
 * it claimed (nothing when it claimed nothing): the shared deadline and the first and
 * last claimed keys in due order, so the queue finds every live lease by range scans of
 * the due index (lib/db/sql/lease-grants.ts states the invariant). One row per
 * statement, in the same statement: a claim stays one round trip and a HOT update.
 */
function claimStatement(candidates: SQL): SQL {
  return sql`
    with candidate as (${candidates}),
    claimed as (
      update settle.attempts a
      set row_version = a.row_version + 1,
          lease_owner = ${sql.placeholder('workerId')},
          lease_token = gen_random_uuid()::text,
          lease_until_ms = ${sql.placeholder('leaseUntilMs')}::bigint,
          updated_at_ms = ${NOW}
      from candidate
      where a.receipt_id = candidate.receipt_id and ${claimableAt(NOW, 'a')}
      returning a.receipt_id, a.finalized_at, a.attempts, a.row_version, a.lease_owner, a.lease_token,
                a.lease_until_ms, a.next_visible_at_ms
    ),
    lapsed as (
      insert into keel.settlement_event (receipt_id, kind, attempt, at_ms)
      select c.receipt_id, 'claimed', c.attempts, c.updated_at_ms from candidate c join claimed using (receipt_id)
      where c.lease_owner is not null
      order by c.next_visible_at_ms, c.receipt_id
    ),
    granted as (${insertLeaseGrants('claimed')})
    select ${CLAIMS_JSON} from claimed`;
}

/** What a claim reads of a candidate row as it locks it: its key, and the lapsed claim it may take over. */
const CANDIDATE_COLUMNS = sql.raw('receipt_id, next_visible_at_ms, attempts, lease_owner, updated_at_ms');

/** The claim time, filled in per call: the claim statements are compiled once (preparedStatement). */
const NOW = sql`${sql.placeholder('nowMs')}::bigint`;

/** One receipt: waits for a concurrent claim of the same row, then re-checks; its fresh lease wins. */
const claimReceiptStatement = preparedStatement<{ claims: string }>(
  'keel_settlement_claim_receipt',
  claimStatement(sql`select ${CANDIDATE_COLUMNS} from settle.attempts
                     where receipt_id = ${sql.placeholder('receiptId')} and ${claimableAt(NOW)} for update`),
);

/**
 * The due rows in due order. SKIP LOCKED: a row another worker is claiming right now is
 * passed over, not waited for, and re-checked after lock so a just-committed lease is never taken.
 *
 * The limit is written into the text, one named statement per limit (a worker claims with
 * one or two): with the limit a parameter, Postgres's generic plan must assume a tenth of
 * the due rows, which costs it so much more than a custom plan that it plans every claim
 * again; with the limit known, it keeps the generic plan after the first few calls.
 */
const claimDueStatements = new Map<number, ReturnType<typeof preparedStatement<{ claims: string }>>>();

function claimDueStatement(limit: number) {
  let statement = claimDueStatements.get(limit);
  if (!statement) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`claim limit is not a positive integer: ${limit}`);
    statement = preparedStatement<{ claims: string }>(
      `keel_settlement_claim_due_${limit}`,
      claimStatement(sql`
        select ${CANDIDATE_COLUMNS} from settle.attempts where ${claimableAt(NOW)}
        order by next_visible_at_ms, receipt_id
        limit ${sql.raw(String(limit))}
        for update skip locked`),
    );
    claimDueStatements.set(limit, statement);
  }
  return statement;
}

export function postgresSettlementStore(db: DbOrTx): SettlementOutcomeStore {
  let binding: SettlementStoreBinding | null = null;

  async function recordDeadLetter(
    claim: SettlementAttemptClaim,
    outcome: SettlementOutcome,
    attempts: number,
    observedAtMs: number,
  ): Promise<Result<SettlementRoute, SettlementRouteError>> {
    const reason = failureReasonOf(outcome);
    if (!reason) return err(invalidRecord(`a ${outcome.kind} outcome cannot be dead-lettered`));
    const json = deadLetterCanonicalJson({
      receiptId: claim.receiptId,
      finalizedAt: claim.finalizedAt,
      attempts,
      reasonCode: reason.code,
      detailSha256Hex: reason.detailSha256Hex,
    });
    if (!json.ok) return json;
    const route: SettlementRoute = { kind: 'DeadLettered', attempts };
    return db.transaction(async (tx) => {
      const removed = await tx.execute(sql`
        with gone as (delete from settle.attempts where ${exactClaim(claim, observedAtMs)}
                      returning receipt_id, updated_at_ms)
        insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms, claimed_at_ms)
        select receipt_id, 'dead_lettered', ${attempts}::int, ${reason.code}, ${observedAtMs}::bigint, updated_at_ms
        from gone`);
      if (removed.rowCount === 1) {
        await tx.execute(sql`
          insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
          values (${claim.receiptId}, ${claim.finalizedAt}::bigint, ${attempts}::int, ${reason.code}, ${json.value},
                  ${observedAtMs}::bigint)`);
        return ok(route);
      }
      // A repeat of an outcome that already committed: the attempt is gone and the very
      // same dead letter stands, so the caller learns it landed instead of a conflict.
      const existing = await tx.execute<{ canonicalJson: string }>(sql`
        select canonical_json as "canonicalJson" from settle.dead_letters d
        where d.receipt_id = ${claim.receiptId}
          and not exists (select 1 from settle.attempts a where a.receipt_id = d.receipt_id)`);
      if (existing.rows[0]?.canonicalJson === json.value) return ok(route);
      return err(conflictError('the claim no longer matches the stored attempt'));
    });
  }

  return {
    async settlementStoreBinding() {
      if (binding) return ok(Buffer.from(binding));
      return guarded(async () => {
        const result = await db.execute<{ binding: Buffer }>(
          sql`select binding from settle.store_binding where singleton`,
        );
        const bytes = result.rows[0]?.binding;
        if (!Buffer.isBuffer(bytes) || bytes.length !== 32)
          return err(invalidRecord('settle.store_binding is missing or not 32 bytes'));
        binding = Buffer.from(bytes);
        return ok(Buffer.from(binding));
      });
    },

    async enqueue({ receiptId, finalizedAt, nowMs }: EnqueueSettlement) {
      if (receiptId === '') return err(invalidRecord('receipt_id must not be empty'));
      if (!isEpochMs(finalizedAt))
        return err(invalidRecord(`finalized_at is not an integer in 0..2^53: ${finalizedAt}`));
      if (!isEpochMs(nowMs)) return err(invalidRecord(`now_ms is not an integer in 0..2^53: ${nowMs}`));
      return guarded(async () => {
        try {
          // A savepoint when called inside a transaction, so a refused insert leaves it usable.
          const inserted = await db.transaction((tx) =>
            tx.execute(sql`
              insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms,
              row_version, updated_at_ms)
              values (${receiptId}, ${finalizedAt}::bigint, 'pending_observation', 0, ${nowMs}::bigint, 0,
              ${nowMs}::bigint)
              on conflict (receipt_id) do nothing`),
          );
          if (inserted.rowCount === 1) return ok(undefined);
          return err(conflictError('the receipt is already queued'));
        } catch (error) {
          if (isUniqueViolation(error)) return err(conflictError('the receipt is dead-lettered'));
          throw error;
        }
      });
    },

    async claimReceipt(receiptId, workerId, nowMs, leaseMs) {
      const invalid = validateClaim(workerId, nowMs, leaseMs, 1);
      if (invalid) return err(invalid);
      return guarded(async () => {
        const leaseUntilMs = nowMs + leaseMs;
        const result = await claimReceiptStatement(db, { receiptId, workerId, nowMs, leaseUntilMs });
        return ok(claimsOf(result, workerId, leaseUntilMs)[0] ?? null);
      });
    },

    async claimDue(workerId, nowMs, leaseMs, limit) {
      const invalid = validateClaim(workerId, nowMs, leaseMs, limit);
      if (invalid) return err(invalid);
      return guarded(async () => {
        const leaseUntilMs = nowMs + leaseMs;
        const result = await claimDueStatement(limit)(db, { workerId, nowMs, leaseUntilMs });
        return ok(claimsOf(result, workerId, leaseUntilMs));
      });
    },

    async recordClaimedOutcome(claim, outcome, policy: RetryPolicy, observedAtMs) {
      const problem = claimProblem(claim);
      if (problem) return err(invalidRecord(problem));
      const routed = routeOutcome(claim.attempts, outcome, policy, observedAtMs);
      if (!routed.ok) return routed;
      const route = routed.value;
      return guarded(async (): Promise<Result<SettlementRoute, SettlementRouteError>> => {
        if (route.kind === 'DeadLettered') return recordDeadLetter(claim, outcome, route.attempts, observedAtMs);
        let written: Awaited<ReturnType<typeof db.execute>>;
        if (route.kind === 'NoAction') {
          const skipReason = outcome.kind === 'Skipped' ? outcome.reason : null;
          written = await db.execute(sql`
            with gone as (delete from settle.attempts where ${exactClaim(claim, observedAtMs)}
                          returning receipt_id, updated_at_ms)
            insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms, claimed_at_ms)
            select receipt_id, 'finished', ${claim.attempts + 1}::int, ${skipReason}::text, ${observedAtMs}::bigint,
                   updated_at_ms
            from gone`);
        } else {
          const reason = failureReasonOf(outcome);
          if (!reason) return err(invalidRecord(`a ${outcome.kind} outcome cannot be retried`));
          // The claim's time is the row's updated_at_ms before this update, read in the statement's snapshot:
          // the update lands only on the row as the claim left it.
          written = await db.execute(sql`
            with claimed as (select updated_at_ms from settle.attempts where receipt_id = ${claim.receiptId}),
            moved as (
              update settle.attempts
              set work_kind = 'retry_scheduled', attempts = ${route.attempt}::int,
                  next_visible_at_ms = ${route.nextVisibleAtMs}::bigint, row_version = row_version + 1,
                  lease_owner = null, lease_token = null, lease_until_ms = null,
                  reason_code = ${reason.code},
                  reason_detail_sha256 = ${Buffer.from(reason.detailSha256Hex, 'hex')}::bytea,
                  updated_at_ms = ${observedAtMs}::bigint
              where ${exactClaim(claim, observedAtMs)}
              returning receipt_id
            )
            insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms, claimed_at_ms)
            select receipt_id, 'retry_scheduled', ${route.attempt}::int, ${reason.code}, ${observedAtMs}::bigint,
                   (select updated_at_ms from claimed)
            from moved`);
        }
        if (written.rowCount === 1) return ok(route);
        return err(conflictError('the claim no longer matches the stored attempt, or its lease has expired'));
      });
    },

    recordClaimedOutcomes: (items, policy, observedAtMs) =>
      recordClaimedOutcomesInOneStatement(db, items, policy, observedAtMs),
  };
}
