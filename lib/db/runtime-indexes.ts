import type pg from 'pg';
import { EMPTY_CHECKSUM_HEX, FAULT_STATE_FORMAT_ID } from '../domain/fault-state';
import { ZERO_DIGEST_HEX } from '../domain/retry-key';

/**
 * A step whose fault-state envelope is not the runtime's default (empty) one: what the
 * retry-keys list reads. The partial indexes below use this very text as their
 * predicate and the list's WHERE repeats it, so the planner can prove the index
 * applies (a weaker or reworded condition would leave it a sequential scan).
 * Constants only; `alias` is a constant too.
 */
export function retainedEnvelopePredicate(alias?: string): string {
  const c = (name: string) => (alias ? `${alias}.${name}` : name);
  const emptyPayload = JSON.stringify({ checkpoint: ZERO_DIGEST_HEX, entries: [] });
  return (
    `(NOT (${c('fault_state_format')} = 1 AND ${c('fault_state_schema')} = '${FAULT_STATE_FORMAT_ID}'` +
    ` AND ${c('fault_state_schema_version')} = 1` +
    ` AND ${c('fault_state_checksum')} = '\\x${EMPTY_CHECKSUM_HEX}'::bytea` +
    ` AND ${c('fault_state_payload')} = '${emptyPayload}'::jsonb))`
  );
}

/** How many leading hex digits of each retry key the prefix index holds: the shortest prefix search takes. */
export const RETRY_KEY_INDEXED_PREFIX = 8;

/**
 * The first RETRY_KEY_INDEXED_PREFIX hex digits of every retry key in a step's
 * envelope, as text[]: what the prefix index holds and what search (lib/queries/search.ts)
 * repeats word for word, so the planner matches the two. Index expressions allow no
 * subquery, hence the text surgery on the key array; it never raises (lax, silent
 * jsonpath), since a runtime write of a corrupt envelope must still succeed. A key that
 * is not hex leaves a junk element that no prefix matches.
 */
export function retryKeyPrefixesExpression(alias?: string): string {
  const payload = alias ? `${alias}.fault_state_payload` : 'fault_state_payload';
  const keys = `jsonb_path_query_array(${payload}, 'lax $.entries[*].key', '{}', true)::text`;
  return (
    `(string_to_array(btrim(regexp_replace(${keys}, '"([0-9a-f]{${RETRY_KEY_INDEXED_PREFIX}})[^"]*"', '\\1', ` +
    `'g'), '[]'), ', '))`
  );
}

/**
 * Indexes Keel's filters want on the runtime's tables. Keel never alters an
 * attached oxide_batch schema by itself: `keel runtime-indexes` prints these and,
 * with --apply, creates them concurrently, as an explicit operator choice. On a
 * schema Keel bootstrapped itself they are created with it.
 */
export const RUNTIME_INDEXES: { name: string; purpose: string; definition: string }[] = [
  {
    name: 'keel_ob_job_execution_updated_idx',
    purpose: 'executions list and its staleness filter without a status filter: newest update first',
    definition: 'oxide_batch.ob_job_execution (updated_at DESC, id DESC)',
  },
  {
    // Replaces keel_ob_step_execution_retained_idx (checksum-only
    // predicate, which the list's WHERE never implied); drop that one.
    name: 'keel_ob_step_execution_envelope_idx',
    purpose: 'retry keys: steps whose fault-state envelope is not the default one, newest step first',
    definition: `oxide_batch.ob_step_execution (id DESC) WHERE ${retainedEnvelopePredicate()}`,
  },
  {
    name: 'keel_ob_step_execution_envelope_entries_idx',
    purpose: 'retry keys filtered by phase or category: envelope containment (@>) on the same steps',
    definition:
      `oxide_batch.ob_step_execution USING gin (fault_state_payload jsonb_path_ops) ` +
      `WHERE ${retainedEnvelopePredicate()}`,
  },
  {
    name: 'keel_ob_step_execution_retry_key_prefix_idx',
    purpose: 'search: steps holding a retry key that starts with the hex digits typed (8 or more)',
    definition:
      `oxide_batch.ob_step_execution USING gin (${retryKeyPrefixesExpression()}) ` +
      `WHERE ${retainedEnvelopePredicate()}`,
  },
];

export const createIndexStatement = (index: (typeof RUNTIME_INDEXES)[number], concurrently: boolean) =>
  `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${index.name} ON ${index.definition}`;

/** Which of Keel's runtime indexes exist on this database. */
export async function missingRuntimeIndexes(client: pg.ClientBase | pg.Pool): Promise<string[]> {
  const { rows } = await client.query<{ indexname: string }>(
    `select indexname from pg_indexes where schemaname = 'oxide_batch' and indexname = any($1::text[])`,
    [RUNTIME_INDEXES.map((i) => i.name)],
  );
  const present = new Set(rows.map((r) => r.indexname));
  return RUNTIME_INDEXES.map((i) => i.name).filter((name) => !present.has(name));
}
