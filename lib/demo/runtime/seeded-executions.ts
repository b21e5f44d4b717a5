import { sql } from 'drizzle-orm';
import { postgresBatchRuntime } from '../../simulator/adapters/batch-runtime';
import type { DbOrTx } from '../../db/client';
import { ACTIVE_STATUSES, isActive, type BatchStatus } from '../../domain/batch-status';
import type { BatchRuntime, OwnedExecution, OwnedStep, StatusMove } from '../../simulator/ports/batch-runtime';
import { startWorkerLoop } from '../../workers/worker-loop';
import { seededOwnerToken } from '../seeded-owner';
import { between, nextFailureId } from './batch-plan';
import type { DemoDriver } from './driver';

export interface SeededExecutionsOptions {
  /** How long a resumed execution runs on before it finishes. */
  finishAfterMs: [number, number];
  /** Between two heartbeats of one execution; held under a third of the stale threshold. */
  heartbeatMs: [number, number];
  /** How often the loop looks for due work. */
  tickMs: number;
}

export const DEFAULT_SEEDED_EXECUTIONS: SeededExecutionsOptions = {
  finishAfterMs: [60_000, 8 * 60_000],
  heartbeatMs: [30_000, 90_000],
  tickMs: 1_000,
};

interface Resumed {
  execution: OwnedExecution;
  /** Its open steps (STARTED or STOPPING), and whether one still holds unresolved retry keys. */
  steps: OwnedStep[];
  retainsKeys: boolean;
  finishAt: number;
  beatAt: number;
}

interface Tally {
  resumed: number;
  completed: number;
  failed: number;
  stopped: number;
  heartbeats: number;
  lost: number;
}

type Row = Record<string, unknown>;

/**
 * The seeded executions that were live at seeding and are still owned by the process the
 * demo plays: active, not yet stale, and answering to the token it derives. A runtime
 * coming back reads its own rows the same way before it carries on.
 */
async function resumable(db: DbOrTx, runtime: BatchRuntime, key: Buffer, staleThresholdMs: number): Promise<Resumed[]> {
  const { rows } = await db.execute<Row>(sql`
    select id from oxide_batch.ob_job_execution
    where status in (${sql.join(
      ACTIVE_STATUSES.map((s) => sql`${s}`),
      sql`, `,
    )}) and owner_token is not null
      and updated_at > clock_timestamp() - make_interval(secs => ${staleThresholdMs / 1000})
    order by id`);
  const resumed: Resumed[] = [];
  for (const row of rows) {
    const executionId = Number(row.id);
    const ownerToken = seededOwnerToken(key, executionId);
    const seen = await runtime.observeExecution(executionId, ownerToken);
    if (!seen.ok || !seen.value || seen.value.owner !== 'CURRENT_PROCESS' || !isActive(seen.value.status)) continue;
    const steps = await db.execute<Row>(sql`
      select id, version, status, coalesce(jsonb_array_length(fault_state_payload -> 'entries'), 0) > 0 as retains_keys
      from oxide_batch.ob_step_execution
      where job_execution_id = ${executionId} and status in ('STARTED', 'STOPPING')`);
    resumed.push({
      execution: {
        executionId,
        version: seen.value.version,
        status: seen.value.status,
        ownerToken,
        stopRequested: seen.value.stopRequested,
      },
      steps: steps.rows.map((s) => ({
        stepExecutionId: Number(s.id),
        jobExecutionId: executionId,
        version: Number(s.version),
        status: s.status as BatchStatus,
      })),
      retainsKeys: steps.rows.some((s) => s.retains_keys === true),
      finishAt: 0,
      beatAt: 0,
    });
  }
  return resumed;
}

/**
 * The demo runtime as the owner of the executions that were running when the demo data
 * was seeded: it carries them on (heartbeats) and finishes each within minutes, as the
 * workers that started them would. Without it those executions, seeded a few minutes
 * fresh, would all go stale together a quarter of an hour after the start. A stop request
 * is honoured (STOPPED); a step still holding unresolved retry keys fails the execution;
 * the rest complete. Seeded stale executions are left alone: their owners are gone.
 */
export function seededExecutionsDriver(overrides: Partial<SeededExecutionsOptions> = {}): DemoDriver {
  const options = { ...DEFAULT_SEEDED_EXECUTIONS, ...overrides };
  return {
    name: 'seeded',
    start({ db, settings, log }) {
      const key = settings.checkpointKey;
      const runtime = postgresBatchRuntime(db);
      const tally: Tally = { resumed: 0, completed: 0, failed: 0, stopped: 0, heartbeats: 0, lost: 0 };
      // A heartbeat well inside the threshold, however short a test makes it.
      const beatRange: [number, number] = [
        Math.min(options.heartbeatMs[0], Math.floor(settings.staleThresholdMs / 4)),
        Math.min(options.heartbeatMs[1], Math.floor(settings.staleThresholdMs / 3)),
      ];
      let resumed: Resumed[] | null = null;

      const write = async (item: Resumed, move: StatusMove | 'heartbeat'): Promise<boolean> => {
        const result =
          move === 'heartbeat'
            ? await runtime.heartbeat(item.execution)
            : await runtime.moveExecution(item.execution, move);
        if (result.ok) {
          item.execution = result.value;
          return true;
        }
        if (result.error.kind === 'Unavailable') return false;
        // Moved by someone else: a stop request is honoured, anything else (a takeover) means it is no longer ours.
        const seen = await runtime.observeExecution(item.execution.executionId, item.execution.ownerToken);
        if (seen.ok && seen.value && seen.value.owner === 'CURRENT_PROCESS' && isActive(seen.value.status)) {
          item.execution = {
            ...item.execution,
            version: seen.value.version,
            status: seen.value.status,
            stopRequested: seen.value.stopRequested,
          };
          return false;
        }
        tally.lost += 1;
        item.finishAt = -1;
        return false;
      };

      const moveSteps = async (item: Resumed, move: StatusMove): Promise<boolean> => {
        for (const [index, step] of item.steps.entries()) {
          const moved = await runtime.moveStep(step, move);
          if (!moved.ok) return false;
          item.steps[index] = moved.value;
        }
        item.steps = [];
        return true;
      };

      /** One action towards the end: steps first, then the execution. True once it has ended. */
      const finish = async (item: Resumed): Promise<boolean> => {
        const { status, stopRequested } = item.execution;
        if (stopRequested || status === 'STOPPING') {
          if (!(await moveSteps(item, { to: 'STOPPED' }))) return false;
          // Through STOPPING, so the console sees the request honoured; the next tick ends it.
          if (status === 'STARTING' || status === 'STARTED') {
            await write(item, { to: 'STOPPING' });
            return false;
          }
          if (!(await write(item, { to: 'STOPPED' }))) return false;
          tally.stopped += 1;
          return true;
        }
        if (status === 'STARTING') {
          await write(item, { to: 'STARTED' });
          return false;
        }
        if (item.retainsKeys) {
          const failure = { category: 'TRANSIENT_INFRASTRUCTURE' as const, id: nextFailureId() };
          if (!(await moveSteps(item, { to: 'FAILED', failure }))) return false;
          if (!(await write(item, { to: 'FAILED', failure }))) return false;
          tally.failed += 1;
          return true;
        }
        if (!(await moveSteps(item, { to: 'COMPLETED' }))) return false;
        if (!(await write(item, { to: 'COMPLETED' }))) return false;
        tally.completed += 1;
        return true;
      };

      const loop = startWorkerLoop({
        name: 'demo seeded executions',
        log,
        errorDelayMs: 5_000,
        async step() {
          if (!key) return 60_000;
          const now = Date.now();
          if (resumed === null) {
            resumed = await resumable(db, runtime, key, settings.staleThresholdMs);
            for (const item of resumed) {
              item.finishAt = now + between(options.finishAfterMs);
              item.beatAt = now + between([0, beatRange[1]]);
            }
            tally.resumed = resumed.length;
            log('info', 'demo seeded executions resumed', { executions: resumed.length });
          }
          for (const item of resumed) {
            if (item.finishAt < 0) continue;
            if (now >= item.finishAt || item.execution.stopRequested) {
              if (await finish(item)) item.finishAt = -1;
            } else if (now >= item.beatAt) {
              if (await write(item, 'heartbeat')) tally.heartbeats += 1;
              item.beatAt = now + between(beatRange);
            }
          }
          resumed = resumed.filter((item) => item.finishAt >= 0);
          return options.tickMs;
        },
      });
      return {
        async stop() {
          await loop.stop();
          if (key) log('info', 'demo seeded executions stopped', { ...tally });
        },
      };
    },
  };
}
