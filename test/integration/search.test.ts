import { describe, expect, it } from 'vitest';
import { checksum, newEnvelope } from '../../lib/domain/fault-state';
import { searchPlan, searchQuerySchema } from '../../lib/domain/search';
import { HEX_TOO_SHORT_NOTE, searchEverything } from '../../lib/queries/search';
import { singleDestination, type SearchResults } from '../../lib/queries/search-types';
import { freshDatabase } from '../support/database';
import { seedDefinition, seedExecution, seedStep } from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const CHECKPOINT = '7'.repeat(64);

async function storeKeys(stepId: number, keys: string[]) {
  const envelope = newEnvelope(
    CHECKPOINT,
    keys.map((key, i) => ({ key, phase: 'process', category: 'TIMEOUT', ordinal: i + 1, revision: 'classifier_v3' })),
  );
  if (!envelope.ok) throw new Error(envelope.error.kind);
  const sum = checksum(envelope.value);
  if (!sum.ok) throw new Error(sum.error.kind);
  await pool.query(
    'update oxide_batch.ob_step_execution set fault_state_payload = $2::jsonb, fault_state_checksum = $3 where id = $1',
    [stepId, JSON.stringify({ checkpoint: CHECKPOINT, entries: envelope.value.entries }), sum.value],
  );
}

const search = (q: string, role: 'viewer' | 'admin' = 'viewer') => searchEverything(db, q, searchPlan(q, role));
const kinds = (results: SearchResults) => results.groups.map((g) => `${g.kind} ${g.hits.length}${g.more ? '+' : ''}`);

const definition = await seedDefinition(db, { steps: [{ logicalId: 'load', retryLimit: 3, stateLimit: 4 }] });
const execution = await seedExecution(db, { definitionId: definition.id });
const step = await seedStep(db, { executionId: execution.id, logicalId: 'load' });
const KEY = `abcdef01${'23'.repeat(28)}`;
await storeKeys(step, [KEY, `ffffffff${'00'.repeat(28)}`]);

describe('searchEverything', () => {
  it('finds a step by 8+ hex digits of a retry key, in either case, and not by differing digits past 8', async () => {
    for (const q of [KEY.slice(0, 8), KEY.slice(0, 12).toUpperCase(), KEY]) {
      const results = await search(q);
      expect(kinds(results), q).toEqual(['retryKey 1']);
      expect(results.groups[0]!.hits[0]).toMatchObject({
        kind: 'retryKey',
        executionId: execution.id,
        stepLogicalId: 'load',
        keyPrefixes: [KEY.slice(0, 12)],
      });
      expect(singleDestination(results)).toBe(`/executions/${execution.id}`);
    }
    expect(kinds(await search(`${KEY.slice(0, 8)}99`))).toEqual([]);
    const short = await search(KEY.slice(0, 7));
    expect(kinds(short)).toEqual([]);
    expect(short.notes).toEqual([HEX_TOO_SHORT_NOTE]);
    expect((await search('1234567')).notes).toEqual([]);
  });

  it('lets the runtime store any envelope, however damaged: the prefix index never raises', async () => {
    const index = await pool.query(
      `select 1 from pg_indexes where schemaname = 'oxide_batch'
       and indexname = 'keel_ob_step_execution_retry_key_prefix_idx'`,
    );
    expect(index.rowCount).toBe(1);
    const damaged = await seedStep(db, { executionId: execution.id, logicalId: 'damaged' });
    for (const payload of [
      '"scalar"',
      '{"entries": 5}',
      '{"entries": [{"key": 12}, {"key": "a\\", \\"b"}, {"nokey": 1}]}',
      '[]',
    ]) {
      await pool.query('update oxide_batch.ob_step_execution set fault_state_payload = $2::jsonb where id = $1', [
        damaged,
        payload,
      ]);
    }
    expect(kinds(await search(KEY.slice(0, 8)))).toEqual(['retryKey 1']);
  });

  it('finds an execution, its instance and a proposal by number, and a proposal by a digest prefix', async () => {
    const digest = Buffer.from(`${'9e'.repeat(4)}${'11'.repeat(28)}`, 'hex');
    const { rows } = await pool.query<{ id: string }>(
      `insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_version,
       proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
       values ('batch', $1, $2, '{}', 0, 'u', 'u', 'w', now(), 'c') returning id`,
      [String(execution.id), digest],
    );
    const proposalId = Number(rows[0]!.id);
    const byDigest = await search('9E9E9E9E11');
    expect(kinds(byDigest)).toEqual(['proposal 1']);
    expect(byDigest.groups[0]!.hits[0]).toMatchObject({
      kind: 'proposal',
      proposalId,
      match: 'digest',
      digestHex: digest.toString('hex'),
    });
    expect(kinds(await search('9e9e9e9e12'))).toEqual([]);

    const byExecution = await search(String(execution.id));
    expect(byExecution.groups.find((g) => g.kind === 'execution')?.hits).toEqual([
      {
        kind: 'execution',
        executionId: execution.id,
        instanceId: expect.any(Number),
        jobName: definition.jobName,
        status: 'STARTED',
        attempt: 1,
      },
    ]);
    const byProposal = await search(String(proposalId));
    expect(byProposal.groups.find((g) => g.kind === 'proposal')?.hits).toEqual([
      expect.objectContaining({ proposalId, match: 'id' }),
    ]);
  });

  it('lists at most 20 receipts of a prefix and says there are more, without counting them', async () => {
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       updated_at_ms)
       select 'rcpt_search_' || lpad(g::text, 2, '0'), 1, 'pending_observation', 0, 1, 1, 1
       from generate_series(1, 25) g`,
    );
    const results = await search('rcpt_search_');
    expect(kinds(results)).toEqual(['receipt 20+']);
    expect(results.groups[0]!.hits.map((h) => (h.kind === 'receipt' ? h.receiptId : ''))).toEqual(
      Array.from({ length: 20 }, (_, i) => `rcpt_search_${String(i + 1).padStart(2, '0')}`),
    );
    expect(singleDestination(results)).toBeNull();
    expect(kinds(await search('rcpt_search_07'))).toEqual(['receipt 1']);
  });

  it('finds users for an admin only', async () => {
    await pool.query(
      `insert into keel."user" (id, name, email, username, role)
       values ('u-search', 'Search', 'search@example.test', 'searcher', 'viewer')`,
    );
    expect(kinds(await search('Searcher', 'admin'))).toEqual(['user 1']);
    expect(kinds(await search('Searcher', 'viewer'))).toEqual([]);
  });

  it('refuses text the domain rules refuse', () => {
    for (const q of ['', '  ', 'a\u0000b', 'x'.repeat(1_001)])
      expect(searchQuerySchema.safeParse({ q }).success, JSON.stringify(q)).toBe(false);
    expect(searchQuerySchema.parse({ q: '  42 ' })).toEqual({ q: '42' });
  });
});
