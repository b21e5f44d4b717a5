import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createAuth } from '../../lib/auth/auth';
import { readLiveSession, sessionRules } from '../../lib/auth/live-session';
import { createUserAccount } from '../../lib/auth/users';
import { createDatabase } from '../../lib/db/client';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import { listUsers } from '../../lib/queries/users';
import { auditCsvStream } from '../../lib/server/audit-export';
import { routeConsoleToLogger } from '../../lib/observability/console-logger';
import { logger, redirectLogOutput } from '../../lib/observability/logger';
import { replayDeadLetter } from '../../lib/services/dead-letter-actions';
import { startWorkerLoop } from '../../lib/workers/worker-loop';
import { postgresCheckpointStore } from '../../lib/adapters/checkpoint-store';
import { postgresFaultStateStore } from '../../lib/simulator/adapters/fault-state-store';
import { postgresProposalRepository } from '../../lib/adapters/proposal-repository';
import { postgresRecoveryRepository } from '../../lib/adapters/recovery-repository';
import { readExecutionDetail } from '../../lib/queries/execution-detail';
import { readProposal } from '../../lib/queries/recovery';
import { listRetryKeys } from '../../lib/queries/retry-keys';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { cancelProposal, rejectProposal } from '../../lib/services/decide-proposal';
import { expireProposals, HOUSEKEEPING_ACTOR } from '../../lib/services/expire-proposals';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { requestStop } from '../../lib/services/request-stop';
import { freshDatabase } from '../support/database';
import {
  actor,
  MINUTE,
  recoveryDeps,
  seedCheckpoint,
  seedStaleExecution,
  seedStep,
  testCheckpoint,
} from '../support/recovery-fixtures';

const database = await freshDatabase();
const { db, pool } = database;
const KEY = randomBytes(32);
/** The runtime worker's token, written as the executions' owner. */
const RUNTIME_TOKEN = randomBytes(16);
/** This Keel process's token, handed to every snapshot read. */
const KEEL_TOKEN = randomBytes(16);
const deps = recoveryDeps(db, { checkpointKey: KEY, ownerToken: KEEL_TOKEN });

const encodings = (bytes: Buffer) => [
  bytes.toString('hex'),
  bytes.toString('hex').toUpperCase(),
  bytes.toString('base64'),
  bytes.toString('base64url'),
];
const SECRETS = [...encodings(RUNTIME_TOKEN), ...encodings(KEEL_TOKEN), ...encodings(KEY)];

/** Serializes anything, writing every byte string in both hex and base64 so no encoding hides a token. */
function serialize(value: unknown): string {
  return JSON.stringify(value, (_, item) => {
    if (item && typeof item === 'object' && item.type === 'Buffer' && Array.isArray(item.data)) {
      const bytes = Buffer.from(item.data);
      return { hex: bytes.toString('hex'), base64: bytes.toString('base64') };
    }
    if (item instanceof Uint8Array)
      return { hex: Buffer.from(item).toString('hex'), base64: Buffer.from(item).toString('base64') };
    return item;
  });
}

const leaks = (outputs: unknown[]) => {
  const text = outputs.map(serialize).join('\n');
  return SECRETS.filter((secret) => text.includes(secret));
};

describe('secrets never leave through a result or a stored summary', () => {
  it('the scanner finds a token when one is there (positive control)', () => {
    expect(leaks([{ nested: [Buffer.from(RUNTIME_TOKEN)] }])).not.toEqual([]);
    expect(leaks([{ key: KEY.toString('base64') }])).not.toEqual([]);
  });

  it('no service output, port read, query page, audit or proposal row carries owner tokens or the key', async () => {
    const outputs: unknown[] = [];
    const keep = <T>(value: T): T => {
      outputs.push(value);
      return value;
    };
    const operator = actor('operator');
    const approver = actor('approver');

    // Batch: propose (applied, reused, refused), confirm, reject, cancel, expire, stop.
    const stale = await seedStaleExecution(db, { ownerToken: RUNTIME_TOKEN, deliveryMode: 'at_least_once' });
    await seedStep(db, { executionId: stale.id, checkpointPayload: { offset: 1 } });
    const owned = await seedStaleExecution(db, { ownerToken: KEEL_TOKEN });
    const proposed = keep(
      await proposeRecovery(deps, operator, { target: 'batch', reason: 'owner silent', executionId: stale.id }),
    );
    keep(
      await proposeRecovery(deps, actor('admin'), { target: 'batch', reason: 'owner silent', executionId: stale.id }),
    );
    keep(await proposeRecovery(deps, operator, { target: 'batch', reason: 'owner silent', executionId: owned.id }));
    if (!proposed.ok) throw new Error(proposed.error.code);
    const proposal = proposed.value.proposal;
    const input = {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedVersion: proposal.expectedVersion,
      resultingStatus: 'FAILED' as const,
    };
    keep(await confirmTakeover(deps, approver, input));
    keep(await confirmTakeover(deps, approver, { ...input, acknowledged: true }));
    keep(await confirmTakeover(deps, actor('approver'), { ...input, acknowledged: true }));

    const other = await seedStaleExecution(db, { ownerToken: RUNTIME_TOKEN });
    const second = keep(
      await proposeRecovery(deps, operator, { target: 'batch', reason: 'owner silent', executionId: other.id }),
    );
    if (!second.ok) throw new Error(second.error.code);
    keep(await rejectProposal(deps, operator, { proposalId: second.value.proposal.id }));
    keep(await cancelProposal(deps, operator, { proposalId: second.value.proposal.id }));
    keep(await expireProposals(deps, HOUSEKEEPING_ACTOR));
    const running = await seedStaleExecution(db, { ownerToken: RUNTIME_TOKEN });
    keep(await requestStop(deps, operator, { executionId: running.id, operationId: `scan-stop-${running.id}` }));
    keep(await requestStop(deps, operator, { executionId: running.id, operationId: `scan-stop-${running.id}` }));

    // Orchestration: propose and confirm, then the store's reads.
    const checkpoint = await seedCheckpoint(
      db,
      KEY,
      testCheckpoint('orch-scan', { ownerId: 'worker-a', fencingToken: 2, expiresAt: Date.now() - MINUTE }),
    );
    const orchestration = keep(
      await proposeRecovery(deps, operator, {
        target: 'orchestration',
        reason: 'owner silent',
        executionId: checkpoint.executionId,
        successorOwner: 'worker-b',
      }),
    );
    if (!orchestration.ok) throw new Error(orchestration.error.code);
    keep(
      await confirmTakeover(deps, approver, {
        proposalId: orchestration.value.proposal.id,
        evidenceDigest: orchestration.value.proposal.evidenceDigestHex,
        expectedFencingToken: 2,
      }),
    );
    const store = postgresCheckpointStore(db, KEY);
    keep(await store.load(checkpoint.executionId));
    keep(
      await store.save({
        ...checkpoint,
        lease: { ownerId: 'worker-c', fencingToken: 9, expiresAt: Date.now() - MINUTE },
      }),
    );
    keep(await store.takeoverCandidates({ limit: 50 }));

    // Port reads and the retry-key read model.
    for (const id of [stale.id, owned.id, other.id, running.id])
      keep(await postgresRecoveryRepository(db).recoverySnapshot(id, KEEL_TOKEN));
    keep(await postgresProposalRepository(db).get(proposal.id));
    const faults = postgresFaultStateStore(db);
    const stepId = await seedStep(db, { executionId: running.id, logicalId: 'second' });
    keep(
      await faults.bind({
        stepExecutionId: stepId,
        jobExecutionId: running.id,
        retryStateLimit: 4,
        classifierRevision: 'v1',
      }),
    );
    keep(
      await faults.reserve({
        key: 'ab'.repeat(32),
        phase: 'read',
        category: 'TIMEOUT',
        ordinal: 1,
        checkpointDigest: 'cd'.repeat(32),
      }),
    );
    keep(await faults.unresolved());
    keep(await listRetryKeys(db, { limit: 50 }));
    // The pages' read models: the execution with its operator history, the proposals with their evidence.
    for (const id of [stale.id, owned.id, other.id, running.id])
      keep(await readExecutionDetail(db, id, { staleThresholdMs: 15 * MINUTE, ownerToken: KEEL_TOKEN }));
    for (const id of [proposal.id, second.value.proposal.id, orchestration.value.proposal.id])
      keep(await readProposal(db, id));

    // What Keel stored about all of it.
    keep((await pool.query('select * from keel.audit_event')).rows);
    keep((await pool.query('select * from keel.recovery_proposal')).rows);
    keep((await pool.query('select * from keel.durable_checkpoint')).rows);
    keep((await pool.query('select * from oxide_batch.ob_recovery_decision')).rows);
    keep((await pool.query('select * from oxide_batch.ob_operator_request')).rows);

    expect(outputs.length).toBeGreaterThanOrEqual(30);
    expect(outputs.filter((output) => (output as { ok?: boolean }).ok === true).length).toBeGreaterThanOrEqual(10);
    expect(leaks(outputs)).toEqual([]);
    // The runtime still holds its token where it belongs: the scan above was not vacuous.
    const { rows } = await pool.query('select owner_token from oxide_batch.ob_job_execution where id = $1', [stale.id]);
    expect(leaks([rows])).toContain(RUNTIME_TOKEN.toString('hex'));
  });
});

describe('no token or value reaches a log through a Postgres outage', () => {
  it('secrets in flight (tokens, receipts, notes, user ids, the key) never print as the database goes', async () => {
    const PORT = 3998;
    const APP = 'keel-scan-app';
    const appPool = database.newPool(10, { application_name: APP, connectionTimeoutMillis: 1_000 });
    const appDb = createDatabase(appPool);
    const auth = createAuth(appDb, { secret: 's'.repeat(64), port: PORT, signInPerMinute: 100 });
    const usernames = ['scan_viewer', 'scan_support', 'scan_admin'];
    for (const [index, username] of usernames.entries()) {
      const created = await createUserAccount(auth, {
        username,
        name: username,
        role: (['viewer', 'support', 'admin'] as const)[index]!,
        password: 'correct-horse-battery',
      });
      expect(created.ok).toBe(true);
    }
    const rules = sessionRules(await auth.$context)!;
    const sessions: { cookie: string; token: string }[] = [];
    for (const username of usernames) {
      const response = await auth.handler(
        new Request(`http://localhost:${PORT}/api/auth/sign-in/username`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: `http://localhost:${PORT}` },
          body: JSON.stringify({ username, password: 'correct-horse-battery' }),
        }),
      );
      expect(response.status).toBe(200);
      const cookie = response.headers
        .getSetCookie()
        .map((c) => c.split(';')[0]!)
        .join('; ');
      const token = decodeURIComponent(/better-auth\.session_token=([^;]+)/.exec(cookie)![1]!).split('.')[0]!;
      sessions.push({ cookie, token });
    }
    const userIds = (
      await pool.query<{ id: string }>(`select id from keel.user where username = any($1)`, [usernames])
    ).rows.map((r) => r.id);
    const receipts = Array.from({ length: 3 }, () => `rcpt-scan-${randomBytes(6).toString('hex')}`);
    const NOTE = `outage note ${randomBytes(6).toString('hex')}`;
    const executionId = (await seedStaleExecution(db, { ownerToken: RUNTIME_TOKEN })).id;
    const secrets = [...SECRETS, ...sessions.map((s) => s.token), ...receipts, NOTE, ...userIds];
    expect(sessions.every((s) => (s.token.length ?? 0) >= 16)).toBe(true);

    // Everything the logger and the console print from here on.
    const printed: string[] = [];
    const restoreOutput = redirectLogOutput({ write: (line: string) => void printed.push(line) });
    const restoreConsole = routeConsoleToLogger();
    // What reached console.error before the sanitizer: for the check below that the scan is not vacuous.
    const routedConsoleError = console.error;
    const consoleArgs: unknown[] = [];
    console.error = (...args: unknown[]) => {
      consoleArgs.push(...args);
      routedConsoleError(...args);
    };
    const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      printed.push(String(chunk));
      return (writes.out as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      printed.push(String(chunk));
      return (writes.err as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    const admin = new pg.Client({ connectionString: inject('adminUrl') });
    await admin.connect();
    const raised: unknown[] = [];
    /**
     * As the server reports a failure: the wrappers log it through
     * pino, Next.js prints an uncaught one with console.error.
     */
    const report = (error: unknown) => {
      raised.push(error);
      logger.error({ requestId: randomUUID(), error }, 'server action failed');
      console.error(error);
    };
    try {
      // In flight when the database goes: an export holding its snapshot, and slow queries carrying values.
      let exportOutcome: (outcome: string) => void = () => {};
      const exportEnded = new Promise<string>((resolve) => (exportOutcome = resolve));
      const reader = auditCsvStream(
        appPool,
        {},
        { reader: { role: 'admin' }, batchSize: 1, idleMs: 60_000, onEnd: exportOutcome },
      ).getReader();
      await reader.read();
      await reader.read();
      await new Promise<void>((resolve) => {
        const check = async () =>
          (
            await pool.query(
              `select count(*)::int as n from pg_stat_activity where application_name = $1
               and state = 'idle in transaction'`,
              [APP],
            )
          ).rows[0].n > 0
            ? resolve()
            : setImmediate(check);
        void check();
      });
      const slow = receipts.map((receipt) =>
        appDb.execute(sql`select pg_sleep(30), ${receipt}::text, ${NOTE}::text`).catch(report),
      );
      const worker = startWorkerLoop({
        name: 'scan worker',
        errorDelayMs: 50,
        log: (level, message, fields) => logger[level](fields ?? {}, message),
        step: async () => {
          await appDb.execute(sql`select ${receipts[0]}::text, ${userIds[0]}::text`);
          return 50;
        },
      });
      await new Promise<void>((resolve) => {
        const check = async () =>
          (
            await pool.query(
              `select count(*)::int as n from pg_stat_activity where application_name = $1 and state = 'active'
               and query like '%pg_sleep%'`,
              [APP],
            )
          ).rows[0].n === receipts.length
            ? resolve()
            : setImmediate(check);
        void check();
      });

      // The outage: no new connections to the database, and the app's sessions killed.
      await admin.query(`alter database ${database.name} with allow_connections false`);
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = $2`,
        [database.name, APP],
      );
      await Promise.all(slow);
      // The download reads on: its next batch finds its connection gone.
      await reader.read().catch(() => undefined);
      await reader.read().catch(() => undefined);
      expect(await exportEnded).toBe('failed');

      // Requests with live sessions and values while it is down.
      for (const { cookie, token } of sessions) {
        // The session lookup as the server makes it: its failure quotes the token in its parameters.
        await appDb.execute(sql`select user_id from keel.session where token = ${token}`).catch(report);
        // The direct session read every page and API request makes first (lib/auth/live-session.ts).
        await readLiveSession(appPool, rules, cookie).catch(report);
        await auth.api.getSession({ headers: new Headers({ cookie }) }).catch(report);
        await auth
          .handler(new Request(`http://localhost:${PORT}/api/auth/get-session`, { headers: { cookie } }))
          .catch(report);
      }
      const support = { id: userIds[1]!, login: 'scan_support', name: 'scan_support', role: 'support' as const };
      for (const receipt of receipts) {
        await replayDeadLetter({ unitOfWork: postgresSettlementUnitOfWork(appDb) }, support, {
          receiptId: receipt,
          note: NOTE,
          operationId: randomUUID(),
        }).catch(report);
      }
      await listUsers(appDb, {}, userIds[0]!).catch(report);
      await postgresRecoveryRepository(appDb).recoverySnapshot(executionId, KEEL_TOKEN).catch(report);
      await postgresCheckpointStore(appDb, KEY).load(`orch-${receipts[0]}`).catch(report);
      await worker.stop();
    } finally {
      await admin.query(`alter database ${database.name} with allow_connections true`);
      await admin.end();
      process.stdout.write = writes.out;
      process.stderr.write = writes.err;
      console.error = routedConsoleError;
      restoreConsole();
      restoreOutput();
    }

    // After the outage the same session works again.
    const back = await auth.api.getSession({ headers: new Headers({ cookie: sessions[0]!.cookie }) });
    expect(back?.user.id).toBe(userIds[0]);

    // Not vacuous: the failures were real, quoted the values, and were logged.
    const raw = [...raised, ...consoleArgs]
      .map((e) => (e instanceof Error ? `${e.message} ${e.stack}` : String(e)))
      .join('\n');
    expect(raised.length).toBeGreaterThanOrEqual(10);
    expect(raw).toContain(receipts[1]);
    expect(raw).toContain(NOTE);
    expect(sessions.some((session) => raw.includes(session.token))).toBe(true);
    const text = printed.join('');
    expect(printed.length).toBeGreaterThanOrEqual(10);
    expect(text).toMatch(/"code":"(57P01|55000)"/);
    expect(text).toContain('audit export failed');
    expect(text).toContain('scan worker step failed');
    expect(secrets.filter((secret) => text.includes(secret))).toEqual([]);
  });
});
