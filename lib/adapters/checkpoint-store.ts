import 'server-only';
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { runtimeServerTimeMs } from '../db/runtime-time';
import { durableCheckpoint } from '../db/schema/keel';
import {
  invalidCheckpoint,
  parseCheckpointJson,
  sealCheckpoint,
  toCheckpointJson,
  verifyCheckpoint,
  type DurableCheckpoint,
} from '../domain/checkpoint';
import { orchestrationEvidenceDigestHex } from '../domain/recovery';
import { err, ok } from '../domain/result';
import type { CheckpointStore, TakeoverCandidate, TakeoverCandidatePage } from '../ports/checkpoint-store';

const MAX_PAGE = 500;
const serverTimeMs = sql<number>`${runtimeServerTimeMs}`;

interface StoredColumns {
  checkpoint: unknown;
  authenticationTag: string;
  leaseOwner: string;
  fencingToken: number;
  leaseExpiresAtMs: number;
}

/**
 * Reads a row back into a checkpoint. The lease is stored twice (in the tagged JSON,
 * and in columns the fencing guard and listings use); if the two disagree, someone
 * edited the row and it is refused rather than half-trusted.
 */
function fromRow(row: StoredColumns) {
  const parsed = parseCheckpointJson(row.checkpoint);
  if (!parsed.ok) return parsed;
  const { lease, authenticationTag } = parsed.value;
  const agrees =
    authenticationTag === row.authenticationTag &&
    lease.ownerId === row.leaseOwner &&
    lease.fencingToken === Number(row.fencingToken) &&
    lease.expiresAt === Number(row.leaseExpiresAtMs);
  return agrees ? parsed : err(invalidCheckpoint('stored lease columns disagree with the checkpoint'));
}

const toRow = (checkpoint: DurableCheckpoint) => ({
  executionId: checkpoint.executionId,
  checkpoint: toCheckpointJson(checkpoint),
  authenticationTag: checkpoint.authenticationTag,
  leaseOwner: checkpoint.lease.ownerId,
  fencingToken: checkpoint.lease.fencingToken,
  leaseExpiresAtMs: checkpoint.lease.expiresAt,
});

const storedColumns = {
  checkpoint: durableCheckpoint.checkpoint,
  authenticationTag: durableCheckpoint.authenticationTag,
  leaseOwner: durableCheckpoint.leaseOwner,
  fencingToken: durableCheckpoint.fencingToken,
  leaseExpiresAtMs: durableCheckpoint.leaseExpiresAtMs,
};

interface CandidateRow extends Record<string, unknown> {
  server_time_ms: number;
  execution_id: string | null;
  checkpoint: unknown;
  authentication_tag: string;
  lease_owner: string;
  fencing_token: number;
  lease_expires_at_ms: number;
}

/** The Postgres checkpoint store over `keel.durable_checkpoint`, sealing with the server's key. */
export function postgresCheckpointStore(db: DbOrTx, key: Buffer): CheckpointStore {
  const verify = (checkpoint: DurableCheckpoint) => verifyCheckpoint(checkpoint, key);

  return {
    verify,

    async load(executionId, options = {}) {
      const query = db
        .select({ ...storedColumns, serverTimeMs })
        .from(durableCheckpoint)
        .where(eq(durableCheckpoint.executionId, executionId))
        .$dynamic();
      const [row] = await (options.forUpdate ? query.for('update') : query);
      if (!row) return ok(null);
      const checkpoint = fromRow(row);
      return checkpoint.ok ? ok({ checkpoint: checkpoint.value, serverTimeMs: Number(row.serverTimeMs) }) : checkpoint;
    },

    async save(checkpoint) {
      const sealed = sealCheckpoint(checkpoint, key);
      if (!sealed.ok) return sealed;
      const row = toRow(sealed.value);
      // One statement decides the race: a concurrent writer of the same row waits on
      // the row lock, then the WHERE is judged against the row that writer committed.
      const written = await db
        .insert(durableCheckpoint)
        .values(row)
        .onConflictDoUpdate({
          target: durableCheckpoint.executionId,
          set: {
            checkpoint: sql`excluded.checkpoint`,
            authenticationTag: sql`excluded.authentication_tag`,
            leaseOwner: sql`excluded.lease_owner`,
            fencingToken: sql`excluded.fencing_token`,
            leaseExpiresAtMs: sql`excluded.lease_expires_at_ms`,
            updatedAt: sql`clock_timestamp()`,
          },
          setWhere: sql`${durableCheckpoint.fencingToken} < excluded.fencing_token
            or (${durableCheckpoint.fencingToken} = excluded.fencing_token
                and ${durableCheckpoint.leaseOwner} = excluded.lease_owner)`,
        })
        .returning({ executionId: durableCheckpoint.executionId, fencingToken: durableCheckpoint.fencingToken });
      return written.length === 1 ? ok(sealed.value) : err({ kind: 'StaleLease' });
    },

    async takeoverCandidates({ after = null, limit }): Promise<TakeoverCandidatePage> {
      const size = Math.min(Math.max(Math.trunc(limit) || 1, 1), MAX_PAGE);
      const cursor = after
        ? sql`and (d.lease_expires_at_ms, d.execution_id) > (${after.expiresAtMs}, ${after.executionId})`
        : sql``;
      const { rows } = await db.execute<CandidateRow>(sql`
        with c as (select ${serverTimeMs} as server_time_ms)
        select c.server_time_ms, d.execution_id, d.checkpoint, d.authentication_tag, d.lease_owner,
               d.fencing_token, d.lease_expires_at_ms
        from c left join keel.durable_checkpoint d
          on d.lease_expires_at_ms <= c.server_time_ms ${cursor}
        order by d.lease_expires_at_ms, d.execution_id
        limit ${size + 1}`);
      const now = Number(rows[0]?.server_time_ms ?? Date.now());
      const found = rows.filter((row) => row.execution_id !== null);
      const page = found.slice(0, size);
      const candidates: TakeoverCandidate[] = [];
      for (const row of page) {
        const checkpoint = fromRow({
          checkpoint: row.checkpoint,
          authenticationTag: row.authentication_tag,
          leaseOwner: row.lease_owner,
          fencingToken: row.fencing_token,
          leaseExpiresAtMs: row.lease_expires_at_ms,
        });
        // An unauthenticated expiry could be forged, so it never makes a candidate.
        if (!checkpoint.ok || !verify(checkpoint.value)) continue;
        const { executionId, authenticationTag, lease } = checkpoint.value;
        const evidence = {
          executionId,
          authenticationTag,
          fencingToken: lease.fencingToken,
          expiresAtMs: lease.expiresAt,
          leaseOwner: lease.ownerId,
        };
        const digest = orchestrationEvidenceDigestHex(evidence);
        if (!digest.ok) continue;
        candidates.push({ ...evidence, evidenceDigestHex: digest.value });
      }
      const last = page[page.length - 1];
      return {
        candidates,
        serverTimeMs: now,
        unauthenticated: page.length - candidates.length,
        nextCursor:
          found.length > size && last
            ? { expiresAtMs: Number(last.lease_expires_at_ms), executionId: String(last.execution_id) }
            : null,
      };
    },
  };
}
