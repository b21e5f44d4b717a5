import 'server-only';
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client';
import type { Role } from '../domain/roles';

/** Gives back a slot; calling it again does nothing. */
export type ReleaseSlot = () => Promise<void>;

export interface ExportSlotLimits {
  /** Exports one user may run at once. */
  perUser: number;
  /** Exports the users of one role may run at once: every role keeps a share no other role can take. */
  perRole: number;
  /** The longest an export runs; a slot whose process died is void after it. */
  maxDurationMs: number;
}

export interface ExportSlots {
  /** A slot for the reader, or null when they or their role hold their share already. */
  tryAcquire(reader: { id: string; role: Role }): Promise<ReleaseSlot | null>;
}

/**
 * The audit exports' slots in PostgreSQL, so the bounds hold across every HTTP process
 * and instance: a per-process count let two processes run twice the exports, and one
 * role's readers could hold every slot. Admission is serialised by a transaction-scoped
 * advisory lock, so two instances never both take the last slot of a share.
 */
export function postgresExportSlots(db: Database, limits: ExportSlotLimits): ExportSlots {
  return {
    async tryAcquire(reader) {
      const id = await db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext('keel.export_slot'))`);
        await tx.execute(sql`delete from keel.export_slot where expires_at <= now()`);
        const { rows } = await tx.execute<{ id: string }>(sql`
          insert into keel.export_slot (user_id, role, expires_at)
          select ${reader.id}, ${reader.role}, now() + ${limits.maxDurationMs} * interval '1 millisecond'
           where (select count(*) from keel.export_slot where user_id = ${reader.id}) < ${limits.perUser}
             and (select count(*) from keel.export_slot where role = ${reader.role}) < ${limits.perRole}
          returning id::text`);
        return rows[0]?.id ?? null;
      });
      if (id === null) return null;
      let released: Promise<void> | null = null;
      return () => {
        released ??= db.execute(sql`delete from keel.export_slot where id = ${id}::bigint`).then(() => undefined);
        return released;
      };
    },
  };
}
