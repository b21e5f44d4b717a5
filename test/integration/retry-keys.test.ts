import { describe, expect, it } from 'vitest';
import { checksum, newEnvelope, type FaultStateEntry } from '../../lib/domain/fault-state';
import { decodeRetryKeyCursor, encodeRetryKeyCursor, listRetryKeys, type RetryKeyListRow } from '../../lib/queries/retry-keys';
import { freshDatabase } from '../support/database';
import { seedDefinition, seedExecution, seedStep } from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const CHECKPOINT = '7'.repeat(64);

const entry = (keyByte: string, ordinal = 1): FaultStateEntry => ({
  key: keyByte.repeat(32),
  phase: 'process',
  category: 'TIMEOUT',
  ordinal,
  revision: 'classifier_v3',
});

/** Stores an envelope on a step; `damage` edits the payload after the checksum was taken. */
async function storeEnvelope(stepId: number, entries: FaultStateEntry[], damage?: (payload: { entries: Record<string, unknown>[] }) => void) {
  const envelope = newEnvelope(CHECKPOINT, entries);
  if (!envelope.ok) throw new Error(envelope.error.kind);
  const sum = checksum(envelope.value);
  if (!sum.ok) throw new Error(sum.error.kind);
  const payload = { checkpoint: CHECKPOINT, entries: envelope.value.entries.map((e) => ({ ...e })) };
  damage?.(payload);
  await pool.query('update oxide_batch.ob_step_execution set fault_state_payload = $2::jsonb, fault_state_checksum = $3 where id = $1', [
    stepId,
    JSON.stringify(payload),
    sum.value,
  ]);
}

async function collectAll(limit: number, executionId?: number) {
  const rows: RetryKeyListRow[] = [];
  let after = null;
  for (let page = 0; page < 50; page += 1) {
    const result = await listRetryKeys(db, { after, limit, executionId });
    expect(result.rows.length).toBeLessThanOrEqual(limit);
    rows.push(...result.rows);
    if (!result.nextCursor) return rows;
    // Round-trip the cursor through its URL form, as a page link would.
    after = decodeRetryKeyCursor(encodeRetryKeyCursor(result.nextCursor));
  }
  throw new Error('pagination did not end');
}

const definition = await seedDefinition(db, {
  deliveryMode: 'at_least_once',
  steps: [{ logicalId: 'limited', retryLimit: 3, stateLimit: 4 }, { logicalId: 'unlimited' }],
});
const execution = await seedExecution(db, { definitionId: definition.id });
const limited = await seedStep(db, { executionId: execution.id, logicalId: 'limited' });
const unlimited = await seedStep(db, { executionId: execution.id, logicalId: 'unlimited' });
await seedStep(db, { executionId: execution.id, logicalId: 'empty' });
await storeEnvelope(limited, [entry('0c'), entry('0a', 2), entry('0b')]);
await storeEnvelope(unlimited, [entry('1a', 9)]);

const other = await seedExecution(db, { definitionId: definition.id });
const badChecksum = await seedStep(db, { executionId: other.id, logicalId: 'limited' });
const badCategory = await seedStep(db, { executionId: other.id, logicalId: 'unlimited' });
// No fault policy for this step: an ordinal of 5 cannot be judged, so validateFor is skipped.
const overLimit = await seedStep(db, { executionId: other.id, logicalId: 'no-policy' });
await storeEnvelope(badChecksum, [entry('2a')]);
await pool.query(`update oxide_batch.ob_step_execution set fault_state_checksum = decode(repeat('00', 32), 'hex') where id = $1`, [badChecksum]);
await storeEnvelope(badCategory, [entry('3a')], (payload) => {
  payload.entries[0]!.category = 'COSMIC_RAY';
});
await storeEnvelope(overLimit, [entry('4a', 5)]);

describe('listRetryKeys', () => {
  it('lists retained keys in key order per step, with the manifest limits or "limit unknown"', async () => {
    const rows = await collectAll(100, execution.id);
    expect(rows.map((row) => [row.stepId, row.kind === 'key' ? row.keyPrefix : row.kind])).toEqual([
      [unlimited, '1a'.repeat(6)],
      [limited, '0a'.repeat(6)],
      [limited, '0b'.repeat(6)],
      [limited, '0c'.repeat(6)],
    ]);
    expect(rows[0]).toMatchObject({ kind: 'key', limits: null, ordinal: 9, jobName: definition.jobName, stepLogicalId: 'unlimited' });
    expect(rows[1]).toMatchObject({ kind: 'key', key: '0a'.repeat(32), limits: { retryLimit: 3, stateLimit: 4 }, ordinal: 2, phase: 'process' });
  });

  it('shows a step whose envelope fails validation as one CORRUPT row with its error', async () => {
    const rows = await collectAll(100, other.id);
    expect(rows.map((row) => (row.kind === 'corrupt' ? [row.stepId, row.error.kind, row.message] : [row.stepId, 'key']))).toEqual([
      [overLimit, 'key'],
      [badCategory, 'UnknownEnumeration', 'fault state contains an unknown enumeration value'],
      [badChecksum, 'ChecksumMismatch', 'fault-state checksum does not match'],
    ]);
    expect(rows[0]).toMatchObject({ kind: 'key', limits: null, ordinal: 5 });
    // With a policy, the same ordinal above the retry limit makes the step corrupt.
    const limitedDefinition = await seedDefinition(db, { steps: [{ logicalId: 'strict', retryLimit: 3, stateLimit: 4 }] });
    const strictExecution = await seedExecution(db, { definitionId: limitedDefinition.id });
    const strict = await seedStep(db, { executionId: strictExecution.id, logicalId: 'strict' });
    await storeEnvelope(strict, [entry('5a', 5)]);
    const [row] = await collectAll(100, strictExecution.id);
    expect(row).toMatchObject({ kind: 'corrupt', stepId: strict, error: { kind: 'OrdinalAboveLimit', max: 3 }, limits: { retryLimit: 3, stateLimit: 4 } });
  });

  it('judges an envelope again once any byte of it changes, though verdicts are kept between renders', async () => {
    const changing = await seedExecution(db, { definitionId: definition.id });
    const step = await seedStep(db, { executionId: changing.id, logicalId: 'limited' });
    await storeEnvelope(step, [entry('6a')]);
    expect((await collectAll(100, changing.id)).map((row) => row.kind)).toEqual(['key']);
    // The payload is edited in place, the checksum left as it was: the kept verdict must not hide it.
    await pool.query(`update oxide_batch.ob_step_execution set fault_state_payload = jsonb_set(fault_state_payload, '{entries,0,ordinal}', '2') where id = $1`, [step]);
    expect(await collectAll(100, changing.id)).toMatchObject([{ kind: 'corrupt', error: { kind: 'ChecksumMismatch' } }]);
    await storeEnvelope(step, [entry('6a'), entry('6b')]);
    expect((await collectAll(100, changing.id)).map((row) => (row.kind === 'key' ? row.keyPrefix : row.kind))).toEqual(['6a'.repeat(6), '6b'.repeat(6)]);
  });

  it('the corrupt-only list reports a payload damaged in place after a scan kept its verdict, and drops it once repaired', async () => {
    const scanned = await seedExecution(db, { definitionId: definition.id });
    const sound = await seedStep(db, { executionId: scanned.id, logicalId: 'limited' });
    const damaged = await seedStep(db, { executionId: scanned.id, logicalId: 'unlimited' });
    await storeEnvelope(sound, [entry('7a')]);
    await storeEnvelope(damaged, [entry('7b')]);
    const corruptOnly = async () => (await listRetryKeys(db, { only: 'corrupt', executionId: scanned.id })).rows;
    expect(await corruptOnly()).toEqual([]);
    // Judged once and kept: the second scan takes the kept verdicts, and still finds nothing.
    expect(await corruptOnly()).toEqual([]);
    const before = await pool.query<{ checksum: Buffer }>('select fault_state_checksum as checksum from oxide_batch.ob_step_execution where id = $1', [damaged]);
    await pool.query(`update oxide_batch.ob_step_execution set fault_state_payload = jsonb_set(fault_state_payload, '{entries,0,ordinal}', '2') where id = $1`, [damaged]);
    const after = await pool.query<{ checksum: Buffer }>('select fault_state_checksum as checksum from oxide_batch.ob_step_execution where id = $1', [damaged]);
    expect(after.rows[0]!.checksum.equals(before.rows[0]!.checksum)).toBe(true);
    expect(await corruptOnly()).toMatchObject([{ kind: 'corrupt', stepId: damaged, error: { kind: 'ChecksumMismatch' }, jobName: definition.jobName, stepLogicalId: 'unlimited' }]);
    // The other list sees the same verdict, kept by the scan.
    expect((await collectAll(100, scanned.id)).map((row) => [row.stepId, row.kind])).toEqual([[damaged, 'corrupt'], [sound, 'key']]);
    await storeEnvelope(damaged, [entry('7b')]);
    expect(await corruptOnly()).toEqual([]);
  });

  it('pages the corrupt-only list by corrupt step, each once', async () => {
    const many = await seedExecution(db, { definitionId: definition.id });
    const steps = [];
    for (const logicalId of ['c1', 'c2', 'c3', 'c4', 'c5']) {
      const step = await seedStep(db, { executionId: many.id, logicalId });
      await storeEnvelope(step, [entry('8a')]);
      steps.push(step);
    }
    await pool.query(`update oxide_batch.ob_step_execution set fault_state_checksum = decode(repeat('00', 32), 'hex') where id = any($1::bigint[]) and step_logical_id <> 'c3'`, [steps]);
    const seen: number[] = [];
    let after = null;
    for (let page = 0; page < 10; page += 1) {
      const result = await listRetryKeys(db, { only: 'corrupt', executionId: many.id, limit: 2, after });
      expect(result.rows.length).toBeLessThanOrEqual(2);
      seen.push(...result.rows.map((row) => row.stepId));
      if (!result.nextCursor) break;
      after = result.nextCursor;
    }
    expect(seen).toEqual(steps.filter((_, i) => i !== 2).reverse());
  });

  it('pages through every row exactly once, cutting inside a step', async () => {
    const everything = await collectAll(500);
    for (const limit of [1, 2, 3]) {
      const paged = await collectAll(limit);
      expect(paged).toEqual(everything);
    }
    expect(everything.filter((row) => row.kind === 'key').length).toBeGreaterThanOrEqual(5);
    expect(everything.some((row) => row.stepLogicalId === 'empty')).toBe(false);
  });

  it('refuses a malformed cursor token instead of guessing', () => {
    expect(decodeRetryKeyCursor('12.zz')).toBeNull();
    expect(decodeRetryKeyCursor("1; drop table x")).toBeNull();
    expect(decodeRetryKeyCursor(`4.${'ab'.repeat(32)}`)).toEqual({ stepId: 4, key: 'ab'.repeat(32) });
    expect(decodeRetryKeyCursor('4')).toEqual({ stepId: 4, key: null });
  });
});
