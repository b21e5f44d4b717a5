import type pg from 'pg';

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
    name: 'keel_ob_step_execution_retained_idx',
    purpose: 'retry keys: steps whose fault-state envelope is not the empty one',
    definition:
      "oxide_batch.ob_step_execution (id DESC) WHERE fault_state_checksum <> '\\xa491114819e0d3bd8b7ca004dc0636f95b45e2fcb1a67ddb5726beaea12f9922'::bytea",
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
