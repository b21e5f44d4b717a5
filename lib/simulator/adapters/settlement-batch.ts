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
import { ArrayParam, executeNamedText } from './named-statement';
import { claimProblem, guarded } from './settlement-guards';

type ItemResult = Result<SettlementRoute, SettlementRouteError>;

/** What one item writes besides its claim: the history event its route takes, and the route's own fields. */
interface ItemWrite {
  route: SettlementRoute;
  eventKind: 'finished' | 'retry_scheduled' | 'dead_lettered';
  eventAttempt: number;
  reasonCode: string | null;
  reasonSha256Hex: string | null;
  nextVisibleAtMs: number | null;
  deadJson: string | null;
}

const STALE = 'the claim no longer matches the stored attempt, or its lease has expired';

/**
 * Routes one item with the single form's domain rules (routeOutcome, failureReasonOf,
 * deadLetterCanonicalJson), so both forms agree on every route by construction; only
 * the writing differs.
 */
function planItem(
  { claim, outcome }: ClaimedOutcome,
  policy: RetryPolicy,
  observedAtMs: number,
): Result<ItemWrite, SettlementRouteError> {
  const problem = claimProblem(claim);
  if (problem) return err(invalidRecord(problem));
  const routed = routeOutcome(claim.attempts, outcome, policy, observedAtMs);
  if (!routed.ok) return routed;
  const route = routed.value;
  if (route.kind === 'NoAction') {
    const skipReason = outcome.kind === 'Skipped' ? outcome.reason : null;
    return ok(itemWrite(route, 'finished', claim.attempts + 1, skipReason, null, null, null));
  }
  const reason = failureReasonOf(outcome);
  if (!reason)
    return err(
      invalidRecord(
        `a ${outcome.kind} outcome cannot be ${route.kind === 'DeadLettered' ? 'dead-lettered' : 'retried'}`,
      ),
    );
  if (route.kind === 'RetryScheduled') {
    const { attempt, nextVisibleAtMs } = route;
    return ok(itemWrite(route, 'retry_scheduled', attempt, reason.code, reason.detailSha256Hex, nextVisibleAtMs, null));
  }
  const json = deadLetterCanonicalJson({
    receiptId: claim.receiptId,
    finalizedAt: claim.finalizedAt,
    attempts: route.attempts,
    reasonCode: reason.code,
    detailSha256Hex: reason.detailSha256Hex,
  });
  if (!json.ok) return json;
  return ok(itemWrite(route, 'dead_lettered', route.attempts, reason.code, null, null, json.value));
}

/** One item's write, every field set in one order (one object shape for every route). */
function itemWrite(
  route: SettlementRoute,
  eventKind: ItemWrite['eventKind'],
  eventAttempt: number,
  reasonCode: string | null,
  reasonSha256Hex: string | null,
  nextVisibleAtMs: number | null,
  deadJson: string | null,
): ItemWrite {
  return { route, eventKind, eventAttempt, reasonCode, reasonSha256Hex, nextVisibleAtMs, deadJson };
}

/** The compare-and-set of one input row against the stored attempt it names. */
const EXACT_CLAIM = `a.receipt_id = i.receipt_id
          and a.finalized_at = i.finalized_at and a.attempts = i.attempts and a.row_version = i.row_version
          and a.lease_owner = i.lease_owner and a.lease_token = i.lease_token and a.lease_until_ms = i.lease_until_ms`;

/** One input column: its name, SQL type and how an item's claim and write give its value. */
type InputColumn = readonly [
  name: string,
  type: string,
  value: (claim: SettlementAttemptClaim, write: ItemWrite) => string | number | null,
];

/**
 * The input's columns and their SQL types, in the order the statement unnests them: each
 * is parameter $n (1-based) as a typed array, the observation time the one after them.
 * The unnest numbers the rows (`ord`, from 1) in the order they were added.
 */
const INPUT_COLUMNS: readonly InputColumn[] = [
  ['receipt_id', 'text', (claim) => claim.receiptId],
  ['finalized_at', 'bigint', (claim) => claim.finalizedAt],
  ['attempts', 'int', (claim) => claim.attempts],
  ['row_version', 'bigint', (claim) => claim.rowVersion],
  ['lease_owner', 'text', (claim) => claim.leaseOwner],
  ['lease_token', 'text', (claim) => claim.leaseToken],
  ['lease_until_ms', 'bigint', (claim) => claim.leaseUntilMs],
  // The route is the event's kind: finished (NoAction), retry_scheduled or dead_lettered.
  ['event_kind', 'text', (_, write) => write.eventKind],
  ['event_attempt', 'int', (_, write) => write.eventAttempt],
  ['reason_code', 'text', (_, write) => write.reasonCode],
  ['reason_sha256_hex', 'text', (_, write) => write.reasonSha256Hex],
  ['next_visible_at_ms', 'bigint', (_, write) => write.nextVisibleAtMs],
  ['dead_json', 'text', (_, write) => write.deadJson],
];
const OBSERVED_AT = `$${INPUT_COLUMNS.length + 1}::bigint`;

/**
 * The statement's input, built as items are added: one array parameter per column (parsing
 * the input is a large part of the statement's cost, and a JSON document would repeat every
 * key per row), each element written once, in INPUT_COLUMNS' order. It keeps which item each
 * row stands for and which routes the batch holds.
 */
class BatchInput {
  /** The item index of each row: row `ord` is item `items[ord - 1]`. */
  readonly items: number[] = [];
  readonly shape: BatchShape = { removes: false, retries: false, deadLetters: false };
  private readonly columns = INPUT_COLUMNS.map(() => new ArrayParam());

  add(item: number, claim: SettlementAttemptClaim, write: ItemWrite): void {
    this.items.push(item);
    const kind = write.route.kind;
    if (kind === 'RetryScheduled') this.shape.retries = true;
    else this.shape.removes = true;
    if (kind === 'DeadLettered') this.shape.deadLetters = true;
    for (let i = 0; i < INPUT_COLUMNS.length; i += 1) this.columns[i]!.push(INPUT_COLUMNS[i]![2](claim, write));
  }

  /** The statement's parameters: the columns, then the observation time. */
  params(observedAtMs: number): unknown[] {
    const params: unknown[] = this.columns.map((column) => column.text());
    params.push(observedAtMs);
    return params;
  }
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
    `input as (select * from unnest(${columns}) with ordinality
        as i(${INPUT_COLUMNS.map(([name]) => name).join(', ')}, ord))`,
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

function batchStatement(shape: BatchShape): { name: string; text: string } {
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
  const input = new BatchInput();
  const seen = new Set<string>();
  for (let item = 0; item < items.length; item += 1) {
    const planned = planItem(items[item]!, policy, observedAtMs);
    const { claim } = items[item]!;
    if (!planned.ok) results[item] = planned;
    else if (seen.has(claim.receiptId))
      results[item] = err(conflictError('the batch names this receipt more than once'));
    else {
      seen.add(claim.receiptId);
      input.add(item, claim, planned.value);
      routes[item] = planned.value.route;
    }
  }
  if (input.items.length === 0) return ok(results as ItemResult[]);
  return guarded(async () => {
    const { name, text } = batchStatement(input.shape);
    const written = await executeNamedText<{ landed: string | null }>(db, name, text, input.params(observedAtMs));
    for (const item of input.items) results[item] = err(conflictError(STALE));
    // The rows that landed, by `ord`; nothing landed is null (no row aggregated), never an empty text.
    const landedText = written.rows[0]?.landed;
    if (landedText)
      for (const ord of landedText.split(',')) {
        const item = input.items[Number(ord) - 1]!;
        results[item] = ok(routes[item]!);
      }
    return ok(results as ItemResult[]);
  });
}
