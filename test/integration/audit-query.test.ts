import { beforeAll, describe, expect, it } from 'vitest';
import { countAuditEvents, listAuditEvents, parseAuditCursor, streamAuditEvents, type AuditEventView } from '../../lib/queries/audit';
import type { AuditFilters } from '../../lib/domain/audit-filters';
import { auditFiltersSchema } from '../../lib/domain/audit-filters';
import { encodeCursor } from '../../lib/domain/cursor';
import { freshDatabase, type TestDatabase } from '../support/database';

/**
 * 240 varied events, with deliberate ties: groups of three share one timestamp, and
 * neighbouring groups are one microsecond apart (inside the same millisecond), so a
 * cursor that lost microseconds or ignored the id would skip or repeat rows.
 */
const SEED = `
  insert into keel.audit_event (at, actor_id, actor_login, actor_role, action, target_kind, target_id, reason, outcome, code, digest)
  select timestamptz '2026-11-01 12:00:00.000000+00' + ((i / 3) * interval '1 microsecond') + ((i / 30) * interval '1 second'),
         null,
         (array['alice', 'bob', 'carol'])[1 + i % 3],
         (array['admin', 'support', 'approver'])[1 + i % 3],
         (array['user.create', 'settlement.replay', 'recovery.confirm', 'user.disable'])[1 + i % 4],
         (array['user', 'settlement', 'batch'])[1 + i % 3],
         'target-' || (i % 7),
         case when i % 11 = 0 then '=cmd|'' /C calc''!A0' else null end,
         case when i % 5 = 0 then 'REFUSED' else 'APPLIED' end,
         case when i % 5 = 0 then 'LEASE_CONFLICT' else null end,
         md5(i::text) || md5((i + 1)::text)
  from generate_series(1, 240) as i`;

describe('audit read model', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await freshDatabase();
    await database.pool.query(SEED);
  });

  /** What the page must show, straight from SQL: matching ids in (at, id) descending order. */
  async function expectedIds(where = 'true', params: unknown[] = []): Promise<number[]> {
    const { rows } = await database.pool.query(`select id from keel.audit_event where ${where} order by at desc, id desc`, params);
    return rows.map((r) => Number(r.id));
  }

  async function walk(filters: AuditFilters, pageSize: number): Promise<{ ids: number[]; pages: Awaited<ReturnType<typeof listAuditEvents>>[] }> {
    const pages = [];
    let cursor: ReturnType<typeof parseAuditCursor> = null;
    for (let i = 0; i < 1_000; i += 1) {
      const page = await listAuditEvents(database.db, filters, cursor === 'invalid' ? null : cursor, pageSize);
      pages.push(page);
      if (!page.nextCursor) break;
      cursor = parseAuditCursor(page.nextCursor);
    }
    return { ids: pages.flatMap((p) => p.rows.map((r) => r.id)), pages };
  }

  it('a time range keeps events at or after its start and before its end, in the list, the count and the export stream', async () => {
    const filters = auditFiltersSchema.parse({ from: '2026-11-01T12:00:02Z', to: '2026-11-01T12:00:05Z' });
    const expected = await expectedIds(`at >= $1 and at < $2`, ['2026-11-01T12:00:02Z', '2026-11-01T12:00:05Z']);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(240);
    const { ids } = await walk(filters, 13);
    expect(ids).toEqual(expected);
    expect((await countAuditEvents(database.db, filters)).value).toBe(expected.length);
    const streamed: number[] = [];
    for await (const batch of streamAuditEvents(database.pool, filters, 17)) streamed.push(...batch.map((r) => r.id));
    expect(streamed).toEqual(expected);
  });

  it('pages through every event exactly once, newest first, across ties within a millisecond', async () => {
    const { ids, pages } = await walk({}, 7);
    expect(ids).toEqual(await expectedIds());
    expect(ids).toHaveLength(240);
    expect(pages[0]!.prevCursor).toBeNull();
    expect(pages.at(-1)!.nextCursor).toBeNull();
    expect(pages[1]!.prevCursor).not.toBeNull();
    expect(pages[0]!.count).toEqual({ value: 240, capped: false });
    expect(pages[0]!.rows[0]!.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  it('goes back to newer pages with the previous cursor and returns the same rows', async () => {
    const { pages } = await walk({}, 9);
    for (let i = 1; i < pages.length; i += 1) {
      const back = parseAuditCursor(pages[i]!.prevCursor!);
      expect(back).not.toBe('invalid');
      const newer = await listAuditEvents(database.db, {}, back === 'invalid' ? null : back, 9);
      expect(newer.rows.map((r) => r.id)).toEqual(pages[i - 1]!.rows.map((r) => r.id));
      expect(newer.prevCursor === null).toBe(i === 1);
      expect(newer.nextCursor).not.toBeNull();
    }
  });

  it('filters by actor, action, target kind and id, and outcome, alone and together', async () => {
    const cases: [AuditFilters, string, unknown[]][] = [
      [{ actor: 'bob' }, 'actor_login = $1', ['bob']],
      [{ action: 'user.disable' }, 'action = $1', ['user.disable']],
      [{ targetKind: 'settlement' }, 'target_kind = $1', ['settlement']],
      [{ targetKind: 'batch', targetId: 'target-3' }, 'target_kind = $1 and target_id = $2', ['batch', 'target-3']],
      [{ outcome: 'REFUSED' }, 'outcome = $1', ['REFUSED']],
      [{ actor: 'alice', outcome: 'APPLIED', action: 'recovery.confirm' }, 'actor_login = $1 and outcome = $2 and action = $3', ['alice', 'APPLIED', 'recovery.confirm']],
      [{ actor: 'nobody' }, 'actor_login = $1', ['nobody']],
    ];
    for (const [filters, where, params] of cases) {
      const expected = await expectedIds(where, params);
      const { ids, pages } = await walk(filters, 13);
      expect(ids, JSON.stringify(filters)).toEqual(expected);
      expect(pages[0]!.count).toEqual({ value: expected.length, capped: false });
    }
  });

  it('refuses cursors it did not make', () => {
    expect(parseAuditCursor(undefined)).toBeNull();
    expect(parseAuditCursor('not-a-cursor')).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['older', '2026-11-01 12:00', 5]))).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['sideways', '2026-11-01T12:00:00.000000Z', 5]))).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['older', "2026-11-01T12:00:00.000000Z'; drop table x", 5]))).toBe('invalid');
    expect(parseAuditCursor(encodeCursor(['newer', '2026-11-01T12:00:00.000001Z', 5]))).toEqual({ direction: 'newer', at: '2026-11-01T12:00:00.000001Z', id: 5 });
  });

  it('the filter schema turns empty fields into "any" and wants a kind with a target id', () => {
    expect(auditFiltersSchema.parse({ actor: ' bob ', action: '', outcome: '' })).toEqual({ actor: 'bob', action: undefined, outcome: undefined });
    expect(auditFiltersSchema.safeParse({ targetId: 'target-1' }).success).toBe(false);
    expect(auditFiltersSchema.safeParse({ outcome: 'MAYBE' }).success).toBe(false);
  });

  it('streams every matching row in order from one snapshot, in batches', async () => {
    const filters: AuditFilters = { outcome: 'APPLIED' };
    const expected = await expectedIds('outcome = $1', ['APPLIED']);
    const streamed: AuditEventView[] = [];
    let batches = 0;
    for await (const batch of streamAuditEvents(database.pool, filters, 25)) {
      batches += 1;
      // A row written mid-download is not in this snapshot.
      if (batches === 2) {
        await database.pool.query(
          `insert into keel.audit_event (at, actor_login, actor_role, action, target_kind, target_id, outcome) values ('2026-10-01', 'late', 'admin', 'user.create', 'user', 'x', 'APPLIED')`,
        );
      }
      streamed.push(...batch);
    }
    expect(batches).toBe(Math.ceil(expected.length / 25));
    expect(streamed.map((r) => r.id)).toEqual(expected);
    expect(streamed.some((r) => r.actorLogin === 'late')).toBe(false);
    expect(await countAuditEvents(database.db, { actor: 'late' })).toEqual({ value: 1, capped: false });
  });

  it('releases its connection when a download stops early', async () => {
    const pool = database.newPool(1);
    const iterator = streamAuditEvents(pool, {}, 10);
    expect((await iterator.next()).value).toHaveLength(10);
    await iterator.return(undefined);
    // With a pool of one, this would wait forever if the connection were still held.
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('counts exactly up to 10,000 and then says 10,000+', async () => {
    await database.pool.query(`
      insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, outcome)
      select 'bulk', 'support', 'settlement.replay', 'settlement', 'r' || i, 'APPLIED' from generate_series(1, 10001) i`);
    expect(await countAuditEvents(database.db, { actor: 'bulk' })).toEqual({ value: 10_000, capped: true });
    expect(await countAuditEvents(database.db, { actor: 'bulk', targetKind: 'settlement', targetId: 'r17' })).toEqual({ value: 1, capped: false });
    const page = await listAuditEvents(database.db, { actor: 'bulk' }, null);
    expect(page.rows).toHaveLength(50);
    expect(page.count.capped).toBe(true);
  });
});
