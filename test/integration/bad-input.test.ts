import { describe, expect, it } from 'vitest';
import { deadLetterActionSchema } from '../../app/actions/settlement-schemas';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import type { Actor } from '../../lib/domain/actor';
import { mapOk } from '../../lib/domain/result';
import { deadLetterCanonicalJson, failureDetailSha256Hex } from '../../lib/domain/settlement';
import { action, type ActionDeps } from '../../lib/server/action';
import { replayDeadLetter } from '../../lib/services/dead-letter-actions';
import { freshDatabase } from '../support/database';

/**
 * Issue 9 item 6: a NUL byte in a note used to reach PostgreSQL and come back as
 * INTERNAL, losing the refusal's audit row. Through action() (the real wrapper, with
 * its session and audit log bound to this database) it is INVALID_INPUT, audited with
 * the request id, and nothing else changes.
 */
const { pool, db } = await freshDatabase();
const settlements = { unitOfWork: postgresSettlementUnitOfWork(db) };
const support: Actor = { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' };
const deps = (actor: Actor | null): ActionDeps => ({
  currentActor: async () => actor,
  auditLog: () => postgresAuditLog(db),
  fenceWrite: async () => {},
});

const replay = (actor: Actor | null) =>
  action(
    deadLetterActionSchema,
    'settlement.replay',
    async (who, input) => mapOk(await replayDeadLetter(settlements, who, input), (r) => r.receiptId),
    { deps: deps(actor) },
  );

async function deadLetter(receiptId: string) {
  const json = deadLetterCanonicalJson({
    receiptId,
    finalizedAt: 11,
    attempts: 6,
    reasonCode: 'rpc',
    detailSha256Hex: failureDetailSha256Hex('x'),
  });
  if (!json.ok) throw new Error(json.error.detail);
  await pool.query('insert into settle.dead_letters values ($1, 11, 6, $2, $3, 1700000000000)', [
    receiptId,
    'rpc',
    json.value,
  ]);
}

/** Every row a replay could touch, so "no other change" is checked, not assumed. */
async function snapshot() {
  const rows = async (text: string) => (await pool.query(text)).rows;
  return {
    deadLetters: await rows('select receipt_id, attempts from settle.dead_letters order by receipt_id'),
    attempts: await rows('select receipt_id, row_version from settle.attempts order by receipt_id'),
    replays: await rows('select operation_id from keel.settlement_replay order by operation_id'),
    events: await rows('select id from keel.settlement_event order by id'),
  };
}

const auditRows = async (afterId: number) =>
  (
    await pool.query(
      `select id, actor_login, action, target_kind, target_id, reason, outcome, code, request_id from keel.audit_event
       where id > $1 order by id`,
      [afterId],
    )
  ).rows;
const lastAuditId = async () =>
  Number((await pool.query('select coalesce(max(id), 0)::int as id from keel.audit_event')).rows[0].id);

describe('bad input through action()', () => {
  it('a NUL byte in a note is INVALID_INPUT with its audit row, free of the bytes; nothing else changes', async () => {
    await deadLetter('r-nul');
    const before = await snapshot();
    const since = await lastAuditId();
    const result = await replay(support)({ receiptId: 'r-nul', note: 'ledger\u0000back', operationId: 'op-nul' });
    expect(result).toMatchObject({
      ok: false,
      code: 'INVALID_INPUT',
      fieldErrors: { note: [expect.stringContaining('Control characters')] },
    });
    expect(await snapshot()).toEqual(before);
    const rows = await auditRows(since);
    expect(rows).toEqual([
      {
        id: expect.any(Number),
        actor_login: 'support',
        action: 'settlement.replay',
        target_kind: 'action',
        target_id: 'settlement.replay',
        reason: 'Invalid input: note.',
        outcome: 'REFUSED',
        code: 'INVALID_INPUT',
        request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);
    expect(JSON.stringify(rows)).not.toContain('\\u0000');
  });

  it('a lone surrogate in the receipt id and a NUL in an unknown field are refused the same way', async () => {
    const before = await snapshot();
    const since = await lastAuditId();
    const surrogate = await replay(support)({ receiptId: 'r-\uD800', note: 'why', operationId: 'op-s' });
    expect(surrogate).toMatchObject({
      ok: false,
      code: 'INVALID_INPUT',
      fieldErrors: { receiptId: expect.any(Array) },
    });
    const extra = await replay(support)({
      receiptId: 'r-nul',
      note: 'why',
      operationId: 'op-x',
      extra: 'a\u0000',
    } as never);
    expect(extra).toMatchObject({ ok: false, code: 'INVALID_INPUT', fieldErrors: { extra: expect.any(Array) } });
    expect(await snapshot()).toEqual(before);
    const rows = await auditRows(since);
    expect(rows.map((r) => [r.code, r.reason])).toEqual([
      ['INVALID_INPUT', 'Invalid input: receiptId.'],
      ['INVALID_INPUT', 'Invalid input: extra.'],
    ]);
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(2);
  });

  it('the same request id is on the refusal or on every event the handler writes', async () => {
    await deadLetter('r-ok');
    const since = await lastAuditId();
    const result = await replay(support)({ receiptId: 'r-ok', note: 'line one\nline two\tok', operationId: 'op-ok' });
    expect(result).toMatchObject({ ok: true, value: 'r-ok' });
    const rows = await auditRows(since);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: 'settlement.replay',
      outcome: 'APPLIED',
      reason: 'line one\nline two\tok',
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('a role without the permission is refused before the input is parsed, audited with its request id', async () => {
    const viewer: Actor = { id: 'u-viewer', login: 'viewer', name: 'Vera Viewer', role: 'viewer' };
    const since = await lastAuditId();
    const result = await replay(viewer)({ receiptId: 'r-ok', note: 'a\u0000', operationId: 'op-v' });
    expect(result).toMatchObject({ ok: false, code: 'FORBIDDEN' });
    const rows = await auditRows(since);
    expect(rows).toMatchObject([{ code: 'FORBIDDEN', actor_login: 'viewer', request_id: expect.any(String) }]);
  });

  it('without a session nothing is parsed or written', async () => {
    const since = await lastAuditId();
    expect(await replay(null)({ receiptId: 'r-ok', note: 'a\u0000', operationId: 'op-n' })).toMatchObject({
      ok: false,
      code: 'UNAUTHENTICATED',
    });
    expect(await auditRows(since)).toEqual([]);
  });

  it('every audit row written in this file carries a request id', async () => {
    const missing = await pool.query('select count(*)::int as n from keel.audit_event where request_id is null');
    expect(missing.rows[0].n).toBe(0);
    expect(await lastAuditId()).toBeGreaterThan(0);
  });
});
