import { afterAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../../lib/demo/seed';
import { parseSettings } from '../../lib/config/settings';
import { liveEvents } from '../../lib/server/live-events';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { freshDatabase } from '../support/database';

function nextTopic(events: ReturnType<typeof liveEvents>, topic: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no ${topic} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = events.subscribe((received) => {
      if (received !== topic) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(performance.now() - started);
    });
  });
}

describe('live events', () => {
  let stop = () => {};
  afterAll(() => stop());

  it('reports writes to Keel tables (NOTIFY) and runtime executions (polling) within 2 seconds', async () => {
    const { pool, db, url } = await freshDatabase();
    const settings = parseSettings({ DATABASE_URL: url, KEEL_CHECKPOINT_KEY: 'ab'.repeat(32), KEEL_DEMO: '1' });
    if (!settings.ok) throw new Error('settings');
    await seedDemo(db, settings.value);
    const events = liveEvents(url);
    stop = events.subscribe(() => {});
    await events.ready(); // listener connected and the polled baselines taken

    const audit = nextTopic(events, 'audit', 2_000);
    await pool.query(
      `insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, outcome)
       values ('t', 'admin', 'test', 'x', '1', 'APPLIED')`,
    );
    expect(await audit).toBeLessThan(2_000);

    const runtime = nextTopic(events, 'executions', 2_000);
    await pool.query(
      `update oxide_batch.ob_job_execution set updated_at = clock_timestamp(), version = version + 1
       where id = (select min(id) from oxide_batch.ob_job_execution where status = 'STARTED')`,
    );
    expect(await runtime).toBeLessThan(2_000);

    const attempts = nextTopic(events, 'settlements', 2_000);
    await pool.query(
      `insert into keel.settlement_event (receipt_id, kind, attempt, at_ms) values ('r-live', 'finished', 1, 1)`,
    );
    expect(await attempts).toBeLessThan(2_000);

    // A fresh claim writes no history event; its lease grant moves the queue's mark.
    const { rows: free } = await pool.query(
      `select receipt_id, (select max(id) from keel.settlement_event)::int as last_event from settle.attempts
       where lease_owner is null and next_visible_at_ms <= $1 limit 1`,
      [Date.now()],
    );
    const claim = nextTopic(events, 'settlements', 2_000);
    const claimed = await postgresSettlementStore(db).claimReceipt(free[0].receipt_id, 'live-test', Date.now(), 60_000);
    expect(claimed.ok && claimed.value?.receiptId).toBe(free[0].receipt_id);
    expect(await claim).toBeLessThan(2_000);
    const { rows: after } = await pool.query('select max(id)::int as last_event from keel.settlement_event');
    expect(after[0].last_event).toBe(free[0].last_event);

    const queue = nextTopic(events, 'settlements', 2_000);
    await pool.query(
      `delete from settle.dead_letters where receipt_id = (select min(receipt_id) from settle.dead_letters)`,
    );
    expect(await queue).toBeLessThan(2_000);

    // Pages come and go: the listener stops with the last subscriber (often mid-poll) and
    // starts with the next; a stopped connection's late failure must not silence its successor.
    stop();
    for (let i = 0; i < 6; i += 1) {
      const off = events.subscribe(() => {});
      await events.ready();
      await new Promise((r) => setTimeout(r, 150 + i * 90));
      off();
    }
    stop = events.subscribe(() => {});
    await events.ready();
    const afterChurn = nextTopic(events, 'executions', 2_000);
    await pool.query(
      `update oxide_batch.ob_job_execution set updated_at = clock_timestamp(), version = version + 1
       where id = (select max(id) from oxide_batch.ob_job_execution where status = 'COMPLETED')`,
    );
    expect(await afterChurn).toBeLessThan(2_000);
  });
});
