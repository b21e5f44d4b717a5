import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { postgresSettlementUnitOfWork } from '../../adapters/settlement-replay';
import type { DbOrTx } from '../../db/client';
import type { Actor } from '../../domain/actor';
import { isRetryableFailureCode } from '../../domain/settlement-vocabulary';
import { discardDeadLetter, replayDeadLetter } from '../../services/dead-letter-actions';
import { startWorkerLoop } from '../../workers/worker-loop';
import type { DemoDriver } from './driver';

export interface SupportDeskOptions {
  /** How often support looks at the dead letters. */
  everyMs: number;
  /** A dead letter younger than this waits: the outage behind it may not be over. */
  settleMs: number;
  /** Older ones are the seed's backlog, left for people to work through. */
  windowMs: number;
  /** At most this many per look, oldest first. */
  perRound: number;
}

export const DEFAULT_SUPPORT_DESK: SupportDeskOptions = {
  everyMs: 60_000,
  settleMs: 10 * 60_000,
  windowMs: 24 * 3_600_000,
  perRound: 40,
};

/**
 * The demo's support person, as seeded (lib/demo/seed.ts); null
 * when that user is gone, disabled or moved to another role.
 */
async function supportPerson(db: DbOrTx): Promise<Actor | null> {
  const { rows } = await db.execute<{ id: string; name: string }>(sql`
    select id, name from keel."user" where username = 'support' and role = 'support'
    and coalesce(banned, false) = false`);
  const row = rows[0];
  return row ? { id: row.id, login: 'support', name: row.name, role: 'support' } : null;
}

/**
 * The demo's support person working the dead letters the way the runbook says, through
 * Keel's own services, so every replay and discard is audited under their name with a
 * note, exactly as if they had clicked: about ten minutes after a dead letter lands (the
 * cause has passed by then), a transport failure (rpc, backend) is replayed and a
 * deterministic one is discarded. So dead letters come and go instead of only growing.
 */
export function supportDeskDriver(overrides: Partial<SupportDeskOptions> = {}): DemoDriver {
  const options = { ...DEFAULT_SUPPORT_DESK, ...overrides };
  return {
    name: 'support',
    start({ db, log }) {
      const deps = { unitOfWork: postgresSettlementUnitOfWork(db) };
      const tally = { replayed: 0, discarded: 0, refused: 0 };
      let actor: Actor | null | undefined;
      const loop = startWorkerLoop({
        name: 'demo support desk',
        log,
        errorDelayMs: 5_000,
        async step() {
          actor ??= await supportPerson(db);
          if (!actor) return options.everyMs;
          const { rows } = await db.execute<{ receipt_id: string; reason: string }>(sql`
            select receipt_id, reason from settle.dead_letters
            where recorded_at_ms < (extract(epoch from clock_timestamp()) * 1000)::bigint - ${options.settleMs}
              and recorded_at_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint - ${options.windowMs}
            order by recorded_at_ms, receipt_id limit ${options.perRound}`);
          let refused = 0;
          for (const { receipt_id: receiptId, reason } of rows) {
            const input = { receiptId, operationId: `demo-support-${randomUUID()}` };
            const done = isRetryableFailureCode(reason)
              ? await replayDeadLetter(deps, actor, {
                  ...input,
                  note: `${reason} failures have cleared; replaying.`,
                })
              : await discardDeadLetter(deps, actor, {
                  ...input,
                  note: `${reason} is not something a retry fixes; the sender was told to resubmit.`,
                });
            if (!done.ok) refused += 1;
            else if (isRetryableFailureCode(reason)) tally.replayed += 1;
            else tally.discarded += 1;
          }
          tally.refused += refused;
          // After a refusal (say, the person was disabled or changed role) they are looked up again.
          if (refused > 0) actor = undefined;
          return options.everyMs;
        },
      });
      return {
        async stop() {
          await loop.stop();
          log('info', 'demo support desk stopped', { ...tally });
        },
      };
    },
  };
}
