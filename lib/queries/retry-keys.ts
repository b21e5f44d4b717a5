import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import {
  fromCanonicalJson,
  isRetryLimit,
  isRetryStateLimit,
  validateFor,
  type FaultPolicyError,
  type FaultStateFormatError,
} from '../domain/fault-state';
import { retryKeyShortHex } from '../domain/retry-key';
import { retainedEnvelopePredicate } from '../db/runtime-indexes';

export const RETRY_KEY_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 500;
// The corrupt-only view cannot be narrowed in SQL (a checksum is checked by reading the
// envelope), so one render reads at most this many steps and links on from the last.
const CORRUPT_SCAN_STEPS = 1000;

/** Where the next page starts: after `key` in step `stepId`, or after the whole step when `key` is null. */
export interface RetryKeyCursor {
  stepId: number;
  key: string | null;
}

/** The step's fault policy from its definition manifest; null shows as "limit unknown". */
export interface FaultLimits {
  retryLimit: number;
  stateLimit: number;
}

interface StepColumns {
  stepId: number;
  executionId: number;
  stepLogicalId: string;
  stepStatus: string;
  jobName: string;
  limits: FaultLimits | null;
}

export type RetryKeyListRow =
  | (StepColumns & {
      kind: 'key';
      /** The full key, for the copy button; pages show `keyPrefix`. Never log it. */
      key: string;
      keyPrefix: string;
      phase: string;
      category: string;
      ordinal: number;
      revision: string;
    })
  /** An envelope that fails validation: shown as CORRUPT with its error; no action may act on it. */
  | (StepColumns & { kind: 'corrupt'; error: FaultStateFormatError | FaultPolicyError; message: string });

export interface RetryKeyPage {
  rows: RetryKeyListRow[];
  nextCursor: RetryKeyCursor | null;
}

interface EnvelopeColumns {
  id: number;
  fault_state_format: number;
  fault_state_schema: string;
  fault_state_schema_version: number;
  fault_state_checksum: Buffer;
  /** md5 of the payload's text: with the other columns it names the envelope a verdict was reached on. */
  payload_digest: string;
}

interface StepRow extends EnvelopeColumns, Record<string, unknown> {
  job_execution_id: number;
  step_logical_id: string;
  status: string;
  job_name: string;
  fault_policy: unknown;
}

interface PayloadRow extends EnvelopeColumns, Record<string, unknown> {
  fault_state_payload: unknown;
}

export function describeFaultStateError(error: FaultStateFormatError | FaultPolicyError): string {
  switch (error.kind) {
    case 'UnsupportedFormat': return 'fault-state format is unsupported';
    case 'UnsupportedSchemaVersion': return 'fault-state schema version is unsupported';
    case 'TooLarge': return `fault state exceeds ${error.maxBytes} bytes`;
    case 'Malformed': return 'fault state is malformed';
    case 'TooManyEntries': return `fault state retains more than ${error.max} keys`;
    case 'MalformedEntry': return 'fault-state entry is malformed';
    case 'UnknownEnumeration': return 'fault state contains an unknown enumeration value';
    case 'UnsortedEntries': return 'fault state is not digest-sorted';
    case 'DuplicateKey': return 'fault state repeats one retry key';
    case 'CheckpointMismatch': return 'fault state belongs to a superseded checkpoint';
    case 'ChecksumMismatch': return 'fault-state checksum does not match';
    case 'OrdinalAboveLimit': return `fault state retains an ordinal above ${error.max}`;
    case 'InvalidRetryLimit': return 'the fault policy retry limit is out of range';
    case 'InvalidRetryStateLimit': return 'the fault policy retry state limit is out of range';
  }
}

function limitsOf(policy: unknown): FaultLimits | null {
  if (typeof policy !== 'object' || policy === null) return null;
  const { retry_limit: retryLimit, retry_state_limit: stateLimit } = policy as Record<string, unknown>;
  return isRetryLimit(retryLimit) && isRetryStateLimit(stateLimit) ? { retryLimit, stateLimit } : null;
}

type KeyEntry = Pick<Extract<RetryKeyListRow, { kind: 'key' }>, 'key' | 'phase' | 'category' | 'ordinal' | 'revision'>;

/** What validating an envelope under a policy found: its keys in key order, or why it is corrupt. */
type Verdict = { kind: 'keys'; entries: KeyEntry[] } | { kind: 'corrupt'; error: FaultStateFormatError | FaultPolicyError; message: string };

function verdictOf(envelope: PayloadRow, limits: FaultLimits | null): Verdict {
  const parsed = fromCanonicalJson({
    formatId: envelope.fault_state_schema,
    formatVersion: Number(envelope.fault_state_format),
    schemaVersion: Number(envelope.fault_state_schema_version),
    checksum: envelope.fault_state_checksum,
    payload: envelope.fault_state_payload,
  });
  if (!parsed.ok) return { kind: 'corrupt', error: parsed.error, message: describeFaultStateError(parsed.error) };
  if (limits) {
    // The committed checkpoint's identity is the runtime's to derive, so only the policy bounds are checked here.
    const valid = validateFor(parsed.value, limits.retryLimit, limits.stateLimit, parsed.value.checkpoint);
    if (!valid.ok) return { kind: 'corrupt', error: valid.error, message: describeFaultStateError(valid.error) };
  }
  return { kind: 'keys', entries: parsed.value.entries.map(({ key, phase, category, ordinal, revision }) => ({ key, phase, category, ordinal, revision })) };
}

/**
 * Verdicts by envelope and policy, so a render reads and checksums only the envelopes
 * it has not seen (a corrupt-only render reads up to 1,000 steps: 1.2 MB of payloads
 * and ~70 ms of checksums otherwise). The key is every column the verdict depends on,
 * the payload by its md5, so an envelope changed in any byte is validated again. Holds
 * retry keys: process memory only, never logged.
 */
const VERDICTS_KEPT = 50_000;
const verdicts = new Map<string, Verdict>();

const verdictKey = (envelope: EnvelopeColumns, limits: FaultLimits | null) =>
  [envelope.id, envelope.fault_state_format, envelope.fault_state_schema, envelope.fault_state_schema_version,
    envelope.fault_state_checksum.toString('hex'), envelope.payload_digest, limits ? `${limits.retryLimit}/${limits.stateLimit}` : '-'].join('|');

function remember(key: string, verdict: Verdict) {
  verdicts.delete(key);
  verdicts.set(key, verdict);
  // Oldest first out: a Map iterates in insertion order.
  while (verdicts.size > VERDICTS_KEPT) verdicts.delete(verdicts.keys().next().value!);
}

/** Each step's verdict: from the cache, or by reading and validating the envelopes not seen yet (one statement). */
async function verdictsOf(db: DbOrTx, steps: StepRow[]): Promise<Verdict[]> {
  const limits = steps.map((step) => limitsOf(step.fault_policy));
  const keys = steps.map((step, i) => verdictKey(step, limits[i]!));
  const missing = steps.filter((_, i) => !verdicts.has(keys[i]!));
  if (missing.length > 0) {
    const { rows } = await db.execute<PayloadRow>(sql`
      select id, fault_state_format, fault_state_schema, fault_state_schema_version, fault_state_checksum, fault_state_payload,
             md5(fault_state_payload::text) as payload_digest
      from oxide_batch.ob_step_execution where id = any(${sql.param(missing.map((step) => Number(step.id)))}::bigint[])`);
    const policyOf = new Map(steps.map((step, i) => [Number(step.id), limits[i]!]));
    for (const row of rows) {
      const rowLimits = policyOf.get(Number(row.id)) ?? null;
      remember(verdictKey(row, rowLimits), verdictOf(row, rowLimits));
    }
  }
  // An envelope rewritten between the two reads is judged as read now, without caching it under the older key.
  return Promise.all(
    steps.map(async (step, i) => verdicts.get(keys[i]!) ?? (await rereadVerdict(db, step, limits[i]!))),
  );
}

async function rereadVerdict(db: DbOrTx, step: StepRow, limits: FaultLimits | null): Promise<Verdict> {
  const { rows } = await db.execute<PayloadRow>(sql`
    select id, fault_state_format, fault_state_schema, fault_state_schema_version, fault_state_checksum, fault_state_payload,
           md5(fault_state_payload::text) as payload_digest
    from oxide_batch.ob_step_execution where id = ${Number(step.id)}`);
  const row = rows[0];
  if (!row) return { kind: 'keys', entries: [] };
  return verdictOf(row, limits);
}

/** One step's rows: its retained keys in key order, or one CORRUPT row. */
function rowsOfStep(step: StepRow, verdict: Verdict): RetryKeyListRow[] {
  const base: StepColumns = {
    stepId: Number(step.id),
    executionId: Number(step.job_execution_id),
    stepLogicalId: step.step_logical_id,
    stepStatus: step.status,
    jobName: step.job_name,
    limits: limitsOf(step.fault_policy),
  };
  if (verdict.kind === 'corrupt') return [{ ...base, kind: 'corrupt', error: verdict.error, message: verdict.message }];
  return verdict.entries.map((entry) => ({ ...base, kind: 'key', keyPrefix: retryKeyShortHex(entry.key), ...entry }));
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
    ? sql`and exists (select 1 from oxide_batch.ob_job_execution je join oxide_batch.ob_job_instance ji on ji.id = je.job_instance_id
                      where je.id = s.job_execution_id and ji.job_name = ${filters.job})`
    : sql``;
  // Containment narrows the scan to envelopes holding such an entry; rows are still checked one by one below.
  const entry: Record<string, string> = {};
  if (filters.phase) entry.phase = filters.phase;
  if (filters.category) entry.category = filters.category;
  const byEntry = filters.only !== 'corrupt' && Object.keys(entry).length > 0 ? sql`and s.fault_state_payload @> ${JSON.stringify({ entries: [entry] })}::jsonb` : sql``;
  return { bound, byExecution, byJob, byEntry, hasEntry: Object.keys(entry).length > 0 && filters.only !== 'corrupt' };
}

/** The steps an inner select picked, with their execution's job name and the step's fault policy, newest first. */
const withContext = (steps: SQL, extra: SQL = sql``) => sql`
    select ${extra} s.id, s.job_execution_id, s.step_logical_id, s.status, s.fault_state_format, s.fault_state_schema,
           s.fault_state_schema_version, s.fault_state_checksum, md5(s.fault_state_payload::text) as payload_digest, i.job_name,
           (select policy.step -> 'fault_policy'
            from jsonb_array_elements(case when jsonb_typeof(d.manifest -> 'steps') = 'array'
                                           then d.manifest -> 'steps' else '[]'::jsonb end) as policy(step)
            where policy.step ->> 'logical_id' = s.step_logical_id
            limit 1) as fault_policy
    from (${steps}) s
    join oxide_batch.ob_job_execution e on e.id = s.job_execution_id
    join oxide_batch.ob_job_definition d on d.id = e.definition_id
    join oxide_batch.ob_job_instance i on i.id = e.job_instance_id
    order by s.id desc`;

/** The list's statement: steps holding a retained envelope under the filters, newest first (exported for plan tests). */
export function retryKeyStepsQuery(from: StepBound, filters: RetryKeyFilters, batch: number): SQL {
  const { bound, byExecution, byJob, byEntry } = stepConditions(from, filters);
  return withContext(sql`
    select s.* from oxide_batch.ob_step_execution s
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
  return withContext(
    sql`
    select s.* from (select s.*, count(*) over () as probed_steps
                     from (select s.* from oxide_batch.ob_step_execution s
                           where ${holdsRetainedEnvelope} ${bound} ${byExecution}
                           order by s.id desc
                           limit ${probe}) s) s
    where true ${byJob} ${byEntry}
    order by s.id desc
    limit ${batch}`,
    sql`s.probed_steps,`,
  );
}

// A phase or category filter first walks this many steps per wanted step before asking the containment index.
const PROBE_FACTOR = 8;

/** Steps for one render: with an entry filter, the newest steps first and the containment index only for the rest. */
async function readSteps(db: DbOrTx, from: StepBound, filters: RetryKeyFilters, batch: number): Promise<StepRow[]> {
  if (!stepConditions(from, filters).hasEntry) return (await db.execute<StepRow>(retryKeyStepsQuery(from, filters, batch))).rows;
  const probe = batch * PROBE_FACTOR;
  const probed = (await db.execute<StepRow & { probed_steps: number }>(retryKeyStepsProbe(from, filters, batch, probe))).rows;
  // A full page, or a walk that reached the last step: nothing more to ask.
  if (probed.length === batch || (probed.length > 0 && Number(probed[0]!.probed_steps) < probe)) return probed;
  // Fewer matches than wanted among the newest steps: the rest come from below the last match.
  const last = probed.at(-1);
  const rest = await db.execute<StepRow>(retryKeyStepsQuery(last ? { id: Number(last.id), inclusive: false } : from, filters, batch - probed.length));
  return [...probed, ...rest.rows];
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
  // One or two list statements per render (and one for envelopes not validated before): each valid step read
  // yields at least one matching row (the containment filter is in SQL), so size + 1 steps fill a page unless some are corrupt.
  const stepLimit = options.only === 'corrupt' ? CORRUPT_SCAN_STEPS : size + 1;
  const from = after ? { id: after.stepId, inclusive: after.key !== null } : null;
  const steps = await readSteps(db, from, options, stepLimit);
  const stepVerdicts = await verdictsOf(db, steps);
  const rows: RetryKeyListRow[] = [];
  for (const [i, step] of steps.entries()) {
    // The corrupt-only view skips valid envelopes before building their key rows.
    if (options.only === 'corrupt' && stepVerdicts[i]!.kind !== 'corrupt') continue;
    let stepRows = rowsOfStep(step, stepVerdicts[i]!).filter((row) => matches(row, options));
    if (after?.key != null && Number(step.id) === after.stepId) {
      stepRows = stepRows.filter((row) => row.kind === 'key' && row.key > (after.key as string));
    }
    for (const row of stepRows) {
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

function matches(row: RetryKeyListRow, filters: RetryKeyFilters): boolean {
  if (filters.only === 'corrupt') return row.kind === 'corrupt';
  if (filters.only === 'keys' && row.kind !== 'key') return false;
  if (row.kind !== 'key') return !filters.phase && !filters.category;
  return (!filters.phase || row.phase === filters.phase) && (!filters.category || row.category === filters.category);
}

/** A cursor as one URL-safe token: `<step id>` or `<step id>.<key>`. */
export const encodeRetryKeyCursor = (cursor: RetryKeyCursor): string =>
  cursor.key === null ? String(cursor.stepId) : `${cursor.stepId}.${cursor.key}`;

export function decodeRetryKeyCursor(token: string | null | undefined): RetryKeyCursor | null {
  const match = /^(\d{1,15})(?:\.([0-9a-f]{64}))?$/.exec(token ?? '');
  if (!match) return null;
  return { stepId: Number(match[1]), key: match[2] ?? null };
}
