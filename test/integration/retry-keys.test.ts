import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checksum, newEnvelope, type FaultStateEntry } from '../../lib/domain/fault-state';
import {
  decodeRetryKeyCursor,
  encodeRetryKeyCursor,
  retryKeyCursorField,
  retryKeyCursorKey,
} from '../../lib/domain/retry-key-cursor';
import { listRetryKeys, type RetryKeyCursor, type RetryKeyListRow } from '../../lib/queries/retry-keys';
import { parseInput } from '../../lib/server/parse-input';
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
async function storeEnvelope(
  stepId: number,
  entries: FaultStateEntry[],
  damage?: (payload: { entries: Record<string, unknown>[] }) => void,
) {
  const envelope = newEnvelope(CHECKPOINT, entries);
  if (!envelope.ok) throw new Error(envelope.error.kind);
  const sum = checksum(envelope.value);
  if (!sum.ok) throw new Error(sum.error.kind);
  const payload = { checkpoint: CHECKPOINT, entries: envelope.value.entries.map((e) => ({ ...e })) };
  damage?.(payload);
  await pool.query(
    'update oxide_batch.ob_step_execution set fault_state_payload = $2::jsonb, fault_state_checksum = $3 where id = $1',
    [stepId, JSON.stringify(payload), sum.value],
  );
}

// The cursor key as the server derives it from its session secret (lib/server/retry-key-cursor.ts).
const CURSOR_KEY = retryKeyCursorKey('s'.repeat(32));
/** Every sealed cursor collectAll handed on, as a page link would carry it. */
const tokens: string[] = [];

async function collectAll(limit: number, executionId?: number) {
  const rows: RetryKeyListRow[] = [];
  let after: RetryKeyCursor | null = null;
  for (let page = 0; page < 50; page += 1) {
    const result = await listRetryKeys(db, { after, limit, executionId });
    expect(result.rows.length).toBeLessThanOrEqual(limit);
    rows.push(...result.rows);
    if (!result.nextCursor) return rows;
    // Round-trip the cursor through its sealed URL form, as a page link would.
    const token = encodeRetryKeyCursor(result.nextCursor, CURSOR_KEY);
    tokens.push(token);
    const opened = decodeRetryKeyCursor(token, CURSOR_KEY);
    if (!opened.ok) throw new Error(`a sealed cursor did not open: ${opened.error.code}`);
    after = opened.value;
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
await pool.query(
  `update oxide_batch.ob_step_execution set fault_state_checksum = decode(repeat('00', 32), 'hex') where id = $1`,
  [badChecksum],
);
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
    expect(rows[0]).toMatchObject({
      kind: 'key',
      limits: null,
      ordinal: 9,
      jobName: definition.jobName,
      stepLogicalId: 'unlimited',
    });
    expect(rows[1]).toMatchObject({
      kind: 'key',
      key: '0a'.repeat(32),
      limits: { retryLimit: 3, stateLimit: 4 },
      ordinal: 2,
      phase: 'process',
    });
  });

  it('shows a step whose envelope fails validation as one CORRUPT row with its error', async () => {
    const rows = await collectAll(100, other.id);
    expect(
      rows.map((row) => (row.kind === 'corrupt' ? [row.stepId, row.error.kind, row.message] : [row.stepId, 'key'])),
    ).toEqual([
      [overLimit, 'key'],
      [badCategory, 'UnknownEnumeration', 'fault state contains an unknown enumeration value'],
      [badChecksum, 'ChecksumMismatch', 'fault-state checksum does not match'],
    ]);
    expect(rows[0]).toMatchObject({ kind: 'key', limits: null, ordinal: 5 });
    // With a policy, the same ordinal above the retry limit makes the step corrupt.
    const limitedDefinition = await seedDefinition(db, {
      steps: [{ logicalId: 'strict', retryLimit: 3, stateLimit: 4 }],
    });
    const strictExecution = await seedExecution(db, { definitionId: limitedDefinition.id });
    const strict = await seedStep(db, { executionId: strictExecution.id, logicalId: 'strict' });
    await storeEnvelope(strict, [entry('5a', 5)]);
    const [row] = await collectAll(100, strictExecution.id);
    expect(row).toMatchObject({
      kind: 'corrupt',
      stepId: strict,
      error: { kind: 'OrdinalAboveLimit', max: 3 },
      limits: { retryLimit: 3, stateLimit: 4 },
    });
  });

  it('keys-only, phase and category views hold only the keys that match, never a CORRUPT row', async () => {
    const mixed = await seedExecution(db, { definitionId: definition.id });
    const valid = await seedStep(db, { executionId: mixed.id, logicalId: 'unlimited' });
    const broken = await seedStep(db, { executionId: mixed.id, logicalId: 'no-policy' });
    await storeEnvelope(valid, [
      { ...entry('8a'), phase: 'read', category: 'TIMEOUT' },
      { ...entry('8b'), phase: 'write', category: 'TIMEOUT' },
      { ...entry('8c'), phase: 'read', category: 'SERIALIZATION' },
    ]);
    await storeEnvelope(broken, [{ ...entry('8d'), phase: 'read' }]);
    await pool.query(
      `update oxide_batch.ob_step_execution set fault_state_checksum = decode(repeat('00', 32), 'hex') where id = $1`,
      [broken],
    );
    const shown = async (filters: { only?: 'keys'; phase?: string; category?: string }) =>
      (await listRetryKeys(db, { executionId: mixed.id, limit: 100, ...filters })).rows.map((row) =>
        row.kind === 'key' ? row.keyPrefix.slice(0, 2) : row.kind,
      );
    expect(await shown({})).toEqual(['corrupt', '8a', '8b', '8c']);
    expect(await shown({ only: 'keys' })).toEqual(['8a', '8b', '8c']);
    expect(await shown({ phase: 'read' })).toEqual(['8a', '8c']);
    expect(await shown({ category: 'TIMEOUT' })).toEqual(['8a', '8b']);
    expect(await shown({ phase: 'read', category: 'SERIALIZATION' })).toEqual(['8c']);
    // A page that ends inside a step, whose envelope is then damaged: the next page goes on past that step.
    const first = await listRetryKeys(db, { executionId: mixed.id, limit: 2 });
    expect(first.rows.map((row) => row.kind)).toEqual(['corrupt', 'key']);
    await storeEnvelope(valid, [entry('8a'), entry('8b')], (payload) => {
      payload.entries[1]!.ordinal = 7;
    });
    const next = await listRetryKeys(db, { executionId: mixed.id, limit: 2, after: first.nextCursor });
    expect(next).toEqual({ rows: [], nextCursor: null });
  });

  it('judges an envelope again once any byte of it changes, though verdicts are kept between renders', async () => {
    const changing = await seedExecution(db, { definitionId: definition.id });
    const step = await seedStep(db, { executionId: changing.id, logicalId: 'limited' });
    await storeEnvelope(step, [entry('6a')]);
    expect((await collectAll(100, changing.id)).map((row) => row.kind)).toEqual(['key']);
    // The payload is edited in place, the checksum left as it was: the kept verdict must not hide it.
    await pool.query(
      `update oxide_batch.ob_step_execution set fault_state_payload = jsonb_set(fault_state_payload,
       '{entries,0,ordinal}', '2') where id = $1`,
      [step],
    );
    expect(await collectAll(100, changing.id)).toMatchObject([
      { kind: 'corrupt', error: { kind: 'ChecksumMismatch' } },
    ]);
    await storeEnvelope(step, [entry('6a'), entry('6b')]);
    expect((await collectAll(100, changing.id)).map((row) => (row.kind === 'key' ? row.keyPrefix : row.kind))).toEqual([
      '6a'.repeat(6),
      '6b'.repeat(6),
    ]);
  });

  it('the corrupt-only list reports a payload damaged after a scan kept its verdict; repaired, it drops', async () => {
    const scanned = await seedExecution(db, { definitionId: definition.id });
    const sound = await seedStep(db, { executionId: scanned.id, logicalId: 'limited' });
    const damaged = await seedStep(db, { executionId: scanned.id, logicalId: 'unlimited' });
    await storeEnvelope(sound, [entry('7a')]);
    await storeEnvelope(damaged, [entry('7b')]);
    const corruptOnly = async () => (await listRetryKeys(db, { only: 'corrupt', executionId: scanned.id })).rows;
    expect(await corruptOnly()).toEqual([]);
    // Judged once and kept: the second scan takes the kept verdicts, and still finds nothing.
    expect(await corruptOnly()).toEqual([]);
    const before = await pool.query<{ checksum: Buffer }>(
      'select fault_state_checksum as checksum from oxide_batch.ob_step_execution where id = $1',
      [damaged],
    );
    await pool.query(
      `update oxide_batch.ob_step_execution set fault_state_payload = jsonb_set(fault_state_payload,
       '{entries,0,ordinal}', '2') where id = $1`,
      [damaged],
    );
    const after = await pool.query<{ checksum: Buffer }>(
      'select fault_state_checksum as checksum from oxide_batch.ob_step_execution where id = $1',
      [damaged],
    );
    expect(after.rows[0]!.checksum.equals(before.rows[0]!.checksum)).toBe(true);
    expect(await corruptOnly()).toMatchObject([
      {
        kind: 'corrupt',
        stepId: damaged,
        error: { kind: 'ChecksumMismatch' },
        jobName: definition.jobName,
        stepLogicalId: 'unlimited',
      },
    ]);
    // The other list sees the same verdict, kept by the scan.
    expect((await collectAll(100, scanned.id)).map((row) => [row.stepId, row.kind])).toEqual([
      [damaged, 'corrupt'],
      [sound, 'key'],
    ]);
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
    await pool.query(
      `update oxide_batch.ob_step_execution set fault_state_checksum = decode(repeat('00', 32), 'hex')
       where id = any($1::bigint[]) and step_logical_id <> 'c3'`,
      [steps],
    );
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

  it('pages through every row exactly once, in order, cutting inside a step, with cursors holding no key', async () => {
    const everything = await collectAll(500);
    tokens.length = 0;
    for (const limit of [1, 2, 3]) {
      const paged = await collectAll(limit);
      expect(paged).toEqual(everything);
    }
    const keys = everything.flatMap((row) => (row.kind === 'key' ? [`${row.stepId}.${row.key}`] : []));
    expect(keys.length).toBeGreaterThanOrEqual(5);
    expect(new Set(keys).size).toBe(keys.length);
    // Newest step first, keys in order within a step.
    const order = everything.map((row) => [-row.stepId, row.kind === 'key' ? row.key : ''] as const);
    expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)));
    expect(everything.some((row) => row.stepLogicalId === 'empty')).toBe(false);
    // Small pages cut inside steps: tokens do carry keys (each one of the list's), and no token shows one.
    const positions = new Set(
      tokens
        .map((token) => decodeRetryKeyCursor(token, CURSOR_KEY))
        .flatMap((opened) => (opened.ok && opened.value.key ? [`${opened.value.stepId}.${opened.value.key}`] : [])),
    );
    expect(positions.size).toBeGreaterThanOrEqual(2);
    expect([...positions].every((position) => keys.includes(position))).toBe(true);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{1,200}$/);
      for (const row of everything) if (row.kind === 'key') expect(token).not.toContain(row.key);
    }
  });

  it('refuses a tampered, truncated, foreign or plain cursor token with the typed bad-input error', async () => {
    const next = (await listRetryKeys(db, { limit: 1, executionId: execution.id })).nextCursor!;
    expect(next).toEqual({ stepId: unlimited, key: '1a'.repeat(32) });
    const token = encodeRetryKeyCursor(next, CURSOR_KEY);
    const schema = z.object({ cursor: retryKeyCursorField(() => CURSOR_KEY).optional() });
    expect(parseInput(schema, { cursor: token })).toEqual({ ok: true, value: { cursor: token } });
    const bytes = Buffer.from(token, 'base64url');
    bytes.writeUInt8(bytes.readUInt8(20) ^ 1, 20);
    for (const bad of [
      bytes.toString('base64url'),
      token.slice(0, -4),
      encodeRetryKeyCursor(next, retryKeyCursorKey('t'.repeat(32))),
      `${next.stepId}.${next.key}`,
      String(next.stepId),
      '12.zz',
      '1; drop table x',
    ]) {
      expect(decodeRetryKeyCursor(bad, CURSOR_KEY)).toEqual({
        ok: false,
        error: { code: 'INVALID_CURSOR', message: 'This cursor was not made by Keel.' },
      });
      expect(parseInput(schema, { cursor: bad })).toMatchObject({
        ok: false,
        error: { fieldErrors: { cursor: ['This cursor was not made by Keel.'] } },
      });
    }
  });
});
