import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { postgresBatchExecutionCommands } from '../../adapters/batch-execution-commands';
import { postgresRecoveryRepository } from '../../adapters/recovery-repository';
import type { DbOrTx } from '../../db/client';
import { ACTIVE_STATUSES, isUnresolved } from '../../domain/batch-status';
import { recoverRequestDigestHex, snapshotEvidenceDigestHex } from '../../domain/recovery';
import { startWorkerLoop } from '../../workers/worker-loop';
import { nextFailureId } from './batch-plan';
import type { DemoDriver } from './driver';

export interface RuntimeOpsOptions {
  /** How often the runtime's operator looks. */
  everyMs: number;
  /** How long past the stale threshold an execution stays stale before the operator recovers it. */
  graceMs: number;
  /** Executions silent longer than this are left alone: old cases for Keel's guarded takeover. */
  windowMs: number;
  /** At most this many per look, oldest first. */
  perRound: number;
}

export const DEFAULT_RUNTIME_OPS: RuntimeOpsOptions = {
  everyMs: 60_000,
  graceMs: 30 * 60_000,
  windowMs: 6 * 3_600_000,
  perRound: 5,
};

/** The runtime's own operator, as the seed's operator history names them. */
const ACTOR = 'cli:ops';
const REASON_CODE = 'OWNER_SILENT';

/**
 * Recovers one stale execution as the runtime's CLI does (`oxide-batch recover --actor
 * cli:ops`): FAILED (STALE_RECOVERED) with a recovery decision and an APPLIED RECOVER
 * request, bound to the evidence read under the row lock. Not Keel's path, so Keel's
 * audit log never sees it; the console shows it in the operator history. An unknown
 * commit is left for a person to decide through Keel.
 */
async function recoverAsRuntimeCli(db: DbOrTx, executionId: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    const commands = postgresBatchExecutionCommands(tx);
    if (!(await commands.lockExecution(executionId))) return false;
    // The CLI is not the owner: any token that is not the owner's reads the evidence.
    const snapshot = await postgresRecoveryRepository(tx).recoverySnapshot(executionId, randomBytes(16));
    if (!snapshot.ok || !isUnresolved(snapshot.value.status) || snapshot.value.markers.unknownCommit) return false;
    const evidence = snapshotEvidenceDigestHex(snapshot.value);
    if (!evidence.ok) return false;
    const failure = { category: 'STALE_RECOVERED' as const, id: nextFailureId() };
    const request = recoverRequestDigestHex({
      executionId,
      observedVersion: snapshot.value.version,
      reasonCode: REASON_CODE,
      evidenceDigest: evidence.value,
      unknownCommit: false,
      resultingStatus: 'FAILED',
      failure,
    });
    if (!request.ok) return false;
    const applied = await commands.applyRecoveryDecision({
      executionId,
      observedVersion: snapshot.value.version,
      priorStatus: snapshot.value.status,
      resultingStatus: 'FAILED',
      failure,
      reasonCode: REASON_CODE,
      operatorReference: `${ACTOR}:recover-${executionId}`,
      evidenceDigestHex: evidence.value,
      operationId: `recover-${executionId}-${snapshot.value.version}`,
      actorRef: ACTOR,
      requestDigestHex: request.value,
    });
    return applied.ok;
  });
}

/**
 * The runtime's operations team, outside Keel: once an execution has been stale for
 * `graceMs` beyond the threshold (its owner is gone for good), they recover it with the
 * runtime's own CLI, a few at a time. So stale executions come and go as owners go
 * silent, instead of piling up for as long as the demo runs. Executions silent for
 * longer than `windowMs` (the seed's old cases) stay for Keel's guarded takeover.
 */
export function runtimeOpsDriver(overrides: Partial<RuntimeOpsOptions> = {}): DemoDriver {
  const options = { ...DEFAULT_RUNTIME_OPS, ...overrides };
  return {
    name: 'runtime-ops',
    start({ db, settings, log }) {
      let recovered = 0;
      const loop = startWorkerLoop({
        name: 'demo runtime ops',
        log,
        errorDelayMs: 5_000,
        async step() {
          const oldest = settings.staleThresholdMs + options.graceMs;
          const { rows } = await db.execute<{ id: string }>(sql`
            select id from oxide_batch.ob_job_execution
            where status in (${sql.join(
              ACTIVE_STATUSES.map((s) => sql`${s}`),
              sql`, `,
            )})
              and updated_at < clock_timestamp() - make_interval(secs => ${oldest / 1000})
              and updated_at > clock_timestamp() - make_interval(secs => ${options.windowMs / 1000})
            order by updated_at limit ${options.perRound}`);
          for (const row of rows) if (await recoverAsRuntimeCli(db, Number(row.id))) recovered += 1;
          return options.everyMs;
        },
      });
      return {
        async stop() {
          await loop.stop();
          log('info', 'demo runtime ops stopped', { recovered });
        },
      };
    },
  };
}
