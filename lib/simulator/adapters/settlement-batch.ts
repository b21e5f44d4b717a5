import 'server-only';
import type { DbOrTx } from '../../db/client';
import { err, ok, type Result } from '../../domain/result';
import {
  conflictError,
  deadLetterCanonicalJson,
  failureReasonOf,
  invalidRecord,
  MAX_SETTLEMENT_CLAIM_BATCH,
  routeOutcome,
  type RetryPolicy,
  type SettlementAttemptClaim,
  type SettlementRoute,
  type SettlementRouteError,
} from '../../domain/settlement';
import type { ClaimedOutcome } from '../ports/settlement-store';
import { columnParam, executeNamedText } from './named-statement';
import { claimProblem, guarded } from './settlement-guards';

type ItemResult = Result<SettlementRoute, SettlementRouteError>;

/** One batch item as the statement reads it (one array per column): the claim, its route and what that route writes. */
interface BatchRow {
  ord: number;
  receipt_id: string;
  finalized_at: number;
  attempts: number;
  row_version: number;
  lease_owner: string;
  lease_token: string;
  lease_until_ms: number;
  route: SettlementRoute['kind'];
  event_kind: 'finished' | 'retry_scheduled' | 'dead_lettered';
  event_attempt: number;
  reason_code: string | null;
  reason_sha256_hex: string | null;
  next_visible_at_ms: number | null;
  dead_json: string | null;
}

const STALE = 'the claim no longer matches the stored attempt, or its lease has expired';

/**
 * Routes one item with the single form's domain rules (routeOutcome, failureReasonOf,
 * deadLetterCanonicalJson), so both forms agree on every route by construction; only
 * the writing differs.
 */
function planItem(
  ord: number,
  { claim, outcome }: ClaimedOutcome,
  policy: RetryPolicy,
  observedAtMs: number,
): Result<{ row: BatchRow; route: SettlementRoute }, SettlementRouteError> {
  const problem = claimProblem(claim);
  if (problem) return err(invalidRecord(problem));
  const routed = routeOutcome(claim.attempts, outcome, policy, observedAtMs);
  if (!routed.ok) return routed;
  const route = routed.value;
  if (route.kind === 'NoAction') {
    const skipReason = outcome.kind === 'Skipped' ? outcome.reason : null;
    return ok({
      route,
      row: batchRow(ord, claim, route, 'finished', claim.attempts + 1, skipReason, null, null, null),
    });
  }
  const reason = failureReasonOf(outcome);
  if (!reason)
    return err(
      invalidRecord(
        `a ${outcome.kind} outcome cannot be ${route.kind === 'DeadLettered' ? 'dead-lettered' : 'retried'}`,
      ),
    );
  if (route.kind === 'RetryScheduled') {
    const row = batchRow(
      ord,
      claim,
      route,
      'retry_scheduled',
      route.attempt,
      reason.code,
      reason.detailSha256Hex,
      route.nextVisibleAtMs,
      null,
    );
    return ok({ route, row });
  }
  const json = deadLetterCanonicalJson({
    receiptId: claim.receiptId,
    finalizedAt: claim.finalizedAt,
    attempts: route.attempts,
    reasonCode: reason.code,
    detailSha256Hex: reason.detailSha256Hex,
  });
  if (!json.ok) return json;
  return ok({
    route,
    row: batchRow(ord, claim, route, 'dead_lettered', route.attempts, reason.code, null, null, json.value),
  });
}

/** One input row, every field set in one order (one object shape for every route). */
function batchRow(
  ord: number,
  claim: SettlementAttemptClaim,
  route: SettlementRoute,
  eventKind: BatchRow['event_kind'],
  eventAttempt: number,
  reasonCode: string | null,
  reasonSha256Hex: string | null,
  nextVisibleAtMs: number | null,
  deadJson: string | null,
): BatchRow {
  return {
    ord,
    receipt_id: claim.receiptId,
    finalized_at: claim.finalizedAt,
    attempts: claim.attempts,
    row_version: claim.rowVersion,
    lease_owner: claim.leaseOwner,
    lease_token: claim.leaseToken,
    lease_until_ms: claim.leaseUntilMs,
    route: route.kind,
    event_kind: eventKind,
    event_attempt: eventAttempt,
    reason_code: reasonCode,
    reason_sha256_hex: reasonSha256Hex,
    next_visible_at_ms: nextVisibleAtMs,
    dead_json: deadJson,
  };
}

/** The compare-and-set of one input row against the stored attempt it names. */
const EXACT_CLAIM = `a.receipt_id = i.receipt_id
          and a.finalized_at = i.finalized_at and a.attempts = i.attempts and a.row_version = i.row_version
          and a.lease_owner = i.lease_owner and a.lease_token = i.lease_token and a.lease_until_ms = i.lease_until_ms`;

/** One input column: its name, SQL type and how a row gives its value. */
type InputColumn = readonly [name: keyof BatchRow, type: string, value: (row: BatchRow) => string | number | null];

/**
 * The input's columns and their SQL types, in the order the statement unnests them: each
 * is parameter $n (1-based) as a typed array, the observation time the one after them.
 * Each column reads its field by name, so every read is a fixed property of one shape.
 */
const INPUT_COLUMNS: readonly InputColumn[] = [
  ['ord', 'int', (row) => row.ord],
  ['receipt_id', 'text', (row) => row.receipt_id],
  ['finalized_at', 'bigint', (row) => row.finalized_at],
  ['attempts', 'int', (row) => row.attempts],
  ['row_version', 'bigint', (row) => row.row_version],
  ['lease_owner', 'text', (row) => row.lease_owner],
  ['lease_token', 'text', (row) => row.lease_token],
  ['lease_until_ms', 'bigint', (row) => row.lease_until_ms],
  // The route is the event's kind: finished (NoAction), retry_scheduled or dead_lettered.
  ['event_kind', 'text', (row) => row.event_kind],
  ['event_attempt', 'int', (row) => row.event_attempt],
  ['reason_code', 'text', (row) => row.reason_code],
  ['reason_sha256_hex', 'text', (row) => row.reason_sha256_hex],
  ['next_visible_at_ms', 'bigint', (row) => row.next_visible_at_ms],
  ['dead_json', 'text', (row) => row.dead_json],
];
const OBSERVED_AT = `$${INPUT_COLUMNS.length + 1}::bigint`;

/**
 * The statement's parameters: one array per column (parsing the input is a large part of
 * the statement's cost, and a JSON document would repeat every key per row), a column
 * that is null on every row sent empty (unnest pads a shorter array with nulls), then the
 * observation time.
 */
function batchParams(rows: readonly BatchRow[], observedAtMs: number): unknown[] {
  const params: unknown[] = INPUT_COLUMNS.map(([, , value]) => columnParam(rows, value));
  params.push(observedAtMs);
  return params;
}

/**
 * What a committed row carries on to the dead-letter and history inserts (no join back to
 * the input), with the claim's time: the row's updated_at_ms as the claim left it, which the
 * exact-claim test guarantees is the stored row's before this statement's write.
 */
const committedColumns = (claimedAt: string) =>
  `i.ord, i.receipt_id, i.finalized_at, i.event_kind, i.event_attempt, i.reason_code, i.dead_json,
   ${claimedAt} as claimed_at_ms`;

/** Which routes a batch holds: the parts its statement needs. */
interface BatchShape {
  removes: boolean;
  retries: boolean;
  deadLetters: boolean;
}

/**
 * The batch's one statement, with only the parts its routes use: a write that touches
 * no row still fires its table's statement triggers (a dead-letter insert of nothing
 * runs the one-place rule and sends a keel_events NOTIFY, which every committing
 * transaction that sent one waits behind), so a batch with no dead letter names no
 * dead-letter table at all. Its text depends on the shape only (every value is a
 * parameter), so each shape is one named statement, parsed once per connection.
 */
function batchStatementText({ removes, retries, deadLetters }: BatchShape): string {
  const columns = INPUT_COLUMNS.map(([, type], index) => `$${index + 1}::${type}[]`).join(', ');
  const parts = [
    `input as (select * from unnest(${columns})
        as i(${INPUT_COLUMNS.map(([name]) => name).join(', ')}))`,
  ];
  const committed: string[] = [];
  // The lease test reads the claim's side, equal to the row's by the join, so each row
  // is found by its primary key.
  if (removes) {
    parts.push(`gone as (
        delete from settle.attempts a using input i
        where i.event_kind in ('finished', 'dead_lettered') and ${EXACT_CLAIM}
          and i.lease_until_ms > ${OBSERVED_AT}
        returning ${committedColumns('a.updated_at_ms')}
      )`);
    committed.push('select * from gone');
  }
  if (retries) {
    parts.push(`moved as (
        update settle.attempts a
        set work_kind = 'retry_scheduled', attempts = i.event_attempt, next_visible_at_ms = i.next_visible_at_ms,
            row_version = a.row_version + 1, lease_owner = null, lease_token = null, lease_until_ms = null,
            reason_code = i.reason_code, reason_detail_sha256 = decode(i.reason_sha256_hex, 'hex'),
            updated_at_ms = ${OBSERVED_AT}
        from input i join settle.attempts claimed on claimed.receipt_id = i.receipt_id
        where i.event_kind = 'retry_scheduled' and ${EXACT_CLAIM}
          and i.lease_until_ms > ${OBSERVED_AT}
        returning ${committedColumns('claimed.updated_at_ms')}
      )`);
    committed.push('select * from moved');
  }
  parts.push(`committed as (${committed.join(' union all ')})`);
  if (deadLetters) {
    parts.push(`dead as (
        insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
        select i.receipt_id, i.finalized_at, i.event_attempt, i.reason_code, i.dead_json, ${OBSERVED_AT}
        from committed i where i.event_kind = 'dead_lettered'
        order by i.ord
      )`);
  }
  parts.push(`logged as (
        insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms, claimed_at_ms)
        select i.receipt_id, i.event_kind, i.event_attempt, i.reason_code, ${OBSERVED_AT}, i.claimed_at_ms
        from committed i
        order by i.ord
      )`);
  // The landed items come back as one comma-separated text (one row and one field to read,
  // not one per item, and no array parser on the way).
  const landed = `array_to_string(array_agg(ord), ',') as landed`;
  if (!deadLetters) return `with ${parts.join(', ')} select ${landed} from committed`;
  parts.push(`repeated as (
        -- Seen in the statement's snapshot: the dead letter an earlier call committed.
        select i.ord from input i join settle.dead_letters d on d.receipt_id = i.receipt_id
        and d.canonical_json = i.dead_json
        where i.event_kind = 'dead_lettered' and not exists (select 1 from settle.attempts a
        where a.receipt_id = i.receipt_id)
      )`);
  return `with ${parts.join(', ')}
      select ${landed} from (
        select ord from committed
        union all
        select ord from repeated where ord not in (select ord from committed)
      ) l`;
}

/** Each shape's name and text, built on first use. */
const statements = new Map<string, { name: string; text: string }>();

function batchStatement(rows: readonly BatchRow[]): { name: string; text: string } {
  const shape: BatchShape = {
    removes: rows.some((row) => row.route !== 'RetryScheduled'),
    retries: rows.some((row) => row.route === 'RetryScheduled'),
    deadLetters: rows.some((row) => row.route === 'DeadLettered'),
  };
  const key = `${shape.removes ? 'r' : ''}${shape.retries ? 'm' : ''}${shape.deadLetters ? 'd' : ''}`;
  let statement = statements.get(key);
  if (!statement) {
    statement = { name: `keel_settlement_batch_${key}`, text: batchStatementText(shape) };
    statements.set(key, statement);
  }
  return statement;
}

/**
 * Records a claimed batch's outcomes in one statement: finished and dead-lettered rows
 * are deleted, retried rows rescheduled, dead letters inserted and every history event
 * written, each row only where the stored attempt still equals its claim (the single
 * form's compare-and-set, re-checked by Postgres against a row a concurrent
 * transaction changed). One statement is one atomic unit, so a batch never half
 * commits; the one-place rule runs once per statement (drizzle/0014).
 *
 * A dead-letter outcome repeated after it committed (the attempt gone, an equal dead
 * letter standing) reports DeadLettered, as the single form does. A receipt named twice
 * in one batch is refused after its first item, as the second of two sequential
 * single calls would be.
 */
export async function recordClaimedOutcomesInOneStatement(
  db: DbOrTx,
  items: readonly ClaimedOutcome[],
  policy: RetryPolicy,
  observedAtMs: number,
): Promise<Result<ItemResult[], SettlementRouteError>> {
  if (items.length > MAX_SETTLEMENT_CLAIM_BATCH)
    return err(invalidRecord(`a batch holds at most ${MAX_SETTLEMENT_CLAIM_BATCH} outcomes`));
  if (!Number.isSafeInteger(observedAtMs) || observedAtMs < 0)
    return err(invalidRecord(`observed_at_ms is not an integer in 0..2^53: ${observedAtMs}`));
  const results: (ItemResult | null)[] = items.map(() => null);
  const routes: SettlementRoute[] = [];
  const rows: BatchRow[] = [];
  const seen = new Set<string>();
  items.forEach((item, ord) => {
    const planned = planItem(ord, item, policy, observedAtMs);
    if (!planned.ok) results[ord] = planned;
    else if (seen.has(planned.value.row.receipt_id))
      results[ord] = err(conflictError('the batch names this receipt more than once'));
    else {
      seen.add(planned.value.row.receipt_id);
      rows.push(planned.value.row);
      routes[ord] = planned.value.route;
    }
  });
  if (rows.length === 0) return ok(results as ItemResult[]);
  return guarded(async () => {
    const { name, text } = batchStatement(rows);
    const written = await executeNamedText<{ landed: string | null }>(db, name, text, batchParams(rows, observedAtMs));
    const landedText = written.rows[0]?.landed;
    // Nothing landed is null (no row aggregated), never an empty text.
    const landed = new Set(landedText ? landedText.split(',').map(Number) : []);
    for (const row of rows) results[row.ord] = landed.has(row.ord) ? ok(routes[row.ord]!) : err(conflictError(STALE));
    return ok(results as ItemResult[]);
  });
}
