import 'server-only';
import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { obStepExecution } from '../../db/schema/oxide-batch';
import {
  checksum,
  clearResolvedFromEnvelope,
  fromCanonicalJson,
  isClassifierRevision,
  isRetryStateLimit,
  reserveInEnvelope,
  reservedOrdinal,
  retryCounterFor,
  toCanonicalJson,
  unresolvedCount,
  type FaultStateEnvelope,
  type FaultStateError,
} from '../../domain/fault-state';
import { err, ok, type Result } from '../../domain/result';
import type { FaultStateBinding, FaultStateStore, RetryReservation } from '../ports/fault-state-store';

/** A store whose binding and resolved set can be carried onto another handle. */
export interface PostgresFaultStateStore extends FaultStateStore {
  /**
   * The same binding and resolved keys over `handle`, so `clearResolved` can run
   * inside the transaction that advances the checkpoint.
   */
  on(handle: DbOrTx): PostgresFaultStateStore;
}

/** Process-local: which step is bound, and which keys this process saw succeed. */
interface LocalState {
  binding: FaultStateBinding | null;
  resolved: Set<string>;
}

const UNBOUND: FaultStateError = { kind: 'Unbound' };
const UNAVAILABLE: FaultStateError = { kind: 'Unavailable' };

const stepColumns = {
  status: obStepExecution.status,
  version: obStepExecution.version,
  formatId: obStepExecution.faultStateSchema,
  formatVersion: obStepExecution.faultStateFormat,
  schemaVersion: obStepExecution.faultStateSchemaVersion,
  payload: obStepExecution.faultStatePayload,
  checksum: obStepExecution.faultStateChecksum,
};

type StepRow = { status: string; version: number; envelope: Result<FaultStateEnvelope, FaultStateError> };

async function readStep(handle: DbOrTx, binding: FaultStateBinding, lock: boolean): Promise<StepRow | null> {
  const query = handle
    .select(stepColumns)
    .from(obStepExecution)
    .where(
      and(eq(obStepExecution.id, binding.stepExecutionId), eq(obStepExecution.jobExecutionId, binding.jobExecutionId)),
    )
    .$dynamic();
  const [row] = await (lock ? query.for('update') : query);
  if (!row) return null;
  // jsonb keeps neither key order nor spacing: the checksum is checked over the rebuilt canonical bytes.
  const envelope = fromCanonicalJson(row);
  return {
    status: row.status,
    version: row.version,
    envelope: envelope.ok ? envelope : err({ kind: 'Corrupt', error: envelope.error }),
  };
}

/** Infrastructure failures become Unavailable: a port never throws. */
async function guarded<T>(work: () => Promise<Result<T, FaultStateError>>): Promise<Result<T, FaultStateError>> {
  try {
    return await work();
  } catch {
    return err(UNAVAILABLE);
  }
}

/** The envelope JSON and checksum to store, or the format error that forbids writing it. */
function encoded(envelope: FaultStateEnvelope): Result<{ json: string; checksum: Buffer }, FaultStateError> {
  const bytes = toCanonicalJson(envelope);
  const sum = checksum(envelope);
  if (!bytes.ok) return err({ kind: 'Corrupt', error: bytes.error });
  if (!sum.ok) return err({ kind: 'Corrupt', error: sum.error });
  return ok({ json: bytes.value.toString('utf8'), checksum: sum.value });
}

function storeOver(handle: DbOrTx, local: LocalState): PostgresFaultStateStore {
  const whereBound = (binding: FaultStateBinding) =>
    and(eq(obStepExecution.id, binding.stepExecutionId), eq(obStepExecution.jobExecutionId, binding.jobExecutionId));

  const readEnvelope = (lock: boolean, on: DbOrTx = handle) =>
    guarded(
      async (): Promise<
        Result<{ row: StepRow; binding: FaultStateBinding; envelope: FaultStateEnvelope }, FaultStateError>
      > => {
        const binding = local.binding;
        if (!binding) return err(UNBOUND);
        const row = await readStep(on, binding, lock);
        // The bound row is gone: nothing can be reserved against it any more.
        if (!row) return err({ kind: 'StaleReservation' });
        return row.envelope.ok ? ok({ row, binding, envelope: row.envelope.value }) : row.envelope;
      },
    );

  return {
    on: (other) => storeOver(other, local),

    bind: (step) =>
      guarded(async () => {
        const validIds = Number.isSafeInteger(step.stepExecutionId) && Number.isSafeInteger(step.jobExecutionId);
        if (!validIds || !isRetryStateLimit(step.retryStateLimit) || !isClassifierRevision(step.classifierRevision)) {
          return err(UNBOUND);
        }
        const row = await readStep(handle, step, false);
        if (!row) return err(UNBOUND);
        if (!row.envelope.ok) return row.envelope;
        if (local.binding?.stepExecutionId !== step.stepExecutionId) local.resolved.clear();
        local.binding = { ...step };
        return ok(undefined);
      }),

    reservedOrdinal: async (key) => {
      const read = await readEnvelope(false);
      return read.ok ? ok(reservedOrdinal(read.value.envelope, key)) : read;
    },

    reserve: (reservation: RetryReservation) =>
      guarded(() =>
        handle.transaction(async (tx) => {
          const read = await readEnvelope(true, tx);
          if (!read.ok) return read;
          const { row, binding, envelope } = read.value;
          const next = reserveInEnvelope(
            envelope,
            { ...reservation, revision: binding.classifierRevision },
            binding.retryStateLimit,
            reservation.checkpointDigest,
          );
          // The policy bounds were checked at bind, so a policy error here means the binding is unusable.
          if (!next.ok) return err(isStoreError(next.error) ? next.error : UNBOUND);
          const write = encoded(next.value);
          if (!write.ok) return write;
          const counter = retryCounterFor(reservation.phase);
          const bump = (phase: 'read' | 'process' | 'write') => sql.raw(counter === phase ? '1' : '0');
          const updated = await tx
            .update(obStepExecution)
            .set({
              faultStatePayload: sql`${write.value.json}::jsonb`,
              faultStateChecksum: write.value.checksum,
              readRetryCount: sql`${obStepExecution.readRetryCount} + ${bump('read')}`,
              processRetryCount: sql`${obStepExecution.processRetryCount} + ${bump('process')}`,
              writeRetryCount: sql`${obStepExecution.writeRetryCount} + ${bump('write')}`,
              rollbackCount: sql`${obStepExecution.rollbackCount} + 1`,
              version: sql`${obStepExecution.version} + 1`,
            })
            .where(
              and(whereBound(binding), eq(obStepExecution.version, row.version), eq(obStepExecution.status, 'STARTED')),
            )
            .returning({ id: obStepExecution.id, version: obStepExecution.version });
          return updated.length === 1 ? ok(undefined) : err({ kind: 'StaleReservation' } as const);
        }),
      ),

    resolve: async (key) => {
      if (!local.binding) return err(UNBOUND);
      local.resolved.add(key);
      return ok(undefined);
    },

    clearResolved: () =>
      guarded(() =>
        handle.transaction(async (tx) => {
          const read = await readEnvelope(true, tx);
          if (!read.ok) return read;
          const { binding, envelope } = read.value;
          const cleared = clearResolvedFromEnvelope(envelope, local.resolved);
          if (!cleared.ok) return cleared;
          if (envelope.entries.length > 0) {
            const write = encoded(cleared.value);
            if (!write.ok) return write;
            // The version is the advancing commit's to bump; this only rewrites the envelope it locked.
            await tx
              .update(obStepExecution)
              .set({ faultStatePayload: sql`${write.value.json}::jsonb`, faultStateChecksum: write.value.checksum })
              .where(whereBound(binding));
          }
          local.resolved.clear();
          return ok(undefined);
        }),
      ),

    unresolved: async () => {
      const read = await readEnvelope(false);
      return read.ok ? ok(unresolvedCount(read.value.envelope, local.resolved)) : read;
    },
  };
}

const STORE_ERROR_KINDS = new Set(['CapacityExhausted', 'StaleReservation', 'Corrupt', 'Unbound', 'Unavailable']);
const isStoreError = (error: { kind: string }): error is FaultStateError => STORE_ERROR_KINDS.has(error.kind);

export function postgresFaultStateStore(db: DbOrTx): PostgresFaultStateStore {
  return storeOver(db, { binding: null, resolved: new Set() });
}
