import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { isRetryLimit, isRetryStateLimit } from '../domain/fault-state';
import { retryKeyShortHex } from '../domain/retry-key';
import type { RetryKeyCursor } from '../domain/retry-key-cursor';
import { retainedEnvelopePredicate } from '../db/runtime-indexes';
import {
  judgeEnvelope,
  keepVerdict,
  keptVerdict,
  verdictKey,
  type FaultLimits,
  type RowVersion,
  type StoredEnvelope,
  type Verdict,
} from './envelope-verdicts';
import type { RetryKeyListRow, StepColumns } from './retry-keys-types';

export { describeFaultStateError, type FaultLimits } from './envelope-verdicts';

/** As every other list of the console: a page a browser renders quickly and a reader can scan. */
export const RETRY_KEY_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 500;
// The corrupt-only view cannot be narrowed in SQL (a checksum is checked by reading the
// envelope), so one render reads at most this many steps and links on from the last.
const CORRUPT_SCAN_STEPS = 1000;

// The cursor's shape lives beside its sealed codec; pages carry it only sealed (lib/server/retry-key-cursor.ts).
export type { RetryKeyCursor } from '../domain/retry-key-cursor';

export type { RetryKeyListRow };

export interface RetryKeyPage {
  rows: RetryKeyListRow[];
  nextCursor: RetryKeyCursor | null;
}

/** A step's columns besides its envelope: the execution, the job's name and the step's fault policy. */
interface StepContext extends Record<string, unknown> {
  id: number;
  job_execution_id: number;
  step_logical_id: string;
  status: string;
  job_name: string;
  fault_policy: unknown;
}

/** A step as the key lists read it: with its row version and its envelope. */
interface StepRow extends StepContext, StoredEnvelope, RowVersion {}

function limitsOf(policy: unknown): FaultLimits | null {
  if (typeof policy !== 'object' || policy === null) return null;
  const { retry_limit: retryLimit, retry_state_limit: stateLimit } = policy as Record<string, unknown>;
  return isRetryLimit(retryLimit) && isRetryStateLimit(stateLimit) ? { retryLimit, stateLimit } : null;
}

type KeyEntry = Pick<Extract<RetryKeyListRow, { kind: 'key' }>, 'key' | 'phase' | 'category' | 'ordinal' | 'revision'>;

/**
 * Each step's verdict and, when valid, its keys in key order. A verdict kept for the
 * very row version read spares the checksum: the payload in hand is the one judged
 * valid, so its entries are taken as stored (validation sorted and checked them).
 */
function judgeSteps(steps: StepRow[]): { verdict: Verdict; entries: readonly KeyEntry[] }[] {
  return steps.map((step) => {
    const limits = limitsOf(step.fault_policy);
    const key = verdictKey(step, limits);
    const kept = keptVerdict(key);
    if (kept) {
      return {
        verdict: kept,
        entries: kept.kind === 'valid' ? (step.fault_state_payload as { entries: KeyEntry[] }).entries : [],
      };
    }
    const { verdict, envelope } = judgeEnvelope(step, limits);
    keepVerdict(key, verdict);
    return { verdict, entries: envelope ? envelope.entries : [] };
  });
}

function contextOf(step: StepContext): StepColumns {
  return {
    stepId: Number(step.id),
    executionId: Number(step.job_execution_id),
    stepLogicalId: step.step_logical_id,
    stepStatus: step.status,
    jobName: step.job_name,
    limits: limitsOf(step.fault_policy),
  };
}

/**
 * One step's rows the filters keep: its retained keys in key order (after `afterKey`,
 * when the page resumes inside this step), or one CORRUPT row. Only the rows shown are
 * built, each as one literal of a fixed shape: a filtered page reads about four keys
 * for each one it shows.
 */
function rowsOfStep(
  step: StepContext,
  verdict: Verdict,
  entries: readonly KeyEntry[],
  filters: RetryKeyFilters,
  afterKey: string | null,
): RetryKeyListRow[] {
  const base = contextOf(step);
  if (verdict.kind === 'corrupt') {
    const shown = afterKey === null && filters.only !== 'keys' && !filters.phase && !filters.category;
    return shown ? [{ ...base, kind: 'corrupt', error: verdict.error, message: verdict.message }] : [];
  }
  const rows: RetryKeyListRow[] = [];
  for (const entry of entries) {
    if (filters.phase && entry.phase !== filters.phase) continue;
    if (filters.category && entry.category !== filters.category) continue;
    if (afterKey !== null && entry.key <= afterKey) continue;
    rows.push({
      stepId: base.stepId,
      executionId: base.executionId,
      stepLogicalId: base.stepLogicalId,
      stepStatus: base.stepStatus,
      jobName: base.jobName,
      limits: base.limits,
      kind: 'key',
      keyPrefix: retryKeyShortHex(entry.key),
      key: entry.key,
      phase: entry.phase,
      category: entry.category,
      ordinal: entry.ordinal,
      revision: entry.revision,
    });
  }
  return rows;
}

// Not the runtime's default envelope: the text of the partial indexes' predicate, so they serve this list.
const holdsRetainedEnvelope = sql.raw(retainedEnvelopePredicate('s'));

/** What the retry-keys page filters by; phase and category narrow the keys, `only` picks keys or corrupt envelopes. */
export interface RetryKeyFilters {
  executionId?: number;
  job?: string;
  phase?: string;
  category?: string;
  only?: 'keys' | 'corrupt';
}

type StepBound = { id: number; inclusive: boolean } | null;

function stepConditions(from: StepBound, filters: RetryKeyFilters) {
  const bound = from ? (from.inclusive ? sql`and s.id <= ${from.id}` : sql`and s.id < ${from.id}`) : sql``;
  const byExecution = filters.executionId !== undefined ? sql`and s.job_execution_id = ${filters.executionId}` : sql``;
  // In the inner select, so the limit applies before the joins (joining first read every matching step).
  const byJob = filters.job
    ? sql`and exists (select 1 from oxide_batch.ob_job_execution je join oxide_batch.ob_job_instance ji
          on ji.id = je.job_instance_id
                      where je.id = s.job_execution_id and ji.job_name = ${filters.job})`
    : sql``;
  // Containment narrows the scan to envelopes holding such an entry; rows are still checked one by one below.
  const entry: Record<string, string> = {};
  if (filters.phase) entry.phase = filters.phase;
  if (filters.category) entry.category = filters.category;
  const byEntry =
    filters.only !== 'corrupt' && Object.keys(entry).length > 0
      ? sql`and s.fault_state_payload @> ${JSON.stringify({ entries: [entry] })}::jsonb`
      : sql``;
  return { bound, byExecution, byJob, byEntry, hasEntry: Object.keys(entry).length > 0 && filters.only !== 'corrupt' };
}

// The step's fault policy, from its definition's manifest (d), by the step's logical id (s).
const faultPolicy = sql`(select policy.step -> 'fault_policy'
            from jsonb_array_elements(case when jsonb_typeof(d.manifest -> 'steps') = 'array'
                                           then d.manifest -> 'steps' else '[]'::jsonb end) as policy(step)
            where policy.step ->> 'logical_id' = s.step_logical_id
            limit 1)`;

// What the key lists read of a step (named, so no other payload
// rides along); xmin names the row version for the verdicts.
const stepColumns = sql`s.id, s.job_execution_id, s.step_logical_id, s.status, s.xmin::text as row_xmin, s.version,
           s.fault_state_format, s.fault_state_schema, s.fault_state_schema_version, s.fault_state_checksum,
           s.fault_state_payload`;

/** The steps an inner select picked, with their execution's job name and the step's fault policy, newest first. */
const withContext = (steps: SQL) => sql`
    select s.*, i.job_name, ${faultPolicy} as fault_policy
    from (${steps}) s
    join oxide_batch.ob_job_execution e on e.id = s.job_execution_id
    join oxide_batch.ob_job_definition d on d.id = e.definition_id
    join oxide_batch.ob_job_instance i on i.id = e.job_instance_id
    order by s.id desc`;

/**
 * The list's statement: steps holding a retained envelope under the filters, newest first (exported for plan tests).
 */
export function retryKeyStepsQuery(from: StepBound, filters: RetryKeyFilters, batch: number): SQL {
  const { bound, byExecution, byJob, byEntry } = stepConditions(from, filters);
  return withContext(sql`
    select ${stepColumns} from oxide_batch.ob_step_execution s
    where ${holdsRetainedEnvelope} ${bound} ${byExecution} ${byJob} ${byEntry}
    order by s.id desc
    limit ${batch}`);
}

/**
 * The newest `probe` retained steps in id order, then the phase and category test on
 * those alone (the limit keeps the test out of the index choice). The containment index
 * reads every matching envelope and sorts them, whatever the page needs: 25-30 ms at
 * 12,500 envelopes for a phase most of them hold, where this walk reads a few hundred.
 */
export function retryKeyStepsProbe(from: StepBound, filters: RetryKeyFilters, batch: number, probe: number): SQL {
  const { bound, byExecution, byJob, byEntry } = stepConditions(from, filters);
  return withContext(sql`
    select s.* from (select s.*, count(*) over () as probed_steps
                     from (select ${stepColumns} from oxide_batch.ob_step_execution s
                           where ${holdsRetainedEnvelope} ${bound} ${byExecution}
                           order by s.id desc
                           limit ${probe}) s) s
    where true ${byJob} ${byEntry}
    order by s.id desc
    limit ${batch}`);
}

/**
 * The corrupt-only walk: each step's row version and fault policy, and no payload,
 * which is read only for the steps with no kept verdict.
 */
export function corruptScanQuery(from: StepBound, filters: RetryKeyFilters, batch: number): SQL {
  const { bound, byExecution, byJob } = stepConditions(from, filters);
  return sql`
    select s.id, s.row_xmin, s.version, ${faultPolicy} as fault_policy
    from (select s.id, s.job_execution_id, s.step_logical_id, s.xmin::text as row_xmin, s.version
          from oxide_batch.ob_step_execution s
          where ${holdsRetainedEnvelope} ${bound} ${byExecution} ${byJob}
          order by s.id desc
          limit ${batch}) s
    join oxide_batch.ob_job_execution e on e.id = s.job_execution_id
    join oxide_batch.ob_job_definition d on d.id = e.definition_id
    order by s.id desc`;
}

// A phase or category filter first walks this many steps per wanted step before asking the containment index.
const PROBE_FACTOR = 8;

/** Steps for one render: with an entry filter, the newest steps first and the containment index only for the rest. */
async function readSteps(db: DbOrTx, from: StepBound, filters: RetryKeyFilters, batch: number): Promise<StepRow[]> {
  if (!stepConditions(from, filters).hasEntry)
    return (await db.execute<StepRow>(retryKeyStepsQuery(from, filters, batch))).rows;
  const probe = batch * PROBE_FACTOR;
  const probed = (await db.execute<StepRow & { probed_steps: number }>(retryKeyStepsProbe(from, filters, batch, probe)))
    .rows;
  // A full page, or a walk that reached the last step: nothing more to ask.
  if (probed.length === batch || (probed.length > 0 && Number(probed[0]!.probed_steps) < probe)) return probed;
  // Fewer matches than wanted among the newest steps: the rest come from below the last match.
  const last = probed.at(-1);
  const rest = await db.execute<StepRow>(
    retryKeyStepsQuery(last ? { id: Number(last.id), inclusive: false } : from, filters, batch - probed.length),
  );
  return [...probed, ...rest.rows];
}

/** A step as the corrupt-only walk reads it: its row version and fault policy, no payload. */
export type ScannedStep = RowVersion & { fault_policy: unknown } & Record<string, unknown>;

/**
 * The corrupt-only walk's steps, newest first, read as one JSON array in one field: a walk
 * is up to thousands of steps, and a row per step costs the driver a row and a jsonb parse
 * each where one JSON.parse reads them all.
 */
export async function scanSteps(
  db: DbOrTx,
  from: StepBound,
  filters: RetryKeyFilters,
  batch: number,
): Promise<ScannedStep[]> {
  const { rows } = await db.execute<{ steps: string }>(sql`
    select coalesce(json_agg(json_build_array(w.id, w.row_xmin, w.version, w.fault_policy) order by w.id desc),
                    '[]')::text as steps
    from (${corruptScanQuery(from, filters, batch)}) w`);
  return (JSON.parse(rows[0]!.steps) as [number, string, number, unknown][]).map(
    ([id, row_xmin, version, fault_policy]) => ({ id, row_xmin, version, fault_policy }),
  );
}

/**
 * Each scanned step's verdict: kept ones as they are, the others judged from their
 * envelopes, read in one statement. A step rewritten since the scan is judged as read
 * now, and kept under that newer row version; a step gone since has none.
 */
export async function scannedVerdicts(db: DbOrTx, steps: ScannedStep[]): Promise<(Verdict | undefined)[]> {
  const limits = steps.map((step) => limitsOf(step.fault_policy));
  const verdicts = steps.map((step, i) => keptVerdict(verdictKey(step, limits[i]!)));
  const unjudged = steps.flatMap((step, i) => (verdicts[i] ? [] : [Number(step.id)]));
  if (unjudged.length === 0) return verdicts;
  const limitsById = new Map(steps.map((step, i) => [Number(step.id), limits[i]!]));
  const { rows } = await db.execute<StoredEnvelope & RowVersion & Record<string, unknown>>(sql`
    select s.id, s.xmin::text as row_xmin, s.version, s.fault_state_format, s.fault_state_schema,
    s.fault_state_schema_version,
           s.fault_state_checksum, s.fault_state_payload
    from oxide_batch.ob_step_execution s where s.id = any(${sql.param(unjudged)}::bigint[])`);
  const judged = new Map<number, Verdict>();
  for (const row of rows) {
    const rowLimits = limitsById.get(Number(row.id)) ?? null;
    const { verdict } = judgeEnvelope(row, rowLimits);
    keepVerdict(verdictKey(row, rowLimits), verdict);
    judged.set(Number(row.id), verdict);
  }
  return steps.map((step, i) => verdicts[i] ?? judged.get(Number(step.id)));
}

/** The corrupt-only list: up to CORRUPT_SCAN_STEPS steps walked, and only the corrupt ones' context read. */
async function listCorruptEnvelopes(
  db: DbOrTx,
  after: RetryKeyCursor | null,
  filters: RetryKeyFilters,
  size: number,
): Promise<RetryKeyPage> {
  const from = after ? { id: after.stepId, inclusive: after.key !== null } : null;
  const steps = await scanSteps(db, from, filters, CORRUPT_SCAN_STEPS);
  const verdicts = await scannedVerdicts(db, steps);
  // The corrupt steps in order, one more than the page holds to tell whether another page follows.
  const corrupt = new Map<number, Extract<Verdict, { kind: 'corrupt' }>>();
  for (const [i, step] of steps.entries()) {
    const verdict = verdicts[i];
    // A cursor inside a step's keys: that step is behind the page already.
    if (verdict?.kind !== 'corrupt' || (after?.key != null && Number(step.id) === after.stepId)) continue;
    corrupt.set(Number(step.id), verdict);
    if (corrupt.size > size) break;
  }
  const shown = [...corrupt.keys()].slice(0, size);
  const context =
    shown.length === 0
      ? []
      : (
          await db.execute<StepContext>(
            withContext(sql`
        select s.id, s.job_execution_id, s.step_logical_id, s.status
        from oxide_batch.ob_step_execution s where s.id = any(${sql.param(shown)}::bigint[])`),
          )
        ).rows;
  const rows: RetryKeyListRow[] = context.map((step) => {
    const verdict = corrupt.get(Number(step.id))!;
    return { ...contextOf(step), kind: 'corrupt', error: verdict.error, message: verdict.message };
  });
  const lastRow = rows.at(-1);
  if (corrupt.size > size && lastRow) return { rows, nextCursor: { stepId: lastRow.stepId, key: null } };
  const lastStep = steps.at(-1);
  if (steps.length < CORRUPT_SCAN_STEPS || !lastStep) return { rows, nextCursor: null };
  // The walk ended on its step limit: the next page goes on after the last step read.
  return { rows, nextCursor: { stepId: Number(lastStep.id), key: null } };
}

/**
 * Retained retry keys across steps, newest step first and keys in order within a
 * step, with each step's limits; a step whose envelope does not validate is one
 * CORRUPT row. Keyset-paged on (step id, key).
 */
export async function listRetryKeys(
  db: DbOrTx,
  options: { after?: RetryKeyCursor | null; limit?: number } & RetryKeyFilters = {},
): Promise<RetryKeyPage> {
  const size = Math.min(Math.max(Math.trunc(options.limit ?? RETRY_KEY_PAGE_SIZE) || 1, 1), MAX_PAGE_SIZE);
  const after = options.after ?? null;
  if (options.only === 'corrupt') return listCorruptEnvelopes(db, after, options, size);
  // One or two list statements per render: each valid step read yields at least one matching row
  // (the containment filter is in SQL), so size + 1 steps fill a page unless some are corrupt.
  const stepLimit = size + 1;
  const from = after ? { id: after.stepId, inclusive: after.key !== null } : null;
  const steps = await readSteps(db, from, options, stepLimit);
  const judged = judgeSteps(steps);
  const rows: RetryKeyListRow[] = [];
  for (const [i, step] of steps.entries()) {
    const afterKey = after?.key != null && Number(step.id) === after.stepId ? after.key : null;
    for (const row of rowsOfStep(step, judged[i]!.verdict, judged[i]!.entries, options, afterKey)) {
      const last = rows[rows.length - 1];
      if (rows.length === size && last) {
        return { rows, nextCursor: { stepId: last.stepId, key: last.kind === 'key' ? last.key : null } };
      }
      rows.push(row);
    }
  }
  const lastStep = steps[steps.length - 1];
  if (steps.length < stepLimit || !lastStep) return { rows, nextCursor: null };
  // Steps held corrupt or non-matching envelopes: the next page goes on after the last step read.
  return { rows, nextCursor: { stepId: Number(lastStep.id), key: null } };
}
