import type pg from 'pg';
import type { AuditFilters } from '../domain/audit-filters';
import { auditChanges, formatAuditChanges } from '../domain/audit-change';
import { csvRow } from '../domain/csv';
import { UTC_ZONE, utcIsoInZone } from '../domain/time-zone';
import { streamAuditEvents, type AuditReader } from '../queries/audit';
import type { AuditEventView } from '../queries/audit-types';
import { ROLES } from '../domain/roles';
import { logger } from '../observability/logger';

/**
 * Bounds of the CSV export. Each admitted export holds one connection of its own pool
 * (never the request pool) for as long as its client reads; a client that stops
 * reading for `idleMs` loses the connection and the response is ended.
 */
export const EXPORT_LIMITS = {
  perUser: 2,
  /** Every role keeps this many for its own readers, across every instance (lib/adapters/export-slots.ts). */
  perRole: 2,
  /** So at most this many at once in all, and on any one process: the export pool's size. */
  total: 2 * ROLES.length,
  idleMs: 30_000,
  /** However steadily its client reads, an export ends after this (its slot too). */
  maxDurationMs: 10 * 60_000,
  /** One batch of 1,000 rows; a slower one is a bad plan, not a big log. */
  statementTimeoutMs: 30_000,
  /** The server ends a session left idle in its snapshot this long (a backstop to idleMs). */
  idleInTransactionMs: 45_000,
  retryAfterSeconds: 30,
} as const;

/** The export ran for its longest time; its client gets a cut file and an error. */
export class ExportTooLongError extends Error {
  override readonly name = 'ExportTooLongError';
  constructor(maxDurationMs: number) {
    super(`the export ran for ${maxDurationMs} ms, its longest; export ended`);
  }
}

/** The client read nothing for the idle timeout; the export let go of its connection. */
export class ExportIdleError extends Error {
  override readonly name = 'ExportIdleError';
  constructor(idleMs: number) {
    super(`the client read nothing for ${idleMs} ms; export ended`);
  }
}

// change, before and after come last, so a reader of the older columns finds them where they were.
const HEADER = [
  'id',
  'at_utc',
  'actor',
  'role',
  'action',
  'target_kind',
  'target_id',
  'reason',
  'outcome',
  'code',
  'digest',
  'operation_id',
  'request_id',
  'change',
  'before',
  'after',
];

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * The time column in the reader's zone (docs/console.md#time-zone): its name says which (`at_utc`, as before, or
 * `at_Europe/Berlin`), and each time is ISO 8601 with its offset, so a machine reads the instant back exactly.
 */
const headerIn = (zone: string) => HEADER.map((name) => (name === 'at_utc' && zone !== UTC_ZONE ? `at_${zone}` : name));

const line = (zone: string) => (e: AuditEventView) =>
  csvRow([
    e.id,
    utcIsoInZone(e.at, zone),
    e.actorLogin,
    e.actorRole,
    e.action,
    e.targetKind,
    e.targetId,
    e.reason,
    e.outcome,
    e.code,
    e.digest,
    e.operationId,
    e.requestId,
    formatAuditChanges(auditChanges(e.before, e.after)) || null,
    json(e.before),
    json(e.after),
  ]);

export type ExportOutcome = 'done' | 'cancelled' | 'idle' | 'overtime' | 'failed';

/**
 * The filtered audit log as a CSV byte stream, read batch by batch from one snapshot:
 * the rows `options.reader` may see (lib/queries/audit.ts). `onEnd` runs exactly once,
 * when the stream finishes, fails, is cancelled by the client or times out idle; by
 * then the connection is back in `pool`.
 */
export function auditCsvStream(
  pool: pg.Pool,
  filters: AuditFilters,
  options: {
    reader: AuditReader;
    /** The IANA zone the times are written in; UTC when left out. */
    zone?: string;
    idleMs?: number;
    maxDurationMs?: number;
    batchSize?: number;
    onEnd?: (outcome: ExportOutcome, error?: unknown) => void;
  },
): ReadableStream<Uint8Array> {
  const idleMs = options.idleMs ?? EXPORT_LIMITS.idleMs;
  const zone = options.zone ?? UTC_ZONE;
  const maxDurationMs = options.maxDurationMs ?? EXPORT_LIMITS.maxDurationMs;
  let overtimeTimer: NodeJS.Timeout | null = null;
  const batches = streamAuditEvents(pool, options.reader, filters, options.batchSize);
  const encoder = new TextEncoder();
  let idleTimer: NodeJS.Timeout | null = null;
  let ended = false;
  const end = async (outcome: ExportOutcome, error?: unknown) => {
    if (ended) return;
    ended = true;
    if (idleTimer) clearTimeout(idleTimer);
    if (overtimeTimer) clearTimeout(overtimeTimer);
    if (outcome === 'overtime') logger.warn({ maxDurationMs }, 'audit export ended: it ran for its longest time');
    if (outcome === 'failed') logger.error({ error }, 'audit export failed');
    else if (outcome === 'idle') logger.warn({ idleMs }, 'audit export ended: the client stopped reading');
    // Runs the generator's finally: rollback and release. Harmless once it has finished.
    await batches.return(undefined).catch(() => undefined);
    options.onEnd?.(outcome, error);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(csvRow(headerIn(zone))));
      overtimeTimer = setTimeout(() => {
        controller.error(new ExportTooLongError(maxDurationMs));
        void end('overtime');
      }, maxDurationMs);
      overtimeTimer.unref();
    },
    async pull(controller) {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = null;
      try {
        const next = await batches.next();
        if (next.done) {
          controller.close();
          await end('done');
          return;
        }
        controller.enqueue(encoder.encode(next.value.map(line(zone)).join('')));
      } catch (error) {
        controller.error(error);
        await end('failed', error);
        return;
      }
      // Until the next pull, the client is not reading: past idleMs, give the connection back.
      if (!ended) {
        idleTimer = setTimeout(() => {
          controller.error(new ExportIdleError(idleMs));
          void end('idle');
        }, idleMs);
        idleTimer.unref();
      }
    },
    async cancel() {
      await end('cancelled');
    },
  });
}
