import 'server-only';
import { is, Placeholder, sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { insertLeaseGrants } from '../../db/sql/lease-grants';
import { claimableAt } from '../../db/sql/queue-state';
import { invalidRecord, validateClaimParams, type SettlementAttemptClaim } from '../../domain/settlement';
import type { SettlementClaimError } from '../ports/settlement-store';
import { preparedStatement } from './named-statement';
import { isEpochMs } from './settlement-guards';

// The claim statements of the settlement store (docs/design.md#settlement-claims): one
// receipt, due rows up to a limit, and the due-rows claim as the tail of a batch's record
// statement (settlement-batch.ts), so a draining worker records and claims in one trip.

/**
 * What a claim returns: one JSON array of one array per claimed row, in due order. One
 * field to read and one JSON.parse, where a row per claim costs the driver a parse per
 * field (a worker claims 100 at a time). The columns are claimOf's, in its order.
 */
export const CLAIMS_JSON_TEXT = `coalesce(json_agg(json_build_array(receipt_id, finalized_at, attempts, row_version,
  lease_owner, lease_token, lease_until_ms) order by next_visible_at_ms, receipt_id), '[]')::text`;

type ClaimTuple = [string, number, number, number, string, string, number];

/** One claimed row from CLAIMS_JSON_TEXT (bigints as numbers, as the pool's int8 parser reads them). */
const claimOf = ([receiptId, finalizedAt, attempts, rowVersion, leaseOwner, leaseToken, leaseUntilMs]: ClaimTuple) => ({
  receiptId,
  finalizedAt,
  attempts,
  rowVersion,
  leaseOwner,
  leaseToken,
  leaseUntilMs,
});

/** The claims of a CLAIMS_JSON_TEXT field. */
export const claimsOfJson = (claims: string): SettlementAttemptClaim[] =>
  (JSON.parse(claims) as ClaimTuple[]).map(claimOf);

export function validateClaim(
  workerId: string,
  nowMs: number,
  leaseMs: number,
  limit: number,
): SettlementClaimError | null {
  const bounds = validateClaimParams({ workerId, leaseMs, limit });
  if (!bounds.ok) return bounds.error;
  if (!isEpochMs(nowMs)) return invalidRecord(`now_ms is not an integer in 0..2^53: ${nowMs}`);
  if (!Number.isSafeInteger(nowMs + leaseMs)) return invalidRecord('lease deadline exceeds 2^53');
  return null;
}

/** The claim time, filled in per call: the claim statements are compiled once (preparedStatement). */
const NOW = sql`${sql.placeholder('nowMs')}::bigint`;

/**
 * A claim's parts, as the CTEs `candidate`, `claimed`, `claim_logged` and `granted`; the
 * claimed rows are `claimed`. A claim bumps row_version, so any older claim on the row
 * stops matching, and takes a fresh lease token from `gen_random_uuid()` (122 bits from
 * the server's strong random source), one per row within the same statement that writes
 * the `claimed` event. The UPDATE repeats the claimable test because Postgres
 * re-evaluates its WHERE against a row that a concurrent claim changed, while the
 * candidate list is an older snapshot.
 *
 * This is the only statement that sets a lease, and it records one lease grant for what
 * it claimed (nothing when it claimed nothing): the shared deadline and the first and
 * last claimed keys in due order, so the queue finds every live lease by range scans of
 * the due index (lib/db/sql/lease-grants.ts states the invariant). One row per
 * statement, in the same statement: a claim stays one round trip and a HOT update.
 */
function claimParts(candidates: SQL): SQL {
  return sql`
    candidate as (${candidates}),
    claimed as (
      update settle.attempts a
      set row_version = a.row_version + 1,
          lease_owner = ${sql.placeholder('workerId')},
          lease_token = gen_random_uuid()::text,
          lease_until_ms = ${sql.placeholder('leaseUntilMs')}::bigint,
          updated_at_ms = ${NOW}
      from candidate
      where a.receipt_id = candidate.receipt_id and ${claimableAt(NOW)}
      returning a.receipt_id, a.finalized_at, a.attempts, a.row_version, a.lease_owner, a.lease_token,
                a.lease_until_ms, a.next_visible_at_ms
    ),
    claim_logged as (
      insert into keel.settlement_event (receipt_id, kind, attempt, at_ms)
      select receipt_id, 'claimed', attempts, ${NOW} from claimed
    ),
    granted as (${insertLeaseGrants('claimed')})`;
}

const claimStatement = (candidates: SQL): SQL =>
  sql`with ${claimParts(candidates)} select ${sql.raw(CLAIMS_JSON_TEXT)} as claims from claimed`;

/** One receipt: waits for a concurrent claim of the same row, then re-checks; its fresh lease wins. */
export const claimReceiptStatement = preparedStatement<{ claims: string }>(
  'keel_settlement_claim_receipt',
  claimStatement(sql`select receipt_id from settle.attempts where receipt_id = ${sql.placeholder('receiptId')}
                     and ${claimableAt(NOW)} for update`),
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
function dueCandidates(limit: number, after?: string): SQL {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`claim limit is not a positive integer: ${limit}`);
  const first = after ? sql.raw(` and (select count(*) from ${after}) >= 0`) : sql``;
  return sql`
    select receipt_id from settle.attempts where ${claimableAt(NOW)}${first}
    order by next_visible_at_ms, receipt_id
    limit ${sql.raw(String(limit))}
    for update skip locked`;
}

const claimDueStatements = new Map<number, ReturnType<typeof preparedStatement<{ claims: string }>>>();

export function claimDueStatement(limit: number) {
  let statement = claimDueStatements.get(limit);
  if (!statement) {
    statement = preparedStatement<{ claims: string }>(
      `keel_settlement_claim_due_${limit}`,
      claimStatement(dueCandidates(limit)),
    );
    claimDueStatements.set(limit, statement);
  }
  return statement;
}

/** A due-rows claim to write after another statement's CTEs: its text, and which value each of its parameters takes. */
export interface ClaimDueParts {
  text: string;
  names: readonly string[];
}

const dialect = new PgDialect();
const claimDueParts = new Map<string, ClaimDueParts>();

/**
 * The due-rows claim of `limit` as CTEs (claimParts), its parameters numbered from
 * `$first` on: the text the claim alone runs, but for one condition. Its candidates are
 * read only after the CTE `after` (a constant) is complete, so the writes before them
 * finish before the claim locks a row.
 *
 * Without that order two such statements can deadlock. A claim's snapshot can predate
 * another worker's claim of a row; locking the row then finds it leased and passes over
 * it, but the lock stays until commit. A statement that claimed first and then waits to
 * write its own batch can hold the row the other worker waits to write, while the other
 * holds one of its own. Writing first, a statement waits only before it locks anything.
 */
export function claimDuePartsText(limit: number, first: number, after: string): ClaimDueParts {
  const key = `${limit}:${first}:${after}`;
  let parts = claimDueParts.get(key);
  if (!parts) {
    const { sql: text, params } = dialect.sqlToQuery(claimParts(dueCandidates(limit, after)));
    const names = params.map((param) => {
      if (!is(param, Placeholder)) throw new Error('every value of the claim must be a placeholder');
      return param.name;
    });
    parts = { text: text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + first - 1}`), names };
    claimDueParts.set(key, parts);
  }
  return parts;
}
