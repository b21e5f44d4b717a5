import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { Database, DbOrTx } from '../db/client';
import {
  RETRY_KEY_INDEXED_PREFIX,
  retainedEnvelopePredicate,
  retryKeyPrefixesExpression,
  RUNTIME_INDEXES,
} from '../db/runtime-indexes';
import { OPERATOR_ACTIONS } from '../domain/operator-request';
import { retryKeyShortHex } from '../domain/retry-key';
import type { SearchPlan } from '../domain/search';
import {
  SEARCH_HITS_PER_KIND,
  SEARCH_KINDS,
  type SearchGroup,
  type SearchHit,
  type SearchKind,
  type SearchResults,
} from './search-types';

/**
 * Find anything by its id (docs/console.md#search): one statement of bounded, indexed
 * branches, one branch for each place a kind of id lives. Every branch reads at most
 * SEARCH_HITS_PER_KIND + 1 rows through an index (the + 1 tells "more"), and nothing is
 * counted, so a search costs the same on a large database as on a small one.
 */

const FETCH = SEARCH_HITS_PER_KIND + 1;
// The literal text of the index's predicate and expression, so the planner proves the index applies.
const holdsRetainedEnvelope = sql.raw(retainedEnvelopePredicate('s'));
const retryKeyPrefixes = sql.raw(retryKeyPrefixesExpression('s'));
const RETRY_KEY_PREFIX_INDEX = RUNTIME_INDEXES.find(
  (index) => index.name === 'keel_ob_step_execution_retry_key_prefix_idx',
)!.name;

interface HitRow extends Record<string, unknown> {
  kind: SearchKind;
  hit: Record<string, unknown>;
}

/** The same key-prefix test in jsonpath: the index narrows by the first digits, this checks all that were typed. */
const keysStartingWith = (prefix: string) =>
  sql`'lax $.entries[*].key ? (@ starts with $p)', jsonb_build_object('p', ${prefix}::text), true`;

function branches(plan: SearchPlan, searchRetryKeys: boolean): SQL[] {
  const parts: SQL[] = [];
  const executionHit = (kind: SearchKind) =>
    sql`select ${kind}::text as kind, jsonb_build_object('executionId', e.id, 'instanceId', e.job_instance_id,
        'jobName', i.job_name, 'status', e.status, 'attempt', e.attempt) as hit
        from oxide_batch.ob_job_execution e join oxide_batch.ob_job_instance i on i.id = e.job_instance_id`;
  const proposalHit = (match: 'id' | 'digest') =>
    sql`select 'proposal'::text as kind, jsonb_build_object('proposalId', p.id, 'match', ${match}::text, 'status',
        p.status, 'proposalKind', p.kind,
          'targetKind', p.target_kind, 'targetId', p.target_id, 'digestHex', encode(p.evidence_digest, 'hex')) as hit
        from keel.recovery_proposal p`;

  if (plan.numericId !== null) {
    const id = plan.numericId;
    parts.push(sql`${executionHit('execution')} where e.id = ${id}`);
    // UNIQUE (job_instance_id, attempt) serves it; newest attempt first.
    parts.push(sql`${executionHit('instance')} where e.job_instance_id = ${id} order by e.attempt desc limit ${FETCH}`);
    parts.push(sql`${proposalHit('id')} where p.id = ${id}`);
  }
  if (plan.hexPrefix !== null) {
    // A digest prefix is a range of whole digests: the prefix padded with 0s up to the prefix padded with fs.
    const low = Buffer.from(plan.hexPrefix.padEnd(64, '0'), 'hex');
    const high = Buffer.from(plan.hexPrefix.padEnd(64, 'f'), 'hex');
    parts.push(
      sql`${proposalHit('digest')} where p.evidence_digest between ${low} and ${high} order by p.evidence_digest
          limit ${FETCH}`,
    );
    if (searchRetryKeys) {
      parts.push(sql`select 'retryKey'::text as kind, jsonb_build_object('stepId', s.id, 'executionId',
                     s.job_execution_id, 'stepLogicalId', s.step_logical_id,
            'jobName', i.job_name, 'keys', jsonb_path_query_array(s.fault_state_payload,
            ${keysStartingWith(plan.hexPrefix)})) as hit
          from oxide_batch.ob_step_execution s
          join oxide_batch.ob_job_execution e on e.id = s.job_execution_id
          join oxide_batch.ob_job_instance i on i.id = e.job_instance_id
          where ${holdsRetainedEnvelope}
            and ${retryKeyPrefixes} @> array[${plan.hexPrefix.slice(0, RETRY_KEY_INDEXED_PREFIX)}::text]
            and jsonb_path_exists(s.fault_state_payload, ${keysStartingWith(plan.hexPrefix)})
          order by s.id desc limit ${FETCH}`);
    }
  }
  // ^@ and the ~<~ order are what the text_pattern_ops prefix indexes serve, in any collation.
  const receipt = plan.receiptPrefix;
  parts.push(sql`select 'receipt'::text as kind, jsonb_build_object('receiptId', a.receipt_id, 'place', 'queued') as hit
      from settle.attempts a where a.receipt_id ^@ ${receipt} order by a.receipt_id using ~<~ limit ${FETCH}`);
  parts.push(sql`select 'receipt'::text as kind, jsonb_build_object('receiptId', d.receipt_id, 'place',
                 'dead_lettered') as hit
      from settle.dead_letters d where d.receipt_id ^@ ${receipt} order by d.receipt_id using ~<~ limit ${FETCH}`);
  // A receipt settled, discarded or replayed away lives on in Keel's history, found by its whole id.
  parts.push(sql`select 'receipt'::text as kind, jsonb_build_object('receiptId', h.receipt_id, 'place',
                 'history') as hit
      from keel.settlement_event h where h.receipt_id = ${receipt} limit 1`);
  if (plan.operationId !== null) {
    const op = plan.operationId;
    // The runtime's UNIQUE (action, operation_id), probed once per action.
    parts.push(sql`select 'operation'::text as kind, jsonb_build_object('source', 'runtime', 'operationId',
                   r.operation_id, 'action', r.action,
          'executionId', r.job_execution_id, 'instanceId', r.job_instance_id, 'outcome', r.outcome_class) as hit
        from oxide_batch.ob_operator_request r
        where r.action = any(${sql.raw(`array[${OPERATOR_ACTIONS.map((a) => `'${a}'`).join(', ')}]::varchar[]`)})
        and r.operation_id = ${op}`);
    parts.push(sql`select 'operation'::text as kind, jsonb_build_object('source', 'replay', 'operationId',
                   x.operation_id, 'receiptId', x.receipt_id, 'actorLogin', x.actor_login) as hit
        from keel.settlement_replay x where x.operation_id = ${op}`);
    parts.push(sql`select 'operation'::text as kind, jsonb_build_object('source', 'audit', 'operationId',
                   a.operation_id, 'action', a.action,
          'targetKind', a.target_kind, 'targetId', a.target_id, 'actorLogin', a.actor_login, 'outcome',
          a.outcome) as hit
        from keel.audit_event a where a.operation_id = ${op} order by a.id desc limit ${FETCH}`);
  }
  if (plan.username !== null) {
    parts.push(sql`select 'user'::text as kind, jsonb_build_object('username', u.username, 'role', u.role, 'disabled',
                   coalesce(u.banned, false)) as hit
        from keel."user" u where u.username = ${plan.username}`);
  }
  return parts;
}

function hitOf(row: HitRow): SearchHit {
  const h = row.hit;
  const num = (key: string) => Number(h[key]);
  const text = (key: string) => String(h[key]);
  const maybeNum = (key: string) => (h[key] === null || h[key] === undefined ? null : Number(h[key]));
  switch (row.kind) {
    case 'execution':
    case 'instance':
      return {
        kind: row.kind,
        executionId: num('executionId'),
        instanceId: num('instanceId'),
        jobName: text('jobName'),
        status: text('status'),
        attempt: num('attempt'),
      };
    case 'receipt':
      return {
        kind: 'receipt',
        receiptId: text('receiptId'),
        place: h.place as 'queued' | 'dead_lettered' | 'history',
      };
    case 'retryKey': {
      const keys = Array.isArray(h.keys) ? h.keys.filter((k): k is string => typeof k === 'string') : [];
      return {
        kind: 'retryKey',
        stepId: num('stepId'),
        executionId: num('executionId'),
        stepLogicalId: text('stepLogicalId'),
        jobName: text('jobName'),
        keyPrefixes: keys.map(retryKeyShortHex),
      };
    }
    case 'proposal':
      return {
        kind: 'proposal',
        proposalId: num('proposalId'),
        match: h.match === 'digest' ? 'digest' : 'id',
        status: text('status'),
        proposalKind: text('proposalKind'),
        targetKind: text('targetKind'),
        targetId: text('targetId'),
        digestHex: text('digestHex'),
      };
    case 'operation':
      if (h.source === 'runtime') {
        return {
          kind: 'operation',
          source: 'runtime',
          operationId: text('operationId'),
          action: text('action'),
          executionId: maybeNum('executionId'),
          instanceId: maybeNum('instanceId'),
          outcome: text('outcome'),
        };
      }
      if (h.source === 'replay') {
        return {
          kind: 'operation',
          source: 'replay',
          operationId: text('operationId'),
          receiptId: text('receiptId'),
          actorLogin: text('actorLogin'),
        };
      }
      return {
        kind: 'operation',
        source: 'audit',
        operationId: text('operationId'),
        action: text('action'),
        targetKind: text('targetKind'),
        targetId: text('targetId'),
        actorLogin: text('actorLogin'),
        outcome: text('outcome'),
      };
    case 'user':
      return { kind: 'user', username: text('username'), role: text('role'), disabled: h.disabled === true };
  }
}

/**
 * Hits grouped by kind in SEARCH_KINDS order; a receipt found in
 * its queue or dead letters is not listed again from its history.
 */
function grouped(rows: HitRow[]): SearchGroup[] {
  const hits = rows.map(hitOf);
  const placed = new Set(
    hits.flatMap((hit) => (hit.kind === 'receipt' && hit.place !== 'history' ? [hit.receiptId] : [])),
  );
  const kept = hits.filter((hit) => !(hit.kind === 'receipt' && hit.place === 'history' && placed.has(hit.receiptId)));
  return SEARCH_KINDS.flatMap((kind) => {
    const ofKind = kept.filter((hit) => hit.kind === kind);
    return ofKind.length
      ? [{ kind, hits: ofKind.slice(0, SEARCH_HITS_PER_KIND), more: ofKind.length > SEARCH_HITS_PER_KIND }]
      : [];
  });
}

/** The retry-key prefix index is Keel's on a schema it bootstrapped; on an attached one an operator creates it. */
const indexChecks = new WeakMap<object, { at: number; present: boolean }>();
async function hasRetryKeyPrefixIndex(db: Database): Promise<boolean> {
  const cached = indexChecks.get(db);
  if (cached && Date.now() - cached.at < 60_000) return cached.present;
  const found = await db.execute(
    sql`select 1 from pg_indexes where schemaname = 'oxide_batch' and indexname = ${RETRY_KEY_PREFIX_INDEX}`,
  );
  const check = { at: Date.now(), present: found.rows.length > 0 };
  indexChecks.set(db, check);
  return check.present;
}

export const RETRY_KEYS_UNINDEXED_NOTE =
  'Retry keys were not searched: this database lacks their prefix index. ' +
  'An operator can create it with `npm run keel -- runtime-indexes --apply`.';
export const HEX_TOO_SHORT_NOTE = 'Retry keys and digests are searched from 8 hex digits on.';

/** Search every kind the plan allows, on `db` (the list source: the replica when it is usable). */
export async function searchEverything(db: Database, q: string, plan: SearchPlan): Promise<SearchResults> {
  const notes: string[] = [];
  const searchRetryKeys = plan.hexPrefix !== null && (await hasRetryKeyPrefixIndex(db));
  if (plan.hexPrefix !== null && !searchRetryKeys) notes.push(RETRY_KEYS_UNINDEXED_NOTE);
  // Said of a short run of hex with a letter in it; plain digits are ids, and saying it under every id would be noise.
  if (plan.hexPrefix === null && /^[0-9a-fA-F]{4,7}$/.test(q) && /[a-fA-F]/.test(q)) notes.push(HEX_TOO_SHORT_NOTE);
  const rows = await runBranches(db, branches(plan, searchRetryKeys));
  return { q, groups: grouped(rows), notes };
}

async function runBranches(db: DbOrTx, parts: SQL[]): Promise<HitRow[]> {
  const statement = sql.join(
    parts.map((part) => sql`(${part})`),
    sql` union all `,
  );
  return (await db.execute<HitRow>(statement)).rows;
}
