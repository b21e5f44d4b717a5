import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../lib/config/settings';
import { demoDrivers, startDemoRuntime } from '../../lib/demo/runtime';
import { seedDemo } from '../../lib/demo/seed';
import { seededOwnerToken } from '../../lib/demo/seeded-owner';
import { freshDatabase } from '../support/database';

/**
 * The demo runtime on the seeded demo data, with its clocks sped up: the stale threshold
 * is a minute, operators recover an execution 15 s past it, support works a dead letter
 * 20 s after it lands, retries run out in a second, and the RPC outage comes 20 s in
 * and lasts 10 s. Over three minutes stale executions and dead letters must come and go
 * around a level, not climb as they did when nothing resolved them (178 -> 490 stale
 * executions in 25 minutes, 300 -> 815 dead letters in 45).
 */
const { pool, db } = await freshDatabase();
const KEY = 'cd'.repeat(32);
const RUN_MS = 180_000;
const SAMPLE_MS = 10_000;

const parsed = parseSettings({ KEEL_DEMO: '1', KEEL_CHECKPOINT_KEY: KEY, KEEL_STALE_THRESHOLD_MS: '60000' });
if (!parsed.ok) throw new Error('settings');
const settings = parsed.value;

const drivers = demoDrivers({
  batch: { fateCycle: 6 },
  settlement: {
    policy: { maxRetries: 2, initialBackoffMs: 200, backoffMultiplier: 2, backoffCapMs: 1_000 },
    outage: { firstAfterMs: 20_000, everyMs: 600_000, lastsMs: 10_000, failShare: 1 },
  },
  seeded: { finishAfterMs: [5_000, 90_000] },
  runtimeOps: { everyMs: 3_000, graceMs: 15_000, windowMs: 10 * 60_000, perRound: 50 },
  support: { everyMs: 3_000, settleMs: 20_000, windowMs: 10 * 60_000, perRound: 200 },
});

interface Sample {
  atMs: number;
  stale: number;
  /** Stale and silent for less than the operators' window: the ones they are there for. */
  recentStale: number;
  deadLetters: number;
  seededLiveStale: number;
}

const scalar = async (text: string, params: unknown[] = []) => Number((await pool.query(text, params)).rows[0].n);

async function sample(liveIds: number[]): Promise<Sample> {
  const { rows } = await pool.query(
    `select (select count(*)::int from oxide_batch.ob_job_execution
              where status in ('STARTING','STARTED','STOPPING')
              and updated_at < clock_timestamp() - interval '60 seconds') as stale,
            (select count(*)::int from oxide_batch.ob_job_execution
              where status in ('STARTING','STARTED','STOPPING')
              and updated_at < clock_timestamp() - interval '60 seconds'
                and updated_at > clock_timestamp() - interval '10 minutes') as recent_stale,
            (select count(*)::int from settle.dead_letters) as dead_letters,
            (select count(*)::int from oxide_batch.ob_job_execution
              where id = any($1) and status in ('STARTING','STARTED','STOPPING')
              and updated_at < clock_timestamp() - interval '60 seconds') as seeded_live_stale`,
    [liveIds],
  );
  const row = rows[0];
  return {
    atMs: Date.now(),
    stale: row.stale,
    recentStale: row.recent_stale,
    deadLetters: row.dead_letters,
    seededLiveStale: row.seeded_live_stale,
  };
}

describe('demo runtime: a steady state', () => {
  it(
    'holds stale executions and dead letters level, through an outage that rises and resolves',
    async () => {
      expect(await seedDemo(db, settings)).toBe(true);
      // The seeded executions still live at the start: owned by the token the runtime derives, not yet stale.
      const candidates = await pool.query(
        `select id from oxide_batch.ob_job_execution
       where status in ('STARTING','STARTED','STOPPING') and updated_at > clock_timestamp() - interval '50 seconds'`,
      );
      const live: number[] = [];
      for (const row of candidates.rows) {
        const owned = await pool.query(
          `select owner_token = $2 as owned from oxide_batch.ob_job_execution where id = $1`,
          [row.id, seededOwnerToken(Buffer.from(KEY, 'hex'), Number(row.id))],
        );
        if (owned.rows[0].owned) live.push(Number(row.id));
      }
      expect(live.length).toBeGreaterThan(5);
      const startedAt = Date.now();
      const lines: string[] = [];
      const runtime = startDemoRuntime({
        db,
        settings,
        drivers,
        log: (level, message, fields) => lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
      });
      const samples: Sample[] = [await sample(live)];
      try {
        while (Date.now() - startedAt < RUN_MS) {
          await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
          samples.push(await sample(live));
        }
      } finally {
        await runtime.stop();
      }
      const first = samples[0]!;
      const last = samples.at(-1)!;
      console.info(
        `[measure] steady state over ${RUN_MS / 1000}s: stale ${samples.map((s) => s.stale).join(' ')}; ` +
          `dead letters ${samples.map((s) => s.deadLetters).join(' ')}`,
      );

      // Executions live at seeding are carried on: none of them ever turns stale.
      for (const s of samples) expect(s.seededLiveStale).toBe(0);
      const tally = (message: string) =>
        JSON.parse(lines.find((l) => l.startsWith(`info ${message} `))!.slice(`info ${message} `.length)) as Record<
          string,
          number
        >;
      const seeded = tally('demo seeded executions stopped');
      expect(seeded.resumed).toBeGreaterThanOrEqual(live.length);
      expect((seeded.completed ?? 0) + (seeded.failed ?? 0) + (seeded.stopped ?? 0)).toBeGreaterThan(live.length / 2);

      // Owners go silent all the time (one launch in six), yet the recently stale stay few: the operators recover them.
      const ops = tally('demo runtime ops stopped');
      expect(ops.recovered).toBeGreaterThan(0);
      const secondHalf = samples.filter((s) => s.atMs - startedAt > RUN_MS / 2);
      for (const s of secondHalf) expect(s.recentStale).toBeLessThanOrEqual(12);
      expect(last.stale).toBeLessThanOrEqual(first.stale + 12);
      const recovered = await scalar(
        `select count(*)::int as n from oxide_batch.ob_operator_request where action = 'RECOVER'
         and actor_ref = 'cli:ops' and outcome_class = 'APPLIED'`,
      );
      expect(recovered).toBe(ops.recovered);
      // The runtime's CLI is not Keel: none of it is in Keel's audit log.
      expect(await scalar(`select count(*)::int as n from keel.audit_event where actor_login = 'cli:ops'`)).toBe(0);

      // The outage raised dead letters, and support brought them back down through Keel, audited under their name.
      const peak = Math.max(...samples.map((s) => s.deadLetters));
      expect(peak).toBeGreaterThan(first.deadLetters + 20);
      expect(last.deadLetters).toBeLessThan(peak);
      expect(last.deadLetters).toBeLessThanOrEqual(first.deadLetters + 40);
      const support = tally('demo support desk stopped');
      expect(support.replayed).toBeGreaterThan(20);
      expect(support.refused).toBe(0);
      const audited = await pool.query(
        `select action, count(*)::int as n from keel.audit_event
       where actor_login = 'support' and actor_role = 'support' and outcome = 'APPLIED' and reason is not null
       group by action order by action`,
      );
      expect(Object.fromEntries(audited.rows.map((r) => [r.action, r.n]))).toEqual({
        ...(support.discarded ? { 'settlement.discard': support.discarded } : {}),
        'settlement.replay': support.replayed,
      });
      expect(lines.filter((line) => /^(warn|error) /.test(line))).toEqual([]);
    },
    RUN_MS + 120_000,
  );
});
